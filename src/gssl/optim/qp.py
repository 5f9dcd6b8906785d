"""Box-constrained SVM-type dual QPs with one equality constraint:

    max_beta  a'beta - 1/2 beta' Q beta   s.t.  y'beta = 0,  lo <= beta <= hi.

``qp_diagonal`` solves the case Q = diag(q) (q > 0) exactly: for the multiplier nu of y'beta = 0,
beta_i(nu) = clip((a_i - nu y_i) / q_i, lo_i, hi_i) and phi(nu) = y'beta(nu) is piecewise
linear and non-increasing, so its root is found exactly from the sorted breakpoints.
This is also the Euclidean projection onto {y'beta = 0, lo <= beta <= hi} (q = 1, a = point).

``qp_box_equality`` solves a dense PSD Q by accelerated projected gradient (FISTA with adaptive
restart) whose projection is ``qp_diagonal``; it stops when the projected-gradient residual
||beta - P(beta + grad/L)|| * L <= tol, which is zero exactly at a KKT point, and reports the KKT
violation of the returned point.
"""

from __future__ import annotations

import numpy as np

__all__ = ["qp_diagonal", "project_box_hyperplane", "qp_box_equality", "qp_kkt_violation"]


def _as_vec(v, n):
    v = np.asarray(v, dtype=np.float64)
    return np.broadcast_to(v, (n,)).astype(np.float64) if v.ndim == 0 else v


def qp_diagonal(q, a, y, lo=0.0, hi=1.0) -> tuple[np.ndarray, float]:
    """Exact solution (beta, nu) of max a'b - 1/2 sum q_i b_i^2, y'b = 0, lo <= b <= hi.

    y must have non-zero entries and sum(lo * (y > 0)...) feasibility is checked.
    """
    a = np.asarray(a, dtype=np.float64)
    n = a.size
    q, y, lo, hi = _as_vec(q, n), _as_vec(y, n), _as_vec(lo, n), _as_vec(hi, n)
    if np.any(q <= 0) or np.any(y == 0) or np.any(lo > hi):
        raise ValueError("qp_diagonal needs q > 0, y != 0 and lo <= hi")

    def beta(nu):
        return np.clip((a - nu * y) / q, lo, hi)

    def phi(nu):
        return float(y @ beta(nu))

    # breakpoints: (a - nu y)/q = lo or hi
    bps = np.unique(np.concatenate([(a - q * lo) / y, (a - q * hi) / y]))
    vals = _phi_many(bps, q, a, y, lo, hi)
    if vals[0] < 0 or vals[-1] > 0:
        # phi is constant outside the breakpoints: infeasible unless it hits 0 at an end
        if (vals[0] < 0 and abs(vals[0]) > 1e-12 * (1 + np.abs(y).sum())) or \
           (vals[-1] > 0 and abs(vals[-1]) > 1e-12 * (1 + np.abs(y).sum())):
            raise ValueError("qp_diagonal: the constraint set {y'b = 0, lo <= b <= hi} is empty")
    k = np.flatnonzero(vals <= 0)
    if k.size == 0:
        nu = float(bps[-1])
    elif k[0] == 0:
        nu = float(bps[0])
    else:
        j = k[0]                                      # vals[j-1] > 0 >= vals[j]
        n0, n1, v0, v1 = bps[j - 1], bps[j], vals[j - 1], vals[j]
        nu = float(n0 + (n1 - n0) * v0 / (v0 - v1))   # phi linear on [n0, n1]
    return beta(nu), nu


def _phi_many(nus, q, a, y, lo, hi):
    out = np.empty(nus.size)
    for s in range(0, nus.size, 256):
        B = np.clip((a[None, :] - nus[s:s + 256, None] * y[None, :]) / q[None, :], lo, hi)
        out[s:s + 256] = B @ y
    return out


def project_box_hyperplane(v, y, lo=0.0, hi=1.0) -> np.ndarray:
    """Euclidean projection of v onto {b : y'b = 0, lo <= b <= hi}."""
    return qp_diagonal(1.0, v, y, lo, hi)[0]


def qp_kkt_violation(Q, a, y, beta, lo=0.0, hi=1.0) -> float:
    """Max KKT violation at beta: with grad = a - Q beta and the best multiplier nu,
    free coordinates need grad_i = nu y_i, those at lo need grad_i - nu y_i <= 0, at hi >= 0.
    Also includes |y'beta| and the box violation."""
    n = beta.size
    lo, hi = _as_vec(lo, n), _as_vec(hi, n)
    g = a - Q @ beta
    # nu minimizing the violation: 1-D convex problem, solve by evaluating candidate values
    scale = 1e-9 * max(1.0, np.abs(hi).max())
    at_lo = beta <= lo + scale
    at_hi = beta >= hi - scale
    free = ~(at_lo | at_hi)
    cands = g / y
    viol = []
    cand_list = np.unique(np.concatenate([cands, [np.median(cands[free])] if free.any() else []]))
    for nu in cand_list:
        r = g - nu * y
        v = np.concatenate([np.abs(r[free]), np.maximum(r[at_lo & ~at_hi], 0),
                            np.maximum(-r[at_hi & ~at_lo], 0), [0.0]])
        viol.append(v.max())
    best = min(viol)
    feas = max(abs(float(y @ beta)), float(np.maximum(lo - beta, 0).max()),
               float(np.maximum(beta - hi, 0).max()))
    return max(best, feas)


def qp_box_equality(Q, a, y, lo=0.0, hi=1.0, *, tol: float = 1e-10, max_iter: int = 20000,
                    beta0=None) -> tuple[np.ndarray, dict]:
    """max a'b - 1/2 b'Qb, y'b = 0, lo <= b <= hi for a dense symmetric PSD Q.

    Accelerated projected gradient with step 1/L (L = largest eigenvalue of Q), adaptive restart;
    stop when L * ||b - P(b + grad/L)|| <= tol * max(1, ||a||_inf) (gradient mapping, zero exactly
    at a KKT point). Returns (beta, info) with iterations, residual, kkt, stop_reason.
    """
    Q = np.asarray(Q, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    n = a.size
    y = _as_vec(y, n)
    lo, hi = _as_vec(lo, n), _as_vec(hi, n)
    L = float(np.linalg.eigvalsh(0.5 * (Q + Q.T))[-1]) if n else 0.0
    L = max(L, 1e-12)
    b = project_box_hyperplane(np.zeros(n) if beta0 is None else beta0, y, lo, hi)
    x, t = b.copy(), 1.0
    f_old = np.inf
    stop, res, it = "max_iter", np.inf, 0
    thresh = tol * max(1.0, float(np.abs(a).max()) if n else 1.0)
    for it in range(1, max_iter + 1):
        grad = a - Q @ x
        b_new = project_box_hyperplane(x + grad / L, y, lo, hi)
        # cheap test: gradient mapping at the extrapolated point x; when it passes, certify with
        # the gradient mapping at b_new itself (the returned point)
        if L * float(np.linalg.norm(b_new - x)) <= thresh:
            gb = a - Q @ b_new
            res = L * float(np.linalg.norm(b_new - project_box_hyperplane(b_new + gb / L, y,
                                                                          lo, hi)))
            if res <= thresh:
                b, stop = b_new, "kkt residual"
                break
        fval = -(a @ b_new - 0.5 * b_new @ (Q @ b_new))
        if fval > f_old:                                # adaptive restart
            t, b = 1.0, b_new
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        x = b_new + ((t - 1.0) / t_new) * (b_new - b)
        b, t, f_old = b_new, t_new, fval
    if stop != "kkt residual":
        gb = a - Q @ b
        res = L * float(np.linalg.norm(b - project_box_hyperplane(b + gb / L, y, lo, hi)))
    return b, {"iterations": it, "residual": res, "stop_reason": stop,
               "kkt": qp_kkt_violation(Q, a, y, b, lo, hi)}
