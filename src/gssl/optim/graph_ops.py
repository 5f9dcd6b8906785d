"""Weighted graph gradient operator D and graph total variation.

D has one row per undirected edge e = (i, j), i < j, w_ij > 0 (the upper triangle of W) and
(D g)_e = w_ij (g_i - g_j), so ||D g||_1 = sum_{i<j} w_ij |g_i - g_j| (every edge counted once)
and D'D is the graph Laplacian of the squared weights w_ij^2.
``diffuse``: one implicit heat step (I + dt L)^-1 F by conjugate gradients, the label-propagation
start of the MTV clustering and of the multiclass TV / Cheeger classifiers.
``min_conductance_sweep``: the best threshold of an ordering (spectral sweep cut).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .block_cg import block_cg

__all__ = ["edge_list", "gradient_operator", "total_variation", "gradient_norm_bound",
           "diffuse", "min_conductance_sweep"]


def edge_list(W) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, w) of the edges i < j with w_ij != 0 of a symmetric weight matrix (row-major order)."""
    W = sp.csr_matrix(W)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be square, got shape {W.shape}")
    U = sp.triu(W, k=1, format="coo")
    keep = U.data != 0
    i, j, w = U.row[keep], U.col[keep], U.data[keep].astype(np.float64)
    order = np.lexsort((j, i))
    return i[order].astype(np.int64), j[order].astype(np.int64), w[order]


def gradient_operator(W) -> sp.csr_matrix:
    """Sparse D (n_edges, n): (D g)_e = w_ij (g_i - g_j) over the edges i < j of W."""
    n = W.shape[0]
    i, j, w = edge_list(W)
    m = i.size
    rows = np.repeat(np.arange(m), 2)
    cols = np.column_stack([i, j]).ravel()
    vals = np.column_stack([w, -w]).ravel()
    return sp.csr_matrix((vals, (rows, cols)), shape=(m, n))


def _is_weight_matrix(M) -> bool:
    if M.shape[0] != M.shape[1]:
        return False
    M = sp.csr_matrix(M)
    return M.nnz == 0 or (M.data.min() >= 0 and abs(M - M.T).max() <= 1e-12 * abs(M).max())


def total_variation(W_or_D, g) -> float | np.ndarray:
    """sum_{i<j} w_ij |g_i - g_j| of g (n,) -> float, or of each column of g (n, C) -> (C,).

    Accepts the symmetric weight matrix W (square, non-negative) or the gradient operator D.
    """
    M = W_or_D
    D = gradient_operator(M) if _is_weight_matrix(M) else sp.csr_matrix(M)
    g = np.asarray(g, dtype=np.float64)
    if g.shape[0] != D.shape[1]:
        raise ValueError(f"g has {g.shape[0]} rows, the graph has {D.shape[1]} nodes")
    tv = np.abs(D @ g).sum(axis=0)
    return float(tv) if g.ndim == 1 else np.asarray(tv)


def gradient_norm_bound(D) -> float:
    """Upper bound of the spectral norm ||D||_2 (no iteration): D'D is the Laplacian of the
    squared weights, whose largest eigenvalue is at most max over edges of d_i + d_j
    (Anderson-Morley), d_i = sum_j w_ij^2."""
    D = sp.csr_matrix(D)
    if D.shape[0] == 0:
        return 0.0
    sq = D.multiply(D)
    d = np.asarray(sq.sum(axis=0)).ravel()           # d_i = sum_e D_ei^2 = sum_j w_ij^2
    coo = sq.tocoo()
    per_edge = np.zeros(D.shape[0])
    np.add.at(per_edge, coo.row, d[coo.col])         # d_i + d_j for each edge row
    return float(np.sqrt(per_edge.max()))


def diffuse(W: sp.spmatrix, F: np.ndarray, dt: float = 1.0, tol: float = 1e-6,
            max_iter: int = 50) -> np.ndarray:
    """One implicit heat step (I + dt L) X = F (L = D - W unnormalized), all columns at once by
    conjugate gradients (as the initialisation of section 5: 50 iterations, tolerance 1e-6)."""
    W = sp.csr_matrix(W)
    deg = np.asarray(W.sum(axis=1)).ravel()
    F = np.asarray(F, dtype=np.float64)

    def A(X):
        return X + dt * (deg[:, None] * X - W @ X)

    return block_cg(A, F, X0=F, tol=tol, max_iter=max_iter).X


def min_conductance_sweep(W, order: np.ndarray, lo: int = 1, hi: int | None = None) -> int:
    """Sweep cut: the k in [lo, hi] for which the first k nodes of ``order`` against the rest
    have the lowest conductance cut / min(vol, vol^c) (vol = sum of degrees). All n - 1 cuts
    in O(nnz) from a difference array: an edge between positions p < q is cut for p < k <= q."""
    W = sp.csr_matrix(W)
    n = W.shape[0]
    hi = n - 1 if hi is None else hi
    if not 1 <= lo <= hi <= n - 1:
        raise ValueError(f"sweep range [{lo}, {hi}] outside [1, {n - 1}]")
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    i, j, w = edge_list(W)
    p, q = np.minimum(pos[i], pos[j]), np.maximum(pos[i], pos[j])
    inc = np.zeros(n + 1)
    np.add.at(inc, p + 1, w)
    np.add.at(inc, q + 1, -w)
    cut = np.cumsum(inc)[1:n]                        # cut[k - 1]: first k nodes vs the rest
    deg = np.asarray(W.sum(axis=1)).ravel()
    vol = np.cumsum(deg[order])[:n - 1]
    smaller = np.minimum(vol, deg.sum() - vol)
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(smaller > 0, cut / np.where(smaller > 0, smaller, 1.0), np.inf)
    return lo + int(np.argmin(cond[lo - 1:hi]))
