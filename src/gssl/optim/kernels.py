"""Kernel matrices for the RKHS methods (dense output; X and Y may be sparse).

The rbf width defaults to the median heuristic (``sigma: median``): the median Euclidean distance
between the kernel's expansion points (``Y``, or ``X`` when ``Y`` is not given), over a seeded
sample of at most 1,000 of them. It follows the data's scale, so a kernel method's defaults work on
pixels in 0..255 as on l2-normalised features; fit (k(X, X)) and out-of-sample prediction
(k(X_new, X)) get the same width because both take it from the same expansion points.
"""

from __future__ import annotations

import contextlib
import contextvars
import numbers

import numpy as np

from ..errors import ConfigError

_DEFAULTS = {
    "rbf": {"sigma": "median"},
    "linear": {},
    "polynomial": {"degree": 3, "coef0": 1.0, "gamma": 1.0},
}


def validate_kernel(spec: dict | str) -> dict:
    """Check a kernel spec; return it with defaults filled in. A bare kind (``"rbf"``) stands for
    that kind with its defaults. Raises ConfigError."""
    if isinstance(spec, str) and spec in _DEFAULTS:
        spec = {"kind": spec}
    if not isinstance(spec, dict) or spec.get("kind") not in _DEFAULTS:
        raise ConfigError(f"kernel must be one of {sorted(_DEFAULTS)} or a mapping with 'kind' in "
                          f"them (e.g. {{'kind': 'rbf', 'sigma': 2.0}}), got {spec!r}")
    kind = spec["kind"]
    unknown = sorted(set(spec) - set(_DEFAULTS[kind]) - {"kind"})
    if unknown:
        raise ConfigError(f"kernel {kind!r}: unknown keys {unknown}; allowed: "
                          f"{sorted(_DEFAULTS[kind])}")
    out = {"kind": kind, **_DEFAULTS[kind], **spec}
    for key in ("sigma", "gamma"):
        v = out.get(key)
        if key == "sigma" and v in SIGMA_RULES:
            continue
        if key in out and (isinstance(v, bool) or not isinstance(v, numbers.Real) or v <= 0):
            rules = f" or one of {list(SIGMA_RULES)}" if key == "sigma" else ""
            raise ConfigError(f"kernel {kind!r}: {key!r} must be a positive number{rules}, got {v!r}")
    if kind == "polynomial":
        d = out["degree"]
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
            raise ConfigError(f"kernel 'polynomial': 'degree' must be an integer >= 1, got {d!r}")
        if isinstance(out["coef0"], bool) or not isinstance(out["coef0"], numbers.Real):
            raise ConfigError(f"kernel 'polynomial': 'coef0' must be a number, "
                              f"got {out['coef0']!r}")
    return out


def kernel_matrix(X, Y=None, spec: dict | None = None) -> np.ndarray:
    """K[i, j] = k(X[i], Y[j]) (Y defaults to X).

    rbf: exp(-|x - y|^2 / (2 sigma^2)); linear: <x, y>; polynomial: (gamma <x, y> + coef0)^degree.
    ``kernel_matrix(X, spec)`` is accepted too (a dict in place of Y is taken as the spec).
    """
    if isinstance(Y, dict) and spec is None:
        Y, spec = None, Y
    if spec is None:
        raise ConfigError("kernel_matrix needs a kernel spec, e.g. {'kind': 'rbf', 'sigma': 1.0}")
    spec = validate_kernel(spec)
    shared = _SHARED.get()
    shared = shared if shared is not None and Y is None and X is shared[0] else None
    key = tuple(sorted(spec.items()))
    if shared is not None and key in shared[1]:
        return shared[1][key]
    K = _compute(X, Y, spec)
    if shared is not None:
        K.setflags(write=False)  # shared by every fit in the block: a solver must copy to modify
        shared[1].clear()  # one n x n matrix at a time: a grid over sigma must not hold them all
        shared[1][key] = K
    return K


SIGMA_RULES = ("median",)  # data-driven rbf widths (see the module docstring)
MEDIAN_SAMPLE = 1000


def median_distance(X, max_points: int = MEDIAN_SAMPLE, random_state: int = 0) -> float:
    """Median Euclidean distance between distinct rows of ``X`` (dense or sparse), over a seeded
    sample of at most ``max_points`` rows (all pairs of the sample). Raises ConfigError when it is
    zero (fewer than two distinct points)."""
    from sklearn.metrics.pairwise import euclidean_distances

    n = X.shape[0]
    if n > max_points:
        rows = np.sort(np.random.default_rng(random_state).choice(n, max_points, replace=False))
        X = X[rows]
    D = euclidean_distances(X)
    d = D[np.triu_indices(D.shape[0], k=1)]
    med = float(np.median(d)) if d.size else 0.0
    if not med > 0:
        raise ConfigError(f"the median heuristic for the rbf width needs two distinct points; the "
                          f"median distance of these {D.shape[0]} is {med}: give kernel.sigma a number")
    return med


def resolve_sigma(spec: dict, points) -> dict:
    """The spec with a data-driven ``sigma`` replaced by its value on ``points`` (a copy)."""
    spec = validate_kernel(spec)
    if spec["kind"] == "rbf" and spec["sigma"] == "median":
        spec["sigma"] = median_distance(points)
    return spec


_SHARED = contextvars.ContextVar("gssl_shared_kernels", default=None)  # (X, {spec key: K})


@contextlib.contextmanager
def shared_kernels(X):
    """Inside the block, ``kernel_matrix(X, None, spec)`` for this very ``X`` is computed once per
    spec and shared (read-only) by every caller: the splits of a cell fit on the same nodes. The
    last spec's matrix is kept (one at a time); a nested block for the same X reuses the outer one."""
    current = _SHARED.get()
    if current is not None and current[0] is X:
        yield
        return
    token = _SHARED.set((X, {}))
    try:
        yield
    finally:
        _SHARED.reset(token)


def _compute(X, Y, spec: dict) -> np.ndarray:
    # imported here: every solver's parameter check imports this module (validate_kernel), at
    # planning too, where sklearn.metrics would cost a tenth of a second for nothing
    from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

    if spec["kind"] == "rbf":
        spec = resolve_sigma(spec, X if Y is None else Y)  # the expansion points' scale
        K = rbf_kernel(X, Y, gamma=1.0 / (2.0 * float(spec["sigma"]) ** 2))
    elif spec["kind"] == "linear":
        K = linear_kernel(X, Y, dense_output=True)
    else:
        K = polynomial_kernel(X, Y, degree=int(spec["degree"]), gamma=float(spec["gamma"]),
                              coef0=float(spec["coef0"]))
    return np.asarray(K, dtype=np.float64)
