"""FISTA with backtracking (Beck & Teboulle 2009) for min_x f(x) + g(x), f smooth, g prox-friendly.

Generic: the smooth part is given as a value callable and a gradient callable, the non-smooth
part as a prox callable ``prox(v, step) = argmin_x g(x) + ||x - v||^2 / (2 step)`` and, when the
objective is wanted (monotone variant, reporting), a value callable ``g``. Variables are numpy
arrays of any shape; inner products are Frobenius.

Also the two proxes the dictionary-learning solvers use: soft thresholding (prox of lam*||.||_1)
and the projection of the rows (or columns) of a matrix onto the l2 ball of radius ``radius``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import ConfigError


@dataclass
class FistaResult:
    x: np.ndarray
    n_iter: int
    converged: bool
    lipschitz: float            # last accepted backtracking constant (1/step); warm-start the next call
    objective: list = field(default_factory=list)   # f + g per iteration (only when g is given)


def soft_threshold(v: np.ndarray, t) -> np.ndarray:
    """Prox of t*||.||_1: sign(v) * max(|v| - t, 0) (``t`` scalar or broadcastable array)."""
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def l1_prox(lam: float) -> Callable:
    """prox(v, step) of lam*||x||_1."""
    return lambda v, step: soft_threshold(v, lam * step)


def project_l2_ball(M: np.ndarray, radius: float = 1.0, axis: int = 1) -> np.ndarray:
    """Project each slice along ``axis`` (axis=1: each row, axis=0: each column) onto ||.||_2 <= radius."""
    norms = np.linalg.norm(M, axis=axis, keepdims=True)
    scale = np.minimum(1.0, radius / np.maximum(norms, np.finfo(float).tiny))
    return M * scale


def fista(f: Callable, grad: Callable, prox: Callable, x0: np.ndarray, *, g: Callable | None = None,
          lipschitz: float = 1.0, eta: float = 2.0, max_iter: int = 100, tol: float = 1e-6,
          monotone: bool = False, backtracking: bool = True, stop: str = "step",
          output: str = "x", value_and_grad: Callable | None = None) -> FistaResult:
    """Minimize f(x) + g(x) from x0.

    f, grad: value and gradient of the smooth part. prox(v, step): prox of step*g.
    g: value of the non-smooth part (needed for ``monotone`` and for the objective trace).
    lipschitz: initial guess L (step 1/L); with ``backtracking`` it grows by ``eta`` until
    f(z) <= f(y) + <z - y, grad f(y)> + L/2 ||z - y||^2 (Algorithm 2 of Tran et al.; L is never
    decreased). Without backtracking ``lipschitz`` must be an upper bound of grad f's constant.
    monotone: MFISTA (Beck & Teboulle 2009b): the iterate never increases f + g.
    Stops when ||x_k - x_{k-1}|| <= tol * max(||x_{k-1}||, 1) or after max_iter iterations
    (``stop="step"``); ``stop="maxabs"``: when max |y_k - y_{k-1}| < tol for the extrapolated
    points y (the stopping rule of Tran et al.'s released code, github.com/ktran1/SSDL).
    output: "x" returns the last prox point x_k (default), "y" the last extrapolated point y_k
    (what that released code returns; Algorithm 2 of their paper calls it A_{n+1}); "y" needs
    monotone=False.
    value_and_grad: optional, y -> (f(y), grad(y)) in one call, for an f whose value and gradient
    share their costly product (a quadratic's A G); it must return what f and grad would.
    """
    if not (lipschitz > 0 and eta > 1 and max_iter >= 1):
        raise ConfigError(f"fista: need lipschitz > 0, eta > 1, max_iter >= 1 (got {lipschitz}, "
                          f"{eta}, {max_iter})")
    if monotone and g is None:
        raise ConfigError("fista: monotone=True needs the value callable g of the non-smooth part")
    if stop not in ("step", "maxabs") or output not in ("x", "y") or (output == "y" and monotone):
        raise ConfigError(f"fista: stop must be 'step' or 'maxabs', output 'x' or 'y' (not with "
                          f"monotone=True); got stop={stop!r}, output={output!r}")
    L = float(lipschitz)
    x = np.array(x0, dtype=np.float64, copy=True)
    y = x.copy()
    t = 1.0
    F_x = f(x) + g(x) if g is not None else None
    trace = []
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        fy, gy = value_and_grad(y) if value_and_grad is not None else (f(y), grad(y))
        fz = None  # f at the accepted z, kept from the backtracking test: f is the costly call
        while True:
            z = prox(y - gy / L, 1.0 / L)
            if not backtracking:
                break
            d = z - y
            fz = f(z)
            if fz <= fy + np.vdot(d, gy) + 0.5 * L * np.vdot(d, d) * (1 + 1e-12) + 1e-300:
                break
            L *= eta
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        y_prev = y
        if monotone:
            F_z = (f(z) if fz is None else fz) + g(z)
            x_new = z if F_z <= F_x else x
            F_new = min(F_z, F_x)
            y = x_new + (t / t_next) * (z - x_new) + ((t - 1.0) / t_next) * (x_new - x)
        else:
            x_new = z
            y = z + ((t - 1.0) / t_next) * (z - x)
            F_new = (f(z) if fz is None else fz) + g(z) if g is not None else None
        if stop == "maxabs":
            done = float(np.max(np.abs(y - y_prev))) < tol
        else:
            step = np.linalg.norm(x_new - x) if not monotone else np.linalg.norm(z - x)
            done = step <= tol * max(np.linalg.norm(x), 1.0)
        x, t, F_x = x_new, t_next, F_new
        if F_x is not None:
            trace.append(float(F_x))
        if done:
            converged = True
            break
    return FistaResult(x=y if output == "y" else x, n_iter=n_iter, converged=converged,
                       lipschitz=L, objective=trace)
