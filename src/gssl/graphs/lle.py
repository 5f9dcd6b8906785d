"""LLE barycentric reconstruction weights (Roweis & Saul), solved in batches of points."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError, GraphError
from .knn import knn_distances, neighbors_to_csr

# Points per batch are chosen so the stacked (batch, k, d) neighbour differences stay ~128 MB.
_BATCH_ELEMENTS = 1 << 24


def _rows(X, rows: np.ndarray) -> np.ndarray:
    """Dense float64 copy of the given rows (densifies only a batch of a sparse X)."""
    R = X[rows]
    return R.toarray() if sp.issparse(R) else np.asarray(R, dtype=np.float64)


def barycenter_weights(X, idx: np.ndarray, reg: float = 1e-3, points=None) -> np.ndarray:
    """(n, k) weights w_i minimizing |x_i - sum_j w_ij X[idx[i,j]]|^2 subject to sum_j w_ij = 1.

    x_i is row i of ``points`` (default: of X itself; other points, e.g. new samples coded out
    of sample against X, give one row of ``idx`` each). The local Gram G_i = Z_i Z_i^T (Z_i:
    neighbours minus x_i) is regularized by ``reg * trace(G_i)`` on its diagonal (``reg`` when
    the trace is 0), the same rule as scikit-learn's LocallyLinearEmbedding. Systems are solved
    stacked, (batch, k, k) at a time.
    """
    if isinstance(reg, bool) or not isinstance(reg, numbers.Real) or reg < 0:
        raise ConfigError(f"reg must be a non-negative number, got {reg!r}")
    n, k = idx.shape
    d = X.shape[1]
    batch = max(1, _BATCH_ELEMENTS // max(1, k * d))
    W = np.empty((n, k), dtype=np.float64)
    eye = np.eye(k)
    for start in range(0, n, batch):
        rows = np.arange(start, min(n, start + batch))
        x = _rows(X if points is None else points, rows)
        Z = _rows(X, idx[rows].ravel()).reshape(len(rows), k, d) - x[:, None, :]
        G = Z @ Z.transpose(0, 2, 1)
        trace = np.trace(G, axis1=1, axis2=2)
        R = np.where(trace > 0, reg * trace, reg)
        G += R[:, None, None] * eye
        try:
            w = np.linalg.solve(G, np.ones((len(rows), k, 1)))[..., 0]
        except np.linalg.LinAlgError as exc:
            raise GraphError(f"singular local Gram matrix in LLE ({exc}); use reg > 0") from exc
        W[rows] = w / w.sum(axis=1, keepdims=True)
    return W


def lle_weights(X, k: int, reg: float = 1e-3, idx: np.ndarray | None = None) -> sp.csr_matrix:
    """CSR V (n, n): row i holds i's barycentric weights over its k nearest neighbours (rows sum to 1).

    ``idx`` (n, k) reuses neighbour lists already computed; by default they come from
    :func:`knn_distances` (exact, self excluded).
    """
    if idx is None:
        _, idx = knn_distances(X, k)
    idx = np.asarray(idx, dtype=np.int64)[:, :k]
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
    V = neighbors_to_csr(barycenter_weights(X, idx, reg), idx, X.shape[0])
    return V
