"""Pieces of the nonlinear preconditioned conjugate gradient of Melacci & Belkin (2011).

* :func:`piecewise_quadratic_line_search` — exact minimizer along a direction of
  ``phi(t) = lin * t + quad * t^2 / 2 + 1/2 sum_i max(0, r_i - t s_i)^2`` by sweeping the
  breakpoints ``t_i = r_i / s_i`` in increasing order (Keerthi & DeCoste 2006); with
  ``all_active=True`` every term is a plain square (LapRLSC) and the step is closed form.
* :func:`polak_ribiere` — the preconditioned Polak–Ribière coefficient with automatic restart
  (clipped at 0, Shewchuk 1994).
* Stopping criteria as small objects called once per iteration, each with a ``name`` that ends up
  in ``stop_reason_``: :class:`StabilityCheck` (unlabeled decisions stop changing),
  :class:`ValidationCheck` (validation errors stop decreasing), :class:`MixedCheck` (both),
  :class:`GradientNormCheck` and :class:`ObjectiveDecreaseCheck` (the classic ones).

A criterion is called as ``crit(state)`` where ``state`` is an :class:`IterationState`; the values
that cost something (decisions, validation errors) are callables evaluated only at check iterations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import ConfigError


# -- line search -----------------------------------------------------------------------------------
def piecewise_quadratic_line_search(r, s, lin: float, quad: float, all_active: bool = False):
    """argmin_{t >= 0} of phi(t) = lin t + quad t^2/2 + 1/2 sum_i max(0, r_i - t s_i)^2.

    ``r``: margins ``1 - y_i f_i`` of the labeled points at t = 0; ``s``: ``y_i * (direction of
    f)_i``; ``lin``/``quad``: first and second derivative at 0 of the regularizer part (quad >= 0).
    Term i is active (an error vector) while ``r_i - t s_i > 0``. phi' is piecewise linear and
    nondecreasing (phi is convex); the sweep visits the breakpoints ``t_i = r_i/s_i > 0`` in order,
    toggling one point per breakpoint, and returns the zero of phi' in the first interval that holds
    it. Returns (t, n_intervals_visited). ``all_active`` treats every term as a square (no hinge).
    Returns t = 0 when phi'(0) >= 0 (not a descent direction).
    """
    r = np.asarray(r, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    if all_active:
        c0 = lin - float(s @ r)
        c1 = quad + float(s @ s)
        if c0 >= 0 or c1 <= 0:
            return 0.0, 1
        return -c0 / c1, 1
    # active just to the right of t = 0
    active = (r > 0) | ((r == 0) & (s < 0))
    c0 = lin - float(s[active] @ r[active])       # phi'(t) = c0 + c1 t on the current interval
    c1 = quad + float(s[active] @ s[active])
    if c0 >= 0:
        return 0.0, 1
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(s != 0, r / s, np.inf)
    cand = np.flatnonzero((bp > 0) & np.isfinite(bp))
    order = cand[np.argsort(bp[cand], kind="stable")]
    visited = 0
    for i in order:
        visited += 1
        t_end = bp[i]
        if c1 > 0:
            t_star = -c0 / c1
            if t_star <= t_end:
                return t_star, visited
        # point i switches state at t_end: active (r - t s > 0 before, s > 0) leaves, else enters
        sign = -1.0 if active[i] else 1.0
        active[i] = not active[i]
        c0 += sign * (-s[i] * r[i])
        c1 += sign * (s[i] * s[i])
    visited += 1
    if c1 <= 0:  # unbounded below: cannot happen with quad > 0; signal no step
        return 0.0, visited
    return max(0.0, -c0 / c1), visited


def polak_ribiere(z_new_dot_g_new: float, z_new_dot_g_old: float, z_old_dot_g_old: float) -> float:
    """Preconditioned Polak–Ribière beta = z_k'(g_k - g_{k-1}) / z_{k-1}'g_{k-1}, restarted at 0."""
    if z_old_dot_g_old <= 0:
        return 0.0
    return max(0.0, (z_new_dot_g_new - z_new_dot_g_old) / z_old_dot_g_old)


# -- stopping criteria ---------------------------------------------------------------------------
@dataclass
class IterationState:
    """What a stopping criterion may look at after PCG iteration ``iteration`` (1-based)."""

    iteration: int
    objective: float = math.nan
    grad_norm: float = math.nan             # preconditioned gradient norm sqrt(z'g) at the iterate
    decisions: Callable[[], np.ndarray] | None = None         # signs on the unlabeled nodes
    validation_errors: Callable[[], int] | None = None        # misclassified validation nodes


def default_check_every(n: int) -> int:
    """The paper's check period: ceil(sqrt(n) / 2) iterations for n training points."""
    return max(1, math.ceil(math.sqrt(n) / 2.0))


class StoppingCriterion:
    name = "criterion"

    def reset(self) -> None:
        pass

    def progress(self) -> dict:
        """Name -> (last value, tolerance) of what the criterion measures: an estimator's
        ``criteria_``, which its ConvergenceWarning reports (None: not measured yet)."""
        return {}

    def __call__(self, state: IterationState) -> bool:
        raise NotImplementedError


def _check_every(every):
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
        raise ConfigError(f"check_every must be an integer >= 1, got {every!r}")
    return int(every)


class StabilityCheck(StoppingCriterion):
    """Every ``every`` iterations compare the decisions on the unlabeled nodes with the previous
    check; stop when the fraction of changed decisions is <= ``tol`` (paper: 1.5%)."""

    name = "stability"

    def __init__(self, every: int, tol: float = 0.015):
        self.every = _check_every(every)
        if not 0 <= tol < 1:
            raise ConfigError(f"stability tolerance must be in [0, 1), got {tol!r}")
        self.tol = float(tol)
        self.reset()

    def reset(self):
        self._last = None
        self.last_changed = math.nan

    def check(self, state: IterationState) -> bool:
        dec = np.asarray(state.decisions())
        prev, self._last = self._last, dec.copy()
        if prev is None:
            return False
        self.last_changed = float(np.mean(prev != dec)) if dec.size else 0.0
        return self.last_changed <= self.tol

    def progress(self):
        return {"share of changed unlabeled decisions": (_measured(self.last_changed), self.tol)}

    def __call__(self, state):
        return state.iteration % self.every == 0 and self.check(state)


class ValidationCheck(StoppingCriterion):
    """Every ``every`` iterations count the validation errors; stop when they did not decrease by
    at least one example since the previous check (the paper's rule)."""

    name = "validation"

    def __init__(self, every: int):
        self.every = _check_every(every)
        self.reset()

    def reset(self):
        self._last = None
        self.last_errors = None

    def check(self, state: IterationState) -> bool:
        err = int(state.validation_errors())
        prev, self._last = self._last, err
        self.last_errors = err
        return prev is not None and err >= prev

    def progress(self):
        return {"validation errors": (self.last_errors, "stop when they stop decreasing")}

    def __call__(self, state):
        return state.iteration % self.every == 0 and self.check(state)


class MixedCheck(StoppingCriterion):
    """Stop at a check where both the stability and the validation conditions hold."""

    name = "mixed"

    def __init__(self, every: int, tol: float = 0.015):
        self.every = _check_every(every)
        self.stability = StabilityCheck(every, tol)
        self.validation = ValidationCheck(every)

    def reset(self):
        self.stability.reset()
        self.validation.reset()

    def __call__(self, state):
        if state.iteration % self.every:
            return False
        a = self.stability.check(state)   # both evaluated: each keeps its own previous check
        b = self.validation.check(state)
        return a and b

    def progress(self):
        return {**self.stability.progress(), **self.validation.progress()}


class GradientNormCheck(StoppingCriterion):
    """Stop when the preconditioned gradient norm falls below ``tol`` times its first value."""

    name = "gradient"

    def __init__(self, tol: float = 1e-3):
        if not tol > 0:
            raise ConfigError(f"gradient tolerance must be > 0, got {tol!r}")
        self.tol = float(tol)
        self.reset()

    def reset(self):
        self._first, self.last = None, math.nan

    def __call__(self, state):
        if self._first is None:
            self._first = state.grad_norm
            return state.grad_norm == 0
        self.last = state.grad_norm / self._first
        return state.grad_norm <= self.tol * self._first

    def progress(self):
        return {"relative gradient norm": (_measured(self.last), self.tol)}


class ObjectiveDecreaseCheck(StoppingCriterion):
    """Stop when the relative objective decrease between consecutive iterations is <= ``tol``."""

    name = "objective"

    def __init__(self, tol: float = 1e-4):
        if not tol > 0:
            raise ConfigError(f"objective tolerance must be > 0, got {tol!r}")
        self.tol = float(tol)
        self.reset()

    def reset(self):
        self._prev, self.last = None, math.nan

    def __call__(self, state):
        prev, self._prev = self._prev, state.objective
        if prev is None:
            return False
        scale = max(abs(prev), np.finfo(float).tiny)
        self.last = (prev - state.objective) / scale
        return (prev - state.objective) <= self.tol * scale

    def progress(self):
        return {"relative objective decrease": (_measured(self.last), self.tol)}


def _measured(value):
    """A criterion's last value, None before its first check (NaN)."""
    return None if value is None or math.isnan(value) else float(value)


STOPPING = ("stability", "validation", "mixed", "gradient", "objective", "none")


def make_criterion(kind: str, every: int, stability_tol: float = 0.015, tol: float = 1e-3):
    """The criterion named ``kind`` (one of STOPPING); "none" returns None (run to convergence)."""
    if kind == "stability":
        return StabilityCheck(every, stability_tol)
    if kind == "validation":
        return ValidationCheck(every)
    if kind == "mixed":
        return MixedCheck(every, stability_tol)
    if kind == "gradient":
        return GradientNormCheck(tol)
    if kind == "objective":
        return ObjectiveDecreaseCheck(tol)
    if kind == "none":
        return None
    raise ConfigError(f"stopping must be one of {list(STOPPING)}, got {kind!r}")
