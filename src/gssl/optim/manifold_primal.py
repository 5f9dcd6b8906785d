"""Primal manifold-regularized kernel machines (Melacci & Belkin 2011, Eq. 7 and Eq. 14).

For one binary problem with targets y_i in {-1, +1} on the labeled nodes ``lab``:

    min_{alpha, b}  1/2 ( sum_{i in lab} loss_i + gamma_A alpha' K alpha + gamma_I f' M f ),
    f = K alpha + b 1,   M = L^p (symmetric PSD, applied as an operator),

with loss_i = max(0, 1 - y_i f_i)^2 (LapSVM, squared hinge) or (1 - y_i f_i)^2 = (f_i - y_i)^2
(LapRLSC). The bias enters the intrinsic term through f, so a normalized Laplacian (M 1 != 0) is
handled exactly. With E the error vectors (labeled i with y_i f_i < 1; E = lab for LapRLSC) and
u = J_E (f - y) + gamma_A alpha + gamma_I M f the gradient is

    grad_alpha = K u,    grad_b = 1' (J_E (f - y) + gamma_I M f),

so preconditioning by blockdiag(K, 1) gives the preconditioned gradient (u, grad_b) at no extra
cost. One PCG iteration needs one dense product K u (it also yields K d for the next direction;
BLAS dsymv, which reads one triangle of the symmetric K) and p sparse products with L; K M K is
never formed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError
from .linalg import solve_dense, symmetric_matvec
from .pcg import IterationState, StoppingCriterion, piecewise_quadratic_line_search, polak_ribiere


class LaplacianPower:
    """M = L^p as an operator: ``M @ v`` applies the sparse L p times (no fill-in from powers).

    ``L`` may also be a dense or sparse matrix that already is L^p (then p = 1).
    """

    def __init__(self, L, p: int = 1):
        self.L = L.tocsr() if sp.issparse(L) else np.asarray(L, dtype=np.float64)
        self.p = int(p)
        self.shape = self.L.shape

    def __matmul__(self, v):
        for _ in range(self.p):
            v = self.L @ v
        return np.asarray(v)

    def dense_times(self, K: np.ndarray) -> np.ndarray:
        """M K as a dense array (p sparse-dense products)."""
        return self @ K


@dataclass
class PrimalResult:
    alpha: np.ndarray
    b: float
    f: np.ndarray                 # K alpha + b on every node
    objective: float
    n_iter: int
    converged: bool
    stop_reason: str
    history: list = field(default_factory=list)
    seconds: float = 0.0
    criteria: dict = field(default_factory=dict)  # name -> (last value, tolerance) of the stop rule


def _targets(y_lab):
    y = np.asarray(y_lab, dtype=np.float64)
    if not np.all(np.abs(y) == 1):
        raise SolverError("binary targets must be -1 or +1")
    return y


def primal_objective(K, M, lab, y_lab, gamma_A, gamma_I, alpha, b, loss="squared_hinge"):
    """Value of Eq. 7 (loss="squared_hinge") or Eq. 14 (loss="squared") at (alpha, b)."""
    Ka = K @ alpha
    f = Ka + b
    r = 1.0 - y_lab * f[lab]
    if loss == "squared_hinge":
        r = np.maximum(r, 0.0)
    return 0.5 * float(r @ r + gamma_A * (alpha @ Ka) + gamma_I * (f @ (M @ f)))


def primal_gradient(K, M, lab, y_lab, gamma_A, gamma_I, alpha, b, loss="squared_hinge"):
    """Gradient of Eq. 7 / Eq. 14 with respect to (alpha, b), as an (n + 1,) vector."""
    f = K @ alpha + b
    e = np.zeros_like(f)
    r = 1.0 - y_lab * f[lab]
    act = r > 0 if loss == "squared_hinge" else np.ones(r.size, bool)
    e[lab[act]] = f[lab[act]] - y_lab[act]
    v = e + gamma_I * (M @ f)
    return np.concatenate([K @ (v + gamma_A * alpha), [v.sum()]])


# -- Newton's method / closed form -------------------------------------------------------------
def _newton_system(K, MK, M1, lab_E, gamma_A, gamma_I):
    """(n+1) x (n+1) matrix of the stationarity conditions for a fixed error-vector set E:
    [[J_E K + gamma_A I + gamma_I M K, J_E 1 + gamma_I M 1], [1'(J_E + gamma_I M) K, |E| + gamma_I 1'M1]]
    (the alpha rows are the gradient divided by K; Eq. 11 and Eq. 15 of the paper)."""
    n = K.shape[0]
    A = np.empty((n + 1, n + 1))
    top = A[:n, :n]
    np.multiply(MK, gamma_I, out=top)
    top[lab_E] += K[lab_E]
    top[np.diag_indices(n)] += gamma_A
    col = gamma_I * M1
    col[lab_E] += 1.0
    A[:n, n] = col
    A[n, :n] = gamma_I * MK.sum(axis=0) + K[lab_E].sum(axis=0)
    A[n, n] = lab_E.size + gamma_I * M1.sum()
    return A


def _newton_rhs(n, lab_E, y_E):
    rhs = np.zeros(n + 1)
    rhs[lab_E] = y_E
    rhs[n] = y_E.sum()
    return rhs


def _solve(A, rhs):
    try:
        return solve_dense(A, rhs, hint="increase gamma_A")
    except SolverError:  # singular (e.g. no error vector and M 1 = 0): least-norm solution
        return np.linalg.lstsq(A, rhs, rcond=None)[0]


def laprlsc_closed_form(K, M, lab, Y_lab, gamma_A, gamma_I, MK=None):
    """LapRLSC with bias (Eq. 15): one (n+1) linear system, every column of Y_lab (l, C) at once.
    Returns (alpha (n, C), b (C,))."""
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    MK = M @ K if MK is None else MK
    M1 = M @ np.ones(n)
    A = _newton_system(K, MK, M1, np.asarray(lab), gamma_A, gamma_I)
    Y_lab = np.asarray(Y_lab, dtype=np.float64).reshape(len(lab), -1)
    rhs = np.zeros((n + 1, Y_lab.shape[1]))
    rhs[lab] = Y_lab
    rhs[n] = Y_lab.sum(axis=0)
    sol = _solve(A, rhs)
    return sol[:n], sol[n]


def lapsvm_newton(K, M, lab, y_lab, gamma_A, gamma_I, max_iter=50, MK=None, M1=None,
                  first_step=None):
    """Primal LapSVM (Eq. 7) by Newton's method with the generalized Hessian and step 1.

    Starts at alpha = 0, b = 0 (every labeled point is an error vector, so the first step is the
    LapRLSC solution); stops when the error-vector set does not change between two iterations.
    If a full step does not decrease the objective (possible in theory) an exact line search along
    the Newton direction is used instead (recorded as ``step`` in the history).
    ``first_step``: (alpha, b) of that first full step when the caller already has it (the
    LapRLSC solution; see ``lapsvm_newton_ova``); it still counts as Newton step 1.
    """
    t0 = time.perf_counter()
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    lab = np.asarray(lab)
    y = _targets(y_lab)
    MK = M @ K if MK is None else MK
    M1 = M @ np.ones(n) if M1 is None else M1
    alpha, b = np.zeros(n), 0.0
    E = np.ones(lab.size, bool)
    obj = primal_objective(K, M, lab, y, gamma_A, gamma_I, alpha, b)
    history, converged, reason = [], False, "max_iter"
    it = 0
    for it in range(1, max_iter + 1):
        if it == 1 and first_step is not None:
            new_alpha, new_b = np.asarray(first_step[0], dtype=np.float64), float(first_step[1])
        else:
            A = _newton_system(K, MK, M1, lab[E], gamma_A, gamma_I)
            sol = _solve(A, _newton_rhs(n, lab[E], y[E]))
            new_alpha, new_b = sol[:n], float(sol[n])
        new_obj = primal_objective(K, M, lab, y, gamma_A, gamma_I, new_alpha, new_b)
        step = 1.0
        if new_obj > obj * (1 + 1e-12) + 1e-300:
            step = _exact_step(K, M, lab, y, gamma_A, gamma_I, alpha, b,
                               new_alpha - alpha, new_b - b)
            new_alpha, new_b = alpha + step * (new_alpha - alpha), b + step * (new_b - b)
            new_obj = primal_objective(K, M, lab, y, gamma_A, gamma_I, new_alpha, new_b)
        alpha, b, obj = new_alpha, new_b, new_obj
        f = K @ alpha + b
        new_E = (1.0 - y * f[lab]) > 0
        history.append({"iteration": it, "objective": obj, "n_error_vectors": int(new_E.sum()),
                        "step": step})
        changed = int(np.sum(new_E != E))
        if not changed:
            converged, reason = True, "error vectors unchanged"
            break
        E = new_E
    f = K @ alpha + b
    return PrimalResult(alpha, b, f, obj, it, converged, reason, history,
                        time.perf_counter() - t0,
                        {"error vectors changed by the last step": (changed, "stop at 0")})


def lapsvm_newton_ova(K, M, lab, Y_lab, gamma_A, gamma_I, max_iter=50, MK=None, M1=None):
    """``lapsvm_newton`` for every column of Y_lab (l, C) (one-vs-all problems).

    The first Newton step has the same system for every column (all labeled points are error
    vectors: the LapRLSC matrix), so it is solved once for all columns (one LU, C right-hand
    sides) instead of once per column; the later steps are per column. Same iterates as calling
    ``lapsvm_newton`` per column, up to round-off.
    """
    K = np.asarray(K, dtype=np.float64)
    MK = M @ K if MK is None else MK
    M1 = M @ np.ones(K.shape[0]) if M1 is None else M1
    Y_lab = np.asarray(Y_lab, dtype=np.float64).reshape(len(lab), -1)
    alpha1, b1 = laprlsc_closed_form(K, M, lab, Y_lab, gamma_A, gamma_I, MK=MK)
    return [lapsvm_newton(K, M, lab, Y_lab[:, c], gamma_A, gamma_I, max_iter=max_iter, MK=MK,
                          M1=M1, first_step=(alpha1[:, c], b1[c]))
            for c in range(Y_lab.shape[1])]


def _exact_step(K, M, lab, y, gamma_A, gamma_I, alpha, b, d_alpha, d_b):
    Ka, Kd = K @ alpha, K @ d_alpha
    f, df = Ka + b, Kd + d_b
    lin = gamma_A * float(d_alpha @ Ka) + gamma_I * float(df @ (M @ f))
    quad = gamma_A * float(d_alpha @ Kd) + gamma_I * float(df @ (M @ df))
    t, _ = piecewise_quadratic_line_search(1.0 - y * f[lab], y * df[lab], lin, quad)
    return t


# -- preconditioned conjugate gradient ---------------------------------------------------------
def manifold_pcg(K, M, lab, y_lab, gamma_A, gamma_I, loss="squared_hinge",
                 criterion: StoppingCriterion | None = None, max_iter: int | None = None,
                 tol: float = 1e-10, unlabeled=None, validation=None, record_history=True):
    """Primal LapSVM (loss="squared_hinge") or LapRLSC (loss="squared") by PCG.

    Preconditioner blockdiag(K, 1); Polak–Ribière directions with automatic restart; exact line
    search over the breakpoints of the squared hinge (closed form for the squared loss).
    ``criterion`` (gssl.optim.pcg) decides early stopping (a stop by it counts as converged: the
    rule the caller chose was met); besides it the iteration ends when the
    preconditioned gradient norm falls below ``tol`` times its initial value ("converged"), when
    the line search makes no progress, or after ``max_iter`` iterations (default 10 n).
    ``unlabeled``: node indices whose decisions the stability check compares (default: not
    labeled); ``validation``: (node indices, ±1 targets) for the validation check.
    """
    t0 = time.perf_counter()
    K = np.asarray(K, dtype=np.float64)
    K_times = symmetric_matvec(K)       # the one dense product per iteration, on one triangle
    n = K.shape[0]
    lab = np.asarray(lab)
    y = _targets(y_lab)
    squared = loss == "squared"
    if loss not in ("squared", "squared_hinge"):
        raise SolverError(f"unknown loss {loss!r}")
    max_iter = 10 * n if max_iter is None else int(max_iter)
    if unlabeled is None:
        mask = np.ones(n, bool)
        mask[lab] = False
        unlabeled = np.flatnonzero(mask)
    if criterion is not None:
        criterion.reset()

    alpha, b = np.zeros(n), 0.0
    Ka = np.zeros(n)
    f = np.zeros(n)
    Mf = np.zeros(n)
    d_alpha = Kd = None
    d_b = 0.0
    Ku_prev = None
    zg_prev = 0.0
    g_b_prev = 0.0
    gn0 = None
    history = []
    converged, reason, it = False, "max_iter", 0

    def objective():
        r = 1.0 - y * f[lab]
        if not squared:
            r = np.maximum(r, 0.0)
        return 0.5 * float(r @ r + gamma_A * (alpha @ Ka) + gamma_I * (f @ Mf))

    def val_errors():
        idx, t = validation
        return int(np.sum(np.where(f[idx] >= 0, 1.0, -1.0) != t))

    u = None
    for it in range(1, max_iter + 1):
        # preconditioned gradient (u, g_b) and gradient (K u, g_b)
        r = 1.0 - y * f[lab]
        act = np.ones(lab.size, bool) if squared else r > 0
        e = np.zeros(n)
        e[lab[act]] = f[lab[act]] - y[act]
        v = e + gamma_I * Mf
        u = v + gamma_A * alpha
        g_b = float(v.sum())
        Ku = K_times(u)
        zg = float(u @ Ku) + g_b * g_b
        gn = np.sqrt(max(zg, 0.0))
        if gn0 is None:
            gn0 = gn
        if gn <= tol * gn0 or gn == 0:
            converged, reason, it = True, "converged", it - 1
            break
        if Ku_prev is None:
            beta = 0.0
        else:
            beta = polak_ribiere(zg, float(u @ Ku_prev) + g_b * g_b_prev, zg_prev)
        if beta == 0.0 or d_alpha is None:
            d_alpha, d_b, Kd = -u, -g_b, -Ku
        else:
            d_alpha = beta * d_alpha - u
            d_b = beta * d_b - g_b
            Kd = beta * Kd - Ku
        slope = float(Ku @ d_alpha) + g_b * d_b
        if slope >= 0:  # lost descent (round-off): restart along the preconditioned gradient
            beta = 0.0
            d_alpha, d_b, Kd = -u, -g_b, -Ku
        Ku_prev, zg_prev, g_b_prev = Ku, zg, g_b
        df = Kd + d_b
        Mdf = M @ df
        lin = gamma_A * float(d_alpha @ Ka) + gamma_I * float(df @ Mf)
        quad = gamma_A * float(d_alpha @ Kd) + gamma_I * float(df @ Mdf)
        step, n_int = piecewise_quadratic_line_search(r, y * df[lab], lin, quad,
                                                      all_active=squared)
        if step <= 0:
            converged, reason, it = True, "no descent step", it - 1
            break
        alpha += step * d_alpha
        b += step * d_b
        Ka += step * Kd
        f = Ka + b
        Mf += step * Mdf
        obj = objective() if record_history or criterion is not None else np.nan
        if record_history:
            history.append({"iteration": it, "objective": obj, "grad_norm": gn / gn0,
                            "step": step, "beta": beta, "line_search_intervals": n_int,
                            "n_error_vectors": int(act.sum())})
        if criterion is not None:
            state = IterationState(
                iteration=it, objective=obj, grad_norm=gn,
                decisions=lambda: np.where(f[unlabeled] >= 0, 1, -1),
                validation_errors=(val_errors if validation is not None else None))
            if criterion(state):  # the early stop met its rule: converged by that rule
                converged, reason = True, criterion.name
                break
    crit = (criterion.progress() if criterion is not None
            else {"relative gradient norm": (gn / gn0 if gn0 else 0.0, tol)})
    return PrimalResult(alpha, b, f.copy(), objective(), it, converged, reason, history,
                        time.perf_counter() - t0, crit)
