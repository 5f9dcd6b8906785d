"""ADMM iterations of Bresson & Zhang's TV classifiers and the shared pieces of their TV family.

Binary (one ±1 column y): ``binary_admm`` splits f = g = h with multipliers l1, l2 -- TV-RLS
(21)-(27) with the h-step ``RLSLabelStep`` (23), TV-SVM (73)-(80) with ``HingeLabelStep``, whose
dual (75) has diagonal Q = I/r2 and is solved exactly (``qp_diagonal``). ``binary_two_starts``
runs it from g0 and from -g0 and orients the result (``orientation``).
Multiclass: ``simplex_admm`` = f-step, [TV prox], projection on the simplex, [sphere], multiplier
update -- Lap-RLS (99)-(103) and TV-RLS (106)-(110) with ``RLSSimplexStep``, Lap-SVM (124)-(131)
and TV-SVM (139)-(142) with ``HingeSimplexStep``.

Conventions the paper leaves open: graph TV ||Dg|| counts each edge once; hinge constraints apply
to the labeled nodes only; multipliers start at 0 and follow the standard augmented Lagrangian
update (the paper writes it for the binary case only); every iteration records its objective per
outer iteration (``IterationLog``) and stops when the relative change of its main iterate falls
below ``tol`` ("relative change") or after ``max_iter`` iterations ("max_iter").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..errors import SolverError
from .qp import qp_diagonal
from .simplex import project_simplex

__all__ = ["ADMMRun", "HingeLabelStep", "HingeSimplexStep", "IterationLog", "RLSLabelStep",
           "RLSSimplexStep", "binary_admm", "binary_split_admm", "binary_two_starts",
           "cho_factor_checked", "label_targets", "normalizer", "orientation", "rel_change", "simplex_admm",
           "sphere", "tv_penalty"]


class IterationLog:
    """Per-iteration records of one run and its stop rule (relative change < tol)."""

    def __init__(self, tol: float):
        self.tol = tol
        self.history: list[dict] = []
        self.n_iter = 0
        self.converged, self.stop_reason = False, "max_iter"

    def record(self, it, objective, change, **extra) -> bool:
        """Append iteration ``it``; True when the run should stop."""
        self.history.append({"iteration": it, "objective": float(objective),
                             "relative_change": float(change), **extra})
        self.n_iter = it
        if change < self.tol:
            self.converged, self.stop_reason = True, "relative change"
            return True
        return False


@dataclass
class ADMMRun:
    """One run: the scores, its log, the expansion coefficients alpha (f = K alpha) and the
    multiclass function f (the papers' decision variable) where the method has them."""

    scores: np.ndarray
    log: IterationLog
    alpha: np.ndarray | None = None
    F: np.ndarray | None = None
    flipped: bool = False        # binary: the mirrored start (TV) or image (Cheeger) was kept


def sphere(v, radius, zero_mean=False):
    """The paper's normalization: v <- radius v / ||v|| per column, then optionally v - mean(v)."""
    v = np.asarray(v, dtype=np.float64)
    nrm = np.linalg.norm(v, axis=0)
    v = radius * v / np.maximum(nrm, 1e-300)
    if zero_mean:
        v = v - v.mean(axis=0)
    return v


def normalizer(normalize: bool, radius: str, n: int, zero_mean=False):
    """The sphere step g <- N g / ||g|| (radius "n": N, "sqrt_n": sqrt(N)) or the identity."""
    if not normalize:
        return lambda v: v
    rad = float(n) if radius == "n" else float(np.sqrt(n))
    return lambda v: sphere(v, rad, zero_mean=zero_mean)


def label_targets(codes, n_classes, pm_one):
    """Targets Y on the labeled rows (codes >= 0), zeros elsewhere: one ±1 column (+1 = class 1)
    when ``pm_one`` is "binary", else (n, C) one-hot, scaled to ±1 when ``pm_one``."""
    lab = codes >= 0
    if pm_one == "binary":
        Y = np.zeros((codes.size, 1))
        Y[lab, 0] = np.where(codes[lab] == 1, 1.0, -1.0)
        return Y
    Y = np.zeros((codes.size, n_classes))
    Y[lab] = (codes[lab, None] == np.arange(n_classes)).astype(float)
    if pm_one:
        Y[lab] = 2.0 * Y[lab] - 1.0
    return Y


def tv_penalty(D, gamma):
    """F -> gamma ||D F||_1 (summed over columns)."""
    return lambda F: gamma * np.abs(D @ F).sum()


def rel_change(new, old) -> float:
    return float(np.linalg.norm(new - old) / max(np.linalg.norm(old), 1e-300))


def orientation(label_term, f_lab) -> float:
    """+1 or -1: the sign of the binary solution with the lower objective.

    The normalized binary problems are symmetric under (f, g, h, alpha) -> -(f, g, h, alpha)
    (sphere and zero mean are, the RKHS norm and the TV are even); only the label term is not.
    The ADMM keeps the orientation of its start, so the final point and its mirror image are both
    stationary and we keep the one whose label term (hence objective) is lower -- this matters
    when a start put a labeled point on the wrong side of the cut."""
    return -1.0 if label_term(-f_lab) < label_term(f_lab) else 1.0


def cho_factor_checked(A, name: str):
    """Cholesky factor of lambda I + r K, or SolverError naming the method."""
    try:
        return sla.cho_factor(A, check_finite=False)
    except (sla.LinAlgError, ValueError) as exc:
        raise SolverError(f"{name}: lambda I + r K is not positive definite ({exc}); "
                          f"increase lam") from exc


class RLSLabelStep:
    """TV-RLS h-step (23): h = (eta y + r2 g - l2) / (eta J + r2); label term on f."""

    on_h = False

    def __init__(self, y, lab, eta, r2):
        self.y, self.lab, self.eta, self.r2 = y, lab, eta, r2
        self.yl, self.Jd = y[lab], lab.astype(float)

    def __call__(self, g, l2):
        return (self.eta * self.y + self.r2 * g - l2) / (self.eta * self.Jd + self.r2)

    def label_term(self, v):
        return 0.5 * self.eta * np.sum((self.yl - v) ** 2)


class HingeLabelStep:
    """TV-SVM h-step (75)-(76): the diagonal dual (75) at e = g - l2/r2, then h = e + J'Y beta / r2;
    label term (hinge) on h."""

    on_h = True

    def __init__(self, y, lab, mu, r2):
        self.lab, self.mu, self.r2 = lab, mu, r2
        self.yl = y[lab]

    def __call__(self, g, l2):
        e = g - l2 / self.r2
        beta, _ = qp_diagonal(1.0 / self.r2, 1.0 - self.yl * e[self.lab], self.yl, 0.0, self.mu)
        h = e.copy()
        h[self.lab] += self.yl * beta / self.r2
        return h

    def label_term(self, v):
        return self.mu * np.maximum(0.0, 1.0 - self.yl * v).sum()


def binary_admm(K, cho, g, hstep, *, lam, gamma, r1, r2, prox, norm, max_iter, tol) -> dict:
    """Binary split ADMM from g: alpha = (lam I + r1 K)^{-1} (r1 g - l1) with ``cho`` its factor,
    f = K alpha, h = hstep(g, l2), g = norm(TV prox at (r1 f + l1 + r2 h + l2) / (r1 + r2)),
    l1 += r1 (f - g), l2 += r2 (h - g). Returns objective, f, g, alpha and the log."""
    n = g.size
    log = IterationLog(tol)
    l1, l2, p = np.zeros(n), np.zeros(n), None
    for it in range(1, max_iter + 1):
        alpha = sla.cho_solve(cho, r1 * g - l1, check_finite=False)      # (21)/(73)
        f = K @ alpha                                                    # (22)/(74)
        h = hstep(g, l2)                                                 # (23)/(75)-(76)
        z = (r1 * f + l1 + r2 * h + l2) / (r1 + r2)                      # (25)/(77)
        gbar, p = prox(z, gamma, r1 + r2, p)
        g_new = norm(gbar)                                               # (26)/(78)
        l1 += r1 * (f - g_new)                                           # (27)/(79)-(80)
        l2 += r2 * (h - g_new)
        obj = (hstep.label_term((h if hstep.on_h else f)[hstep.lab]) + 0.5 * lam * alpha @ f
               + gamma * np.abs(prox.D @ f).sum())
        stop = log.record(it, obj, rel_change(g_new, g),
                          constraint=float(np.linalg.norm(f - g_new) / f.size))
        g = g_new
        if stop:
            break
    return {"objective": obj, "f": f, "g": g, "alpha": alpha, "log": log}


def binary_split_admm(K, g0, hstep, *, lam, gamma, r1, r2, prox, normalize, radius, output,
                      max_iter, tol, name) -> ADMMRun:
    """The binary TV method from the start g0 (before normalization): ``binary_admm`` with
    (lam I + r1 K) factored once, from g0 and -g0 when normalized (``binary_two_starts``)."""
    n = g0.size
    norm = normalizer(normalize, radius, n, zero_mean=True)
    cho = cho_factor_checked(lam * np.eye(n) + r1 * K, name)

    def run(g):
        return binary_admm(K, cho, g, hstep, lam=lam, gamma=gamma, r1=r1, r2=r2, prox=prox,
                           norm=norm, max_iter=max_iter, tol=tol)

    return binary_two_starts(run, norm(g0), hstep.lab, hstep.label_term, mirror=normalize,
                             output=output)


def binary_two_starts(run, g0, lab, label_term, *, mirror: bool, output: str) -> ADMMRun:
    """Run the binary ADMM from g0 and, for the normalized (non-convex, sign-symmetric) problem
    (``mirror``), again from -g0; keep the lower objective (the iteration keeps the orientation
    of its start, and with one label per class both labeled nodes can lie in one cluster, so the
    start's orientation can be wrong -- the wrong one ends with the labeled nodes carved out as
    islands or on the wrong side, at a higher objective). Then keep the sign of the final point
    with the lower label term (``orientation``). Scores [-out, out], out = f or g (``output``)."""
    res, flipped = run(g0), False
    if mirror:
        res2 = run(-g0)
        if res2["objective"] < res["objective"]:
            res, flipped = res2, True
    sgn = orientation(label_term, res["f"][lab])
    out = sgn * (res["f"] if output == "f" else res["g"])
    return ADMMRun(np.column_stack([-out, out]), res["log"], alpha=sgn * res["alpha"],
                   flipped=flipped)


class RLSSimplexStep:
    """Multiclass RLS f-step (100)-(101)/(106)-(107): alpha = A^{-1} (eta Y + r G - Lm),
    F = K alpha, A = eta J K + r K + lam I (+ gamma L K) LU-factored once. The objective adds
    ``penalty(F)`` (gamma TV(F) or gamma/2 tr F'LF) to the label and RKHS terms."""

    def __init__(self, K, A, Y, lab, *, eta, lam, r, penalty):
        self.lu = sla.lu_factor(A, check_finite=False)
        self.K, self.Y, self.lab = K, Y, lab
        self.eta, self.lam, self.r, self.penalty = eta, lam, r, penalty
        self.alpha = None

    def __call__(self, G, Lm):
        self.alpha = sla.lu_solve(self.lu, self.eta * self.Y + self.r * G - Lm,
                                  check_finite=False)
        return self.K @ self.alpha

    def objective(self, F):
        lab = self.lab
        return (0.5 * self.eta * np.sum((self.Y[lab] - F[lab]) ** 2)
                + 0.5 * self.lam * np.sum(self.alpha * F) + self.penalty(F))


class HingeSimplexStep:
    """Multiclass SVM f-step (126)-(129)/(136)-(139): F = SVM(G - Lm / r) by the dual
    (``DualSVMStep``); objective mu * hinge [+ penalty(F)]."""

    alpha = None

    def __init__(self, svm, Y, lab, *, mu, r, penalty=None):
        self.svm, self.Y, self.lab, self.mu, self.r, self.penalty = svm, Y, lab, mu, r, penalty

    def __call__(self, G, Lm):
        return self.svm(G - Lm / self.r)

    def objective(self, F):
        hinge = self.mu * np.maximum(0.0, 1.0 - self.Y[self.lab] * F[self.lab]).sum()
        return hinge if self.penalty is None else hinge + self.penalty(F)


def simplex_admm(fstep, Gs, r, *, max_iter, tol, prox=None, gamma=None, norm=None) -> ADMMRun:
    """Multiclass ADMM with f = g from the simplex point Gs: F = fstep(G, Lm); Z = F + Lm / r,
    [Z = TV prox of Z (weight gamma) when ``prox``]; Gs = P_simplex(Z); G = norm(Gs) (``norm``:
    the sphere step, or None); Lm += r (F - G). Scores: the simplex points Gs (before the sphere
    rescaling); F: the function f = K alpha."""
    n, C = Gs.shape
    G = Gs if norm is None else norm(Gs)
    Lm, p, log = np.zeros((n, C)), None, IterationLog(tol)
    for it in range(1, max_iter + 1):
        F = fstep(G, Lm)                                                 # (100)/(107)/(129)/(139)
        Z = F + Lm / r
        if prox is not None:
            Z, p = prox(Z, gamma, r, p)                                  # (108)/(140)
        Gs_new = project_simplex(Z)                                      # (102)/(109)/(130)/(141)
        G_new = Gs_new if norm is None else norm(Gs_new)                # (110)/(142)
        Lm += r * (F - G_new)
        change = rel_change(Gs_new, Gs)
        G, Gs = G_new, Gs_new
        if log.record(it, fstep.objective(F), change):
            break
    return ADMMRun(Gs, log, alpha=fstep.alpha, F=F)
