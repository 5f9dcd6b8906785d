"""Conjugate gradients on several right-hand sides at once (one independent CG per column).

One implementation for every sparse symmetric positive (semi)definite solve of the graph methods:
the implicit heat step of the TV/MTV starts, Laplace learning on the unlabeled block, Poisson
learning. Columns share the matrix products (one sparse product per iteration for all classes);
each column keeps its own step sizes; the block stops when every column has reached its relative
residual (a column that is there early keeps refining, which costs nothing extra).

The updates of an iteration are compiled (numba, cached on disk): x += alpha p, r -= alpha Ap and
the new r'z and r'r in one pass over the block, p = z + beta p in a second, p'Ap in a third,
where NumPy made seven passes and a call per operation (on digits' 1,797 x 10 block the calls
cost as much as the sparse product). The same roundings in the same order (each update a product
then a sum; each dot product summed down the rows, as einsum does for blocks of two columns or
more), so the same iterates; a single column's dot products einsum sums in another order, so
those differ in the last bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba import njit


@dataclass
class BlockCGResult:
    X: np.ndarray           # (n, k) solution
    n_iter: int             # iterations run (the slowest column's)
    residual: np.ndarray    # (k,) relative residual |b - A x| / |b| of each column at the end
    converged: bool         # every column reached tol


def _colnorm2(A: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->j", A, A)


@njit(cache=True, nogil=True, boundscheck=False)
def _coldots(A, B):
    """sum_i A[i, c] B[i, c] for every column c, summed down the rows."""
    n, k = A.shape
    out = np.zeros(k)
    for i in range(n):
        for c in range(k):
            out[c] += A[i, c] * B[i, c]
    return out


@njit(cache=True, nogil=True, boundscheck=False)
def _step(X, R, P, AP, alpha, precond, Z):
    """X += alpha P; R -= alpha AP; with a preconditioner (``precond`` non-empty) Z = M^-1 R.
    Returns (r'z, r'r) per column (r'z is r'r without one)."""
    n, k = X.shape
    rz = np.zeros(k)
    rr = np.zeros(k)
    pre = precond.size > 0
    for i in range(n):
        for c in range(k):
            a = alpha[c]
            X[i, c] += P[i, c] * a
            r = R[i, c] - AP[i, c] * a
            R[i, c] = r
            rr[c] += r * r
            if pre:
                z = r * precond[i]
                Z[i, c] = z
                rz[c] += r * z
    return (rz if pre else rr), rr


@njit(cache=True, nogil=True, boundscheck=False)
def _direction(P, Z, beta):
    """P = Z + beta P, in place."""
    n, k = P.shape
    for i in range(n):
        for c in range(k):
            P[i, c] = P[i, c] * beta[c] + Z[i, c]


def block_cg(matvec: Callable[[np.ndarray], np.ndarray], B: np.ndarray, X0: np.ndarray | None = None,
             *, precond: np.ndarray | None = None, tol: float = 1e-6,
             max_iter: int = 1000) -> BlockCGResult:
    """Solve A X = B column by column by (Jacobi-preconditioned) conjugate gradients.

    ``matvec(P)`` returns A P for an (n, k) block; ``precond`` is the diagonal of M^-1 (e.g.
    1 / diag(A)), or None. A column stops when |b - A x| <= tol |b| (a zero column is solved by
    x = 0 at once). A singular A is fine when B lies in its range (graph Laplacians with
    mean-zero sources): CG then stays in the range and converges to the solution of least norm
    (in the preconditioned inner product) plus the null-space part of X0.
    """
    B = np.asarray(B, dtype=np.float64)
    squeeze = B.ndim == 1
    B = np.ascontiguousarray(B[:, None] if squeeze else B)  # the kernels' layout
    X = np.zeros_like(B) if X0 is None else np.array(X0, dtype=np.float64, order="C").reshape(B.shape)
    R = np.ascontiguousarray(B - matvec(X)) if X0 is not None else B.copy()
    Z = R * precond[:, None] if precond is not None else R
    P = Z.copy()
    rz = _coldots(R, Z)
    b2 = np.maximum(_colnorm2(B), 1e-300)  # |b|^2 per column: the stop and the residuals' scale
    stop = (tol ** 2) * b2
    rr = _colnorm2(R)
    it = 0
    # every update in place (at 10^6 nodes and more a fresh (n, k) temporary a step costs page
    # faults, see graph_learning.product_into). ``matvec`` may return the same buffer every
    # call: AP is used up before the next product
    if precond is not None:
        Z = np.empty_like(B)
        m_inv = np.ascontiguousarray(precond, dtype=np.float64)
    else:
        Z, m_inv = R, np.empty(0)
    while it < max_iter and not np.all(rr <= stop):
        AP = np.ascontiguousarray(matvec(P), dtype=np.float64)
        pAp = _coldots(P, AP)
        alpha = np.where(pAp > 0, rz / np.where(pAp > 0, pAp, 1.0), 0.0)
        rz_new, rr = _step(X, R, P, AP, alpha, m_inv, Z)
        beta = np.where(rz > 0, rz_new / np.where(rz > 0, rz, 1.0), 0.0)
        _direction(P, Z, beta)
        rz = rz_new
        it += 1
    res = np.sqrt(rr / b2)
    X = X[:, 0] if squeeze else X
    return BlockCGResult(X=X, n_iter=it, residual=res, converged=bool(np.all(rr <= stop)))
