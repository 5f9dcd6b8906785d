"""Conjugate gradients on several right-hand sides at once (one independent CG per column).

One implementation for every sparse symmetric positive (semi)definite solve of the graph methods:
the implicit heat step of the TV/MTV starts, Laplace learning on the unlabeled block, Poisson
learning. Columns share the matrix products (one sparse product per iteration for all classes);
each column keeps its own step sizes; the block stops when every column has reached its relative
residual (a column that is there early keeps refining, which costs nothing extra).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class BlockCGResult:
    X: np.ndarray           # (n, k) solution
    n_iter: int             # iterations run (the slowest column's)
    residual: np.ndarray    # (k,) relative residual |b - A x| / |b| of each column at the end
    converged: bool         # every column reached tol


def _colnorm2(A: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->j", A, A)


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
    B = B[:, None] if squeeze else B
    X = np.zeros_like(B) if X0 is None else np.array(X0, dtype=np.float64).reshape(B.shape)
    R = B - matvec(X) if X0 is not None else B.copy()
    Z = R * precond[:, None] if precond is not None else R
    P = Z.copy()
    rz = np.einsum("ij,ij->j", R, Z)
    stop = (tol ** 2) * np.maximum(_colnorm2(B), 1e-300)
    rr = _colnorm2(R)
    it = 0
    # every update in place, through one work block: at 10^6 nodes and more a fresh (n, k)
    # temporary a step costs page faults (see graph_learning.product_into). ``matvec`` may
    # return the same buffer every call: AP is used up before the next product
    work = np.empty_like(B)
    if precond is not None:
        Z = np.empty_like(B)
    while it < max_iter and not np.all(rr <= stop):
        AP = matvec(P)
        pAp = np.einsum("ij,ij->j", P, AP)
        alpha = np.where(pAp > 0, rz / np.where(pAp > 0, pAp, 1.0), 0.0)
        X += np.multiply(P, alpha, out=work)
        AP *= alpha
        R -= AP
        if precond is not None:
            np.multiply(R, precond[:, None], out=Z)
        else:
            Z = R
        rz_new = np.einsum("ij,ij->j", R, Z)
        beta = np.where(rz > 0, rz_new / np.where(rz > 0, rz, 1.0), 0.0)
        P *= beta
        P += Z
        rz = rz_new
        rr = _colnorm2(R) if precond is not None else rz  # without M, r'z is r'r
        it += 1
    res = np.sqrt(rr / np.maximum(_colnorm2(B), 1e-300))
    X = X[:, 0] if squeeze else X
    return BlockCGResult(X=X, n_iter=it, residual=res, converged=bool(np.all(rr <= stop)))
