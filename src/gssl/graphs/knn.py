"""Exact k-nearest-neighbour search (scikit-learn) and conversion of neighbour lists to CSR."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from ..errors import ConfigError, DatasetError, GraphError


def check_k(k, n_samples: int, what: str = "k") -> int:
    """k must be an int in [1, n_samples - 1]; GraphError says the maximum allowed k."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ConfigError(f"{what} must be a positive integer, got {k!r}")
    if k >= n_samples:
        raise GraphError(f"{what}={k} neighbours requested but the data has only {n_samples} points; "
                         f"the maximum allowed {what} is {n_samples - 1}")
    return int(k)


def knn_distances(X, k: int, algorithm: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices (n, k) of each point's k nearest neighbours, itself excluded.

    Exact search (sklearn NearestNeighbors, Euclidean). Querying with ``X=None`` makes scikit-learn
    drop each point's own index, not merely the first column, so duplicated points still get k
    other points (their duplicates at distance 0 among them).
    """
    if X is None:
        raise GraphError("a kNN graph needs features X; graph-only datasets take kind 'precomputed'")
    if not sp.issparse(X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise DatasetError(f"features must be 2-D (n_samples, n_features), got shape {X.shape}")
    values = X.data if sp.issparse(X) else X
    if not np.all(np.isfinite(values)):
        raise DatasetError("features hold NaN/inf; clean them before building a graph")
    k = check_k(k, X.shape[0])
    nn = NearestNeighbors(n_neighbors=k, algorithm=algorithm).fit(X)
    dist, idx = nn.kneighbors()
    return np.asarray(dist, dtype=np.float64), np.asarray(idx, dtype=np.int64)


def neighbors_to_csr(values: np.ndarray, idx: np.ndarray, n: int | None = None) -> sp.csr_matrix:
    """Directed (n, n) CSR with ``values[i, j]`` at (i, idx[i, j]); explicit zeros are dropped."""
    n_rows, k = idx.shape
    n = n_rows if n is None else n
    indptr = np.arange(0, n_rows * k + 1, k, dtype=np.int64)
    M = sp.csr_matrix((np.asarray(values, dtype=np.float64).ravel(), idx.ravel(), indptr),
                      shape=(n_rows, n))
    M.sum_duplicates()  # also sorts indices
    M.eliminate_zeros()
    return M
