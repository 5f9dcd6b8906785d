"""Linear solves shared by the closed-form solvers."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

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
    try:
        lu = sla.lu_factor(np.asarray(A, dtype=np.float64), check_finite=False)
    except (sla.LinAlgError, ValueError) as exc:
        raise SolverError(f"linear system cannot be factorized ({exc}); {hint}") from exc
    if not np.all(np.isfinite(lu[0])) or np.any(np.diag(lu[0]) == 0):
        raise SolverError(f"linear system is singular; {hint}")
    return sla.lu_solve(lu, B, check_finite=False)


def relative_residual(A, X, B) -> float:
    """|A X - B|_F / |B|_F (|B| = 0 gives the absolute residual)."""
    r = np.linalg.norm(A @ X - B)
    nb = np.linalg.norm(B)
    return float(r / nb) if nb > 0 else float(r)
