"""Edge weights on kNN lists (binary, heat, self-tuning, Gaussian scaled by the k-th distance) and symmetrization of directed graphs.

Weight functions take the (n, k) ``dist``/``idx`` arrays of :func:`gssl.graphs.knn.knn_distances`
and return the directed CSR graph (row i holds i's neighbours); :func:`symmetrize` makes it
undirected.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError, GraphError
from .knn import neighbors_to_csr

SYMMETRIZATIONS = ("max", "mean", "mutual")
SIGMA_RULES = ("mean_knn_distance",)


def binary(dist: np.ndarray, idx: np.ndarray) -> sp.csr_matrix:
    """w_ij = 1 for each neighbour j of i."""
    return neighbors_to_csr(np.ones(idx.shape), idx)


def resolve_sigma(dist: np.ndarray, sigma) -> float:
    """The heat-kernel width: a positive number, or ``"mean_knn_distance"``.

    ``mean_knn_distance`` is the mean over all n*k directed kNN distances, taken before
    symmetrization (as Melacci's LapSVMp ``GraphWeightParam = 0``).
    """
    if isinstance(sigma, str):
        if sigma not in SIGMA_RULES:
            raise ConfigError(f"sigma must be a positive number or one of {list(SIGMA_RULES)}, "
                              f"got {sigma!r}")
        value = float(np.mean(dist))
        if not value > 0:
            raise GraphError("mean kNN distance is 0 (all neighbours are duplicates); "
                             "give a fixed sigma or deduplicate the points")
        return value
    if isinstance(sigma, bool) or not isinstance(sigma, numbers.Real) or not sigma > 0:
        raise ConfigError(f"sigma must be a positive number or one of {list(SIGMA_RULES)}, "
                          f"got {sigma!r}")
    return float(sigma)


def heat(dist: np.ndarray, idx: np.ndarray, sigma="mean_knn_distance") -> sp.csr_matrix:
    """w_ij = exp(-d_ij^2 / (2 sigma^2))."""
    s = resolve_sigma(dist, sigma)
    return neighbors_to_csr(np.exp(-(dist**2) / (2.0 * s * s)), idx)


def local_scales(dist: np.ndarray, k_st: int = 7) -> np.ndarray:
    """sigma_i = distance from i to its k_st-th neighbour (needs dist with >= k_st columns).

    A zero scale (point with k_st duplicates) is replaced by the smallest positive scale so that
    weights stay finite: its duplicates get weight 1, other neighbours a small weight.
    """
    if isinstance(k_st, bool) or not isinstance(k_st, numbers.Integral) or k_st < 1:
        raise ConfigError(f"k_st must be a positive integer, got {k_st!r}")
    if dist.shape[1] < k_st:
        raise GraphError(f"self-tuning needs the distance to the k_st={k_st}-th neighbour but only "
                         f"{dist.shape[1]} neighbours were computed; compute max(k, k_st) neighbours")
    sig = dist[:, k_st - 1].astype(np.float64, copy=True)
    positive = sig > 0
    if not positive.any():
        raise GraphError("every local scale is 0 (points are duplicates); deduplicate the points")
    sig[~positive] = sig[positive].min()
    return sig


def self_tuning(dist: np.ndarray, idx: np.ndarray, k_st: int = 7, k: int | None = None) -> sp.csr_matrix:
    """Zelnik-Manor & Perona local scaling: w_ij = exp(-d_ij^2 / (sigma_i sigma_j)).

    ``dist``/``idx`` may hold more columns than the graph's k (to reach the k_st-th neighbour);
    edges use the first ``k`` columns (all when k is None).
    """
    sig = local_scales(dist, k_st)
    k = dist.shape[1] if k is None else int(k)
    d, j = dist[:, :k], idx[:, :k]
    return neighbors_to_csr(np.exp(-(d**2) / (sig[:, None] * sig[j])), j)


def gaussian_kth(dist: np.ndarray, idx: np.ndarray) -> sp.csr_matrix:
    """w_ij = exp(-4 d_ij^2 / d_k(i)^2), d_k(i) the distance from i to its k-th neighbour (the
    last column): the weights of Calder et al. 2020 (Poisson learning). A zero d_k (k duplicates)
    is replaced as in :func:`local_scales`. GraphLearning counts a point among its own k
    neighbours; here the k neighbours are other points."""
    scale = local_scales(dist, dist.shape[1])
    return neighbors_to_csr(np.exp(-4.0 * dist ** 2 / scale[:, None] ** 2), idx)


def symmetrize(W: sp.spmatrix, how: str = "max") -> sp.csr_matrix:
    """Undirected graph from a directed non-negative one.

    max:    w_ij = max(w_ij, w_ji)      (edge if either is a neighbour of the other)
    mean:   w_ij = (w_ij + w_ji) / 2    (a one-way edge keeps half its weight)
    mutual: w_ij = min(w_ij, w_ji)      (edge only if both are neighbours of each other)
    """
    W = sp.csr_matrix(W)
    Wt = W.T.tocsr()
    if how == "max":
        S = W.maximum(Wt)
    elif how == "mean":
        S = (W + Wt) * 0.5
    elif how == "mutual":
        S = W.minimum(Wt)
    else:
        raise ConfigError(f"symmetrize must be one of {list(SYMMETRIZATIONS)}, got {how!r}")
    S = sp.csr_matrix(S)
    S.eliminate_zeros()
    S.sort_indices()
    return S
