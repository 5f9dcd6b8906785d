"""Linear solves shared by the closed-form solvers, the kernel systems of the splitting methods,
and the symmetric dense product of the iterative ones."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.linalg.blas import dsymv

from ..errors import SolverError


def solve_spd(A, B, hint: str = "increase the regularization") -> np.ndarray:
    """Solve A X = B for symmetric positive (semi)definite A: Cholesky, else LU.

    Sparse A uses a sparse LU (SuperLU). A singular system raises SolverError with ``hint``.
    """
    if sp.issparse(A):
        try:
            X = spla.splu(sp.csc_matrix(A)).solve(np.asarray(B, dtype=np.float64))
        except RuntimeError as exc:  # SuperLU: "Factor is exactly singular"
            raise SolverError(f"linear system is singular ({exc}); {hint}") from exc
        return X
    try:
        return sla.solve(A, B, assume_a="pos", check_finite=False)
    except sla.LinAlgError:  # not numerically positive definite: fall back to LU
        return solve_dense(A, B, hint)


def solve_dense(A, B, hint: str = "increase the regularization") -> np.ndarray:
    """Solve A X = B for a general dense square A by LU with partial pivoting (O(n^3))."""
    return sla.lu_solve(lu_factor_checked(np.asarray(A, dtype=np.float64), hint), B,
                        check_finite=False)


def lu_factor_checked(A, hint: str, overwrite_a: bool = False):
    """LU factor of a dense square A (``scipy.linalg.lu_factor``), or SolverError with ``hint``
    when it cannot be factorized or is singular."""
    try:
        lu = sla.lu_factor(A, check_finite=False, overwrite_a=overwrite_a)
    except (sla.LinAlgError, ValueError) as exc:
        raise SolverError(f"linear system cannot be factorized ({exc}); {hint}") from exc
    if not np.all(np.isfinite(lu[0])) or np.any(np.diag(lu[0]) == 0):
        raise SolverError(f"linear system is singular; {hint}")
    return lu


class KernelSystem:
    """(M K + lam I) alpha = B factored once, for a kernel matrix K (symmetric positive
    semi-definite), M positive definite and lam > 0: ``solve(B)`` returns alpha and F = K alpha,
    the expansion coefficients and the function values of the splitting methods' f-steps
    (Bresson & Zhang: M = r, r + eta J, gamma L + r (+ eta J)). ``M``:

    * a vector or scalar (M diagonal): M K + lam I = M (K + lam M^{-1}), so alpha solves the
      symmetric positive definite S alpha = M^{-1} B, S = K + lam M^{-1}, by Cholesky (half the
      flops of an LU of M K + lam I), and F comes from the identity M K alpha = B - lam alpha,
      F = M^{-1} (B - lam alpha), instead of the dense product K alpha: one pass over an n x n
      matrix per solve, not two. Where rounding alone makes S indefinite (a tiny lam / M: its
      smallest eigenvalue above -10 n eps max|S|), LU of the same S (``factorization`` says
      which); a K further from positive semi-definite raises SolverError, as before.
    * a sparse matrix with off-diagonal entries (a sparse diagonal M is taken as its diagonal):
      LU of the dense M K + lam I and F = K alpha (measured: a sparse factor of M per penalty
      cost the Laplacian methods more than the product it saves over their few iterations).

    ``MK``: M K where the caller has it (it is overwritten); ``name`` names the method in the
    SolverError of a system that cannot be factorized.
    """

    def __init__(self, K, M, lam: float, name: str, MK=None):
        # plain attributes, no closures over self: a cycle would keep the n x n factor alive
        # until the cyclic garbage collector ran (a TV grid job held 10 GB of them)
        self.lam = float(lam)
        n = K.shape[0]
        hint = f"{name}'s kernel system lam I + M K: increase lam"
        if sp.issparse(M) and sp.triu(M, 1).nnz + sp.tril(M, -1).nnz == 0:
            M = M.diagonal()
        if sp.issparse(M):
            A = np.asarray(M @ K) if MK is None else MK
            A[np.diag_indices(n)] += self.lam
            self.factorization, self._factor = "lu", lu_factor_checked(A, hint, True)
            self._K, self._m = K, None
            return
        self._K, self._m = None, np.broadcast_to(np.asarray(M, dtype=np.float64), (n,))
        try:
            self._factor = sla.cho_factor(self._shifted(K), check_finite=False, overwrite_a=True)
            self.factorization = "cholesky"
        except sla.LinAlgError as exc:
            S = self._shifted(K)
            low = float(sla.eigh(S, eigvals_only=True, subset_by_index=[0, 0])[0])
            rounding = 10 * n * np.finfo(np.float64).eps * float(np.abs(S).max())
            if low < -rounding:                     # beyond rounding: K is not PSD
                raise SolverError(f"{name}: lam I + M K is not positive definite (smallest "
                                  f"eigenvalue of K + lam M^-1: {low:.3g}); the kernel is not "
                                  "positive semi-definite, or increase lam") from exc
            # rounding: LU of the same S
            self.factorization, self._factor = "lu", lu_factor_checked(S, hint, True)

    def _shifted(self, K) -> np.ndarray:
        """S = K + lam M^{-1} (M diagonal), a fresh array."""
        S = np.array(K, dtype=np.float64)
        S[np.diag_indices(S.shape[0])] += self.lam / self._m
        return S

    def _minv(self, B) -> np.ndarray:
        return B / (self._m if B.ndim == 1 else self._m[:, None])

    def solve(self, B) -> tuple[np.ndarray, np.ndarray]:
        """alpha = (M K + lam I)^{-1} B and F = K alpha, the shape of B."""
        B = np.asarray(B, dtype=np.float64)
        if self._m is None:
            alpha = sla.lu_solve(self._factor, B, check_finite=False)
            return alpha, self._K @ alpha
        solve = sla.cho_solve if self.factorization == "cholesky" else sla.lu_solve
        alpha = solve(self._factor, self._minv(B), check_finite=False)
        return alpha, self._minv(B - self.lam * alpha)


def relative_residual(A, X, B) -> float:
    """|A X - B|_F / |B|_F (|B| = 0 gives the absolute residual)."""
    r = np.linalg.norm(A @ X - B)
    nb = np.linalg.norm(B)
    return float(r / nb) if nb > 0 else float(r)


def symmetric_matvec(K, check_pairs: int = 256, random_state=0):
    """``v -> K v`` for a symmetric float64 matrix K by BLAS ``dsymv``, which reads one triangle.

    A dense matrix-vector product is bound by memory traffic, so reading half of K halves its
    time (measured 2.0-2.4x against ``K @ v`` for n = 550 ... 14,000, one thread). A C-ordered K
    is the Fortran-ordered K' = K, so dsymv takes it without a copy. Symmetry is checked on
    ``check_pairs`` random entries (a full check would cost a pass and a copy of K); an
    asymmetric K raises SolverError, since dsymv would silently use one triangle.
    """
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if K.ndim != 2 or K.shape[1] != n:
        raise SolverError(f"symmetric_matvec needs a square matrix, got shape {K.shape}")
    rng = np.random.default_rng(random_state)
    i, j = rng.integers(0, n, size=(2, min(check_pairs, n * n)))
    scale = max(1.0, float(np.abs(K[i, j]).max(initial=0.0)))
    if not np.allclose(K[i, j], K[j, i], rtol=1e-12, atol=1e-12 * scale):
        raise SolverError("the kernel matrix is not symmetric; the primal solvers need a "
                          "symmetric positive semi-definite Gram matrix K(X, X)")
    A = K.T if K.flags.c_contiguous else np.asfortranarray(K)   # Fortran order, no copy if C

    def matvec(v):
        return dsymv(1.0, A, np.ascontiguousarray(v, dtype=np.float64))
    return matvec
