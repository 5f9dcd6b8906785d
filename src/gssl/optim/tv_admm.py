"""ADMM iterations of Bresson & Zhang's TV classifiers and the shared pieces of their TV family.

Binary (one ±1 column y): ``binary_admm`` splits f = g = h with multipliers l1, l2 -- TV-RLS
(21)-(27) with the h-step ``RLSLabelStep`` (23), TV-SVM (73)-(80) with ``HingeLabelStep``, whose
dual (75) has diagonal Q = I/r2 and is solved exactly (``qp_diagonal``). ``binary_two_starts``
runs it from g0 and from -g0 and orients the result (``orientation``).
Multiclass: ``simplex_admm`` = f-step, [balance step], [TV prox], projection on the simplex
[labeled rows pinned], multiplier update -- Lap-RLS (99)-(103) and TV-RLS (106)-(110) with
``RLSSimplexStep``, Lap-SVM (124)-(131) and TV-SVM (139)-(142) with ``HingeSimplexStep``.

The multiclass sphere step (110)/(142). The problems (105)/(133) constrain the split variable to
the simplex only: f = g, sum_k g^k_i = 1, g >= 0. The sphere step rescales each column to radius
R (sqrt(N) or N), but rows on the simplex have sum_k (g^k_i)^2 <= 1, so sum_k ||g^k||^2 <= N < C R^2:
the simplex and the sphere do not intersect, and a multiplier updated against the rescaled point
(the paper's steps read literally) chases a constraint no f can meet -- the residual never falls,
the multiplier grows and pushes the points off their classes. Here the multiplier is updated
against the simplex point (the constraint set of (105)), and the sphere step enters as what it does
to the iterate: a step along the gradient of the balance term
B(G) = sum_k (R ||g^k|| - ||g^k||^2 / 2), grad B = sphere(G) - G, with weight beta = r (the
weight the literal step gives it at penalty r; it keeps a class from fading into the uniform
point, which the convex problem (105) does at one label per class). The iteration is the ADMM of
min E(f) + gamma TV(g) - beta B(g) s.t. f = g on the simplex, with B linearized at the current g
in the g-step. Its fixed points do not depend on the penalty (up to the order of TV prox and
projection, which the paper fixes), so the penalty rho starts at r and is multiplied by 4 when
the primal residual stalls or runs far ahead of the dual one (``simplex_admm``; each change
refactors the f-step): the non-convex balance term makes the iteration oscillate at a small
penalty where the f-step cannot follow g (large lam), and at a small penalty f trails g for
hundreds of iterations after g has stopped moving (all the simplex ADMMs, Lap-RLS/Lap-SVM too).

Conventions the paper leaves open: graph TV ||Dg|| counts each edge once; hinge constraints apply
to the labeled nodes only; multipliers start at 0 and follow the standard augmented Lagrangian
update (the paper writes it for the binary case only); the multiclass TV methods pin the labeled
rows of g to their one-hot labels (as the Cheeger iteration does, (120)); every iteration records
its objective per outer iteration (``IterationLog``) and stops when the relative change of its
main iterate falls below ``tol`` -- multiclass: and the primal residual ||F - G|| / ||G|| too
("relative change and residual") -- or after ``max_iter`` iterations ("max_iter").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .linalg import KernelSystem
from .qp import qp_diagonal
from .simplex import project_simplex

__all__ = ["ADMMRun", "HingeLabelStep", "HingeSimplexStep", "IterationLog", "RLSLabelStep",
           "RLSSimplexStep", "binary_admm", "binary_split_admm", "binary_two_starts",
           "label_targets", "normalizer", "orientation", "rel_change", "simplex_admm",
           "sphere", "tv_penalty"]


class IterationLog:
    """Per-iteration records of one run and its stop rule: relative change < tol, and, where a
    ``residual`` is given (the multiclass ADMM's ||F - G|| / ||G||), residual < tol too."""

    def __init__(self, tol: float):
        self.tol = tol
        self.history: list[dict] = []
        self.n_iter = 0
        self.converged, self.stop_reason = False, "max_iter"

    def record(self, it, objective, change, residual=None, **extra) -> bool:
        """Append iteration ``it``; True when the run should stop."""
        rec = {"iteration": it, "objective": float(objective), "relative_change": float(change)}
        if residual is not None:
            rec["residual"] = float(residual)
        self.history.append({**rec, **extra})
        self.n_iter = it
        if change < self.tol and (residual is None or residual < self.tol):
            self.converged = True
            self.stop_reason = "relative change" if residual is None else "relative change and residual"
            return True
        return False

    def criteria(self) -> dict:
        """Name -> (last value, tol) of each criterion of the stop rule (an estimator's
        ``criteria_``, which its ConvergenceWarning reports)."""
        last = self.history[-1] if self.history else {}
        return {k.replace("_", " "): (last[k], self.tol) for k in ("relative_change", "residual")
                if k in last}


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


def binary_admm(system, g, hstep, *, lam, gamma, r1, r2, prox, norm, max_iter, tol) -> dict:
    """Binary split ADMM from g: alpha = (lam I + r1 K)^{-1} (r1 g - l1) and f = K alpha from
    ``system`` (``KernelSystem``), h = hstep(g, l2), g = norm(TV prox at (r1 f + l1 + r2 h + l2)
    / (r1 + r2)), l1 += r1 (f - g), l2 += r2 (h - g). Returns objective, f, g, alpha and the log."""
    n = g.size
    log = IterationLog(tol)
    l1, l2, p = np.zeros(n), np.zeros(n), None
    for it in range(1, max_iter + 1):
        alpha, f = system.solve(r1 * g - l1)                             # (21)-(22)/(73)-(74)
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
    system = KernelSystem(K, r1, lam, name)

    def run(g):
        return binary_admm(system, g, hstep, lam=lam, gamma=gamma, r1=r1, r2=r2, prox=prox,
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
    F = K alpha, A = eta J K + r K + lam I (+ gamma L K) factored once (``system``, a
    ``KernelSystem``). The objective adds ``penalty(F)`` (gamma TV(F) or gamma/2 tr F'LF) to the
    label and RKHS terms."""

    def __init__(self, system, Y, lab, *, eta, lam, r, penalty):
        self.system, self.Y, self.lab = system, Y, lab
        self.eta, self.lam, self.r, self.penalty = eta, lam, r, penalty
        self.alpha = None

    def __call__(self, G, Lm):
        self.alpha, F = self.system.solve(self.eta * self.Y + self.r * G - Lm)
        return F

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


ADAPT_EVERY, ADAPT_FACTOR, ADAPT_MAX, ADAPT_BALANCE = 5, 4.0, 8, 10.0  # ``simplex_admm``'s penalty rule


def simplex_admm(make_step, Gs, r, *, max_iter, tol, prox=None, gamma=None, norm=None,
                 pinned=None) -> ADMMRun:
    """Multiclass ADMM with f = g, g on the simplex, from the simplex point Gs.

    ``make_step(rho)``: the f-step at penalty rho (F = fstep(G, Lm), ``objective(F)``, ``alpha``).
    Each iteration: F = fstep(Gs, Lm); Z = F + Lm / rho [+ (r / rho) (norm(Gs) - Gs): the balance
    step where ``norm`` (the sphere) is given, see the module doc]; [Z = TV prox of Z, weight
    gamma, when ``prox``]; Gs = P_simplex(Z) [``pinned`` = (mask, rows): those rows held at
    ``rows``]; Lm += rho (F - Gs). Stops when the relative change of Gs and the primal residual
    ||F - Gs|| / ||Gs|| are both below ``tol``. The penalty rho starts at r and, checked every
    ``ADAPT_EVERY`` iterations, is multiplied by ``ADAPT_FACTOR`` (at most ``ADAPT_MAX`` times)
    when the residual has not fallen since the last check or exceeds ``ADAPT_BALANCE`` times the
    dual residual rho ||Gs - Gs_old|| / ||Gs|| (residual balancing, Boyd et al. 2011, 3.4.1, one
    way only so that it stops): the fixed points do not depend on rho, a small rho leaves F
    trailing G for hundreds of iterations while Gs no longer moves. Scores: the simplex points
    Gs; F: f = K alpha."""
    n, C = Gs.shape
    Gs = np.array(Gs, dtype=np.float64)
    lab = rows = None
    if pinned is not None:
        lab, rows = pinned
        Gs[lab] = rows
    rho, changes = float(r), 0
    fstep = make_step(rho)
    Lm, p, log = np.zeros((n, C)), None, IterationLog(tol)
    for it in range(1, max_iter + 1):
        F = fstep(Gs, Lm)                                                # (100)/(107)/(129)/(139)
        alpha = fstep.alpha
        Z = F + Lm / rho
        if norm is not None:                                             # (110)/(142), see above
            Z = Z + (r / rho) * (norm(Gs) - Gs)
        if prox is not None:
            Z, p = prox(Z, gamma, rho, p)                                # (108)/(140)
        if lab is not None:
            Z[lab] = rows
        Gs_new = project_simplex(Z, fixed=lab)                           # (102)/(109)/(130)/(141)
        Lm += rho * (F - Gs_new)
        change = rel_change(Gs_new, Gs)
        residual = float(np.linalg.norm(F - Gs_new) / max(np.linalg.norm(Gs_new), 1e-300))
        Gs = Gs_new
        if log.record(it, fstep.objective(F), change, residual, penalty=rho):
            break
        if changes < ADAPT_MAX and it % ADAPT_EVERY == 0 and it > ADAPT_EVERY and (
                residual >= log.history[-1 - ADAPT_EVERY]["residual"]        # stalled
                or residual > ADAPT_BALANCE * rho * change):                 # dual far ahead
            rho, changes = rho * ADAPT_FACTOR, changes + 1
            fstep = make_step(rho)
    return ADMMRun(Gs, log, alpha=alpha, F=F)
