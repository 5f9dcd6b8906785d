"""The Cheeger-cut iteration of Bresson & Zhang, binary (29)-(36) and multiclass (114)-(122).

Around a regression step e = S(g) (Cheeger-RLS: (37)-(38), Cheeger-SVM: the dual (94)):
g = f + c sign(f), e = S(g), h = TV prox of e with weight E(f)/c per column, t = h - median(h),
labeled rows reset to their targets, [projection on the simplex], [sphere]. The Cheeger ratio is
even; a binary run keeps the orientation of its start, so its mirror image with the labeled
values kept is compared at the end and kept when its ratio is lower.
"""

from __future__ import annotations

import numpy as np

from .simplex import project_simplex
from .tv_admm import ADMMRun, IterationLog, rel_change

__all__ = ["cheeger_energy", "cheeger_iteration"]


def cheeger_energy(D, f) -> np.ndarray | float:
    """Cheeger ratio ||D f||_1 / sum_i |f_i - median(f)| (column-wise for f (n, C))."""
    f = np.asarray(f, dtype=np.float64)
    num = np.abs(D @ f).sum(axis=0)
    den = np.abs(f - np.median(f, axis=0)).sum(axis=0)
    out = num / np.maximum(den, 1e-300)
    return float(out) if f.ndim == 1 else out


def cheeger_iteration(S, lab, Yl, regress, prox, *, c, norm, max_iter, tol) -> ADMMRun:
    """Run from the start S (n, C), modified in place; Yl: the labeled rows kept fixed; one
    column = binary (scores [-f, f], ``flipped`` when the mirror image won), several =
    multiclass (scores: the simplex points, F: the last regression output e)."""
    D = prox.D
    n, C = S.shape
    multi = C > 1
    S[lab] = Yl
    f = norm(S)
    Sh = S
    ps = [None] * C
    log = IterationLog(tol)
    for it in range(1, max_iter + 1):
        E = np.atleast_1d(cheeger_energy(D, f))
        g = f + c * np.sign(f)                                       # (29)/(114)
        e = regress(g)                                               # (30)/(115)
        h = np.empty_like(e)
        for k in range(C):                                           # (31)/(116)
            h[:, k], ps[k] = prox(e[:, k], 1.0, max(E[k], 1e-12) / c, ps[k])
        s = h - np.median(h, axis=0)                                 # (32)/(117)
        s[lab] = Yl                                                  # (35)/(120)
        if multi:
            s = project_simplex(s)                                   # (121)
        f_new = norm(s)                                              # (36)/(122)
        change = rel_change(s, Sh)
        Sh, f = s, f_new
        if log.record(it, float(np.sum(cheeger_energy(D, f))), change):
            break
    if multi:
        return ADMMRun(Sh, log, F=e)
    return _keep_lower_mirror(D, f, lab, log)


def _keep_lower_mirror(D, f, lab, log) -> ADMMRun:
    """Binary scores from f (n, 1), replaced by its mirror image (labeled values kept) when that
    has the lower Cheeger ratio."""
    mirror = -f
    mirror[lab] = f[lab]
    flipped = cheeger_energy(D, mirror) < cheeger_energy(D, f)
    if flipped:
        f = mirror
    return ADMMRun(np.column_stack([-f[:, 0], f[:, 0]]), log, flipped=bool(flipped))
