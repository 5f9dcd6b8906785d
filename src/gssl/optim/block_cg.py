"""Conjugate gradients on several right-hand sides at once, for the sparse symmetric positive
(semi)definite solves of the graph methods.

``block_cg`` runs one independent CG per column (the implicit heat step of the TV/MTV starts):
columns share the matrix products (one sparse product per iteration for all classes); each
column keeps its own step sizes. ``coupled_cg`` is block CG proper, the columns sharing one Krylov
space (Laplace and Poisson learning, where it takes 1.5-3x fewer products). Both stop when every
column has reached its relative residual (a column that is there early keeps refining, which
costs nothing extra).

``block_cg``'s updates of an iteration are compiled (numba, cached on disk; in
``block_cg_kernels``, imported on the first solve: numba takes a quarter of a second to import, and
planning imports the solvers that use this module): x += alpha p,
r -= alpha Ap and the new r'z and r'r in one pass over the block, p = z + beta p in a second,
p'Ap in a third, where NumPy made seven passes and a call per operation (on digits' 1,797 x 10
block the calls cost as much as the sparse product). The same roundings in the same order (each
update a product then a sum; each dot product summed down the rows, as einsum does for blocks of
two columns or more), so the same iterates; a single column's dot products einsum sums in another
order, so those differ in the last bits.

A singular A (Poisson learning's I - D^-1/2 W D^-1/2, whose null space is d^1/2 on each connected
component) is solved in its range: given an orthonormal basis N of the null space, the right-hand
side is projected onto the range before the solve and the solution after it. The iterates may
drift into the null space by rounding (nothing pulls them back, and A does not see it, so the
residuals and steps are unaffected); on a CPU whose BLAS kernel rounds otherwise (OpenBLAS's
SkylakeX kernel against its Haswell one) the drift was 10^4 times a test's bound, a per-class
constant in Poisson's scores. Projecting the residual at every step as well gave the same
solution to rounding and made a Poisson fit 20 % slower (MNIST's test set, 3 draws); the two
projections cost two passes over the block.
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


def project_out(N, X: np.ndarray) -> np.ndarray:
    """X - N (N' X) in place: X's columns made orthogonal to the span of N's orthonormal columns
    (dense, or sparse such as one vector per connected component). N None: X unchanged."""
    if N is not None:
        X -= N @ (N.T @ X)
    return X


def block_cg(matvec: Callable[[np.ndarray], np.ndarray], B: np.ndarray, X0: np.ndarray | None = None,
             *, precond: np.ndarray | None = None, tol: float = 1e-6, max_iter: int = 1000,
             null_space=None) -> BlockCGResult:
    """Solve A X = B column by column by (Jacobi-preconditioned) conjugate gradients.

    ``matvec(P)`` returns A P for an (n, k) block; ``precond`` is the diagonal of M^-1 (e.g.
    1 / diag(A)), or None. A column stops when |b - A x| <= tol |b| (a zero column is solved by
    x = 0 at once). A singular A is fine when B lies in its range (graph Laplacians with
    mean-zero sources): CG then stays in the range and converges to the solution of least norm
    (in the preconditioned inner product) plus the null-space part of X0. ``null_space``: an
    (n, m) orthonormal basis N of A's null space (dense or sparse), for an unpreconditioned
    solve: B and X0 are projected onto the range, and the solution at the end (the least-norm
    solution, whatever the rounding).
    """
    from .block_cg_kernels import coldots, direction, step

    B = np.asarray(B, dtype=np.float64)
    squeeze = B.ndim == 1
    B = np.ascontiguousarray(B[:, None] if squeeze else B)  # the kernels' layout
    if null_space is not None:
        if precond is not None:  # the range of M^-1 A is not N's complement: not needed yet
            raise ValueError("block_cg: null_space is for unpreconditioned solves")
        B = project_out(null_space, B.copy())
    X = np.zeros_like(B) if X0 is None else np.array(X0, dtype=np.float64, order="C").reshape(B.shape)
    project_out(null_space, X)
    R = np.ascontiguousarray(B - matvec(X)) if X0 is not None else B.copy()
    Z = R * precond[:, None] if precond is not None else R
    P = Z.copy()
    rz = coldots(R, Z)
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
        pAp = coldots(P, AP)
        alpha = np.where(pAp > 0, rz / np.where(pAp > 0, pAp, 1.0), 0.0)
        rz_new, rr = step(X, R, P, AP, alpha, m_inv, Z)
        beta = np.where(rz > 0, rz_new / np.where(rz > 0, rz, 1.0), 0.0)
        direction(P, Z, beta)
        rz = rz_new
        it += 1
    res = np.sqrt(rr / b2)
    X = project_out(null_space, X)
    X = X[:, 0] if squeeze else X
    return BlockCGResult(X=X, n_iter=it, residual=res, converged=bool(np.all(rr <= stop)))


# -- block CG proper: the columns share one Krylov space ------------------------------------------
# a direction of the block whose share of the block's A-Gram matrix (Jacobi-scaled) is below this
# is dropped for the step: the columns of P are then (numerically) dependent, as when the sources
# sum to zero (Poisson's centred labels) or a column has converged
DEFLATION_TOL = 1e-10


def _pseudo_inverse(G: np.ndarray) -> np.ndarray:
    """G^+ of the symmetric positive semidefinite k x k Gram matrix P'AP, its directions of
    relative weight below DEFLATION_TOL dropped (after a Jacobi scaling, so that a column's
    size does not count as dependence)."""
    s = np.sqrt(np.maximum(np.diag(G), 1e-300))
    lam, V = np.linalg.eigh(G / s[:, None] / s[None, :])
    keep = lam > DEFLATION_TOL * max(lam.max(initial=0.0), 1e-300)
    Vs = V[:, keep] / s[:, None]
    return (Vs / lam[keep]) @ Vs.T


def coupled_cg(matvec: Callable[[np.ndarray], np.ndarray], B: np.ndarray, *, tol: float = 1e-6,
               max_iter: int = 1000, null_space=None) -> BlockCGResult:
    """Solve A X = B for a symmetric positive (semi)definite A by block conjugate gradients
    (O'Leary 1980): the k columns share one Krylov space, so each step minimises the A-norm of
    every column's error over k directions at once, where ``block_cg`` takes one per column.

    On graph systems this takes 1.5-3x fewer steps (the block deflates the k smallest eigenvalues,
    which the clusters of a graph make small), for about 6 n k^2 more flops a step: six products
    of an (n, k) block with a k x k matrix, in BLAS (measured: a compiled fusion of them into
    three passes was 1.5-2.5x slower, n = 10^4 to 10^6). Dependent directions (sources summing to
    zero, converged columns) are dropped from a step through a pseudo-inverse of the k x k Gram
    matrix P'AP (the breakdown-free variant of Ji & Li 2017). A column stops counting when
    |b - A x| <= tol |b| (the recursively updated residual, as ``block_cg``); the block stops when
    every column has. ``matvec`` may return the same buffer every call: its product is used up
    before the next. A singular A is fine when B lies in its range; give its null space as
    ``null_space`` (an (n, m) orthonormal basis, dense or sparse): B and the solution are then
    projected onto the range.
    """
    B = np.asarray(B, dtype=np.float64)
    squeeze = B.ndim == 1
    B = np.ascontiguousarray(B[:, None] if squeeze else B)
    if null_space is not None:
        B = project_out(null_space, B.copy())
    X = np.zeros_like(B)
    R = B.copy()
    P = B.copy()
    b2 = np.maximum(_colnorm2(B), 1e-300)
    stop = (tol ** 2) * b2
    rr = _colnorm2(R)
    it = 0
    tmp = np.empty_like(B)
    while it < max_iter and not np.all(rr <= stop):
        Q = matvec(P)
        Gp = _pseudo_inverse(P.T @ Q)
        alpha = Gp @ (P.T @ R)
        X += np.matmul(P, alpha, out=tmp)
        R -= np.matmul(Q, alpha, out=tmp)
        rr = _colnorm2(R)
        np.matmul(P, Gp @ (Q.T @ R), out=tmp)  # the new directions are A-orthogonal to P:
        np.subtract(R, tmp, out=P)              # Q'(R - P G^+ Q'R) = 0 on G's kept span
        it += 1
    res = np.sqrt(rr / b2)
    X = project_out(null_space, X)
    return BlockCGResult(X=X[:, 0] if squeeze else X, n_iter=it, residual=res,
                         converged=bool(np.all(rr <= stop)))
