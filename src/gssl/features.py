"""Feature preprocessing chains (scikit-learn steps) and the HDF5 features cache.

A chain is a list of steps; each step is a bare name (``"standardize"``) or a one-key dict
(``{"pca": {"n_components": 50}}``; ``{"normalize": "l2"}`` is short for ``{"normalize": {"norm": "l2"}}``).
Steps run in order through scikit-learn and are deterministic given ``random_state``.

Sparse input (CSR) stays sparse where the scikit-learn step keeps it sparse:
``standardize`` only scales (``with_mean=False``; centring would densify), ``normalize`` and the
sparse random projection keep CSR. ``pca`` on sparse input runs scikit-learn's PCA with
``svd_solver="arpack"``, which centres implicitly (true PCA, dense output, no densified copy of X).
``minmax`` has no sparse form (the shift fills every zero), so it densifies X; the step says so
with a ``UserWarning``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.decomposition import PCA
from sklearn.preprocessing import MinMaxScaler, StandardScaler, normalize
from sklearn.random_projection import GaussianRandomProjection, SparseRandomProjection
from sklearn.utils import check_random_state

from .errors import CacheError, ConfigError, DatasetError
from .store.h5io import read_h5, write_h5

# step name -> allowed parameter names
STEPS: dict[str, tuple[str, ...]] = {
    "standardize": ("with_mean", "with_std"),
    "minmax": ("feature_range",),
    "normalize": ("norm", "scale"),
    "pca": ("n_components", "whiten"),
    "random_projection": ("kind", "n_components", "density", "eps"),
}
_NORMS = ("l1", "l2", "max")
_RP_KINDS = ("gaussian", "sparse")


def _step_error(i: int, step, what: str) -> ConfigError:
    return ConfigError(f"preprocessing step {i} ({step!r}): {what}")


def validate_chain(steps) -> list[tuple[str, dict]]:
    """Check a chain and return it as ``[(name, params), ...]``; ConfigError names the bad step."""
    if steps is None:
        return []
    if isinstance(steps, (str, dict)):
        steps = [steps]
    if not isinstance(steps, (list, tuple)):
        raise ConfigError(f"preprocessing chain must be a list of steps, got {type(steps).__name__}")
    out = []
    for i, step in enumerate(steps):
        if isinstance(step, str):
            name, params = step, {}
        elif isinstance(step, dict) and len(step) == 1:
            name, params = next(iter(step.items()))
        else:
            raise _step_error(i, step, "a step is a name or a dict with exactly one key "
                                       f"(one of {sorted(STEPS)})")
        if name not in STEPS:
            raise _step_error(i, step, f"unknown step {name!r}; allowed steps: {sorted(STEPS)}")
        if params is None:
            params = {}
        elif name == "normalize" and isinstance(params, str):
            params = {"norm": params}
        if not isinstance(params, dict):
            raise _step_error(i, step, f"parameters of {name!r} must be a mapping, got {params!r}")
        bad = sorted(set(params) - set(STEPS[name]))
        if bad:
            raise _step_error(i, step, f"unknown parameter(s) {bad} for {name!r}; "
                                       f"allowed: {list(STEPS[name])}")
        _check_step_values(i, step, name, params)
        out.append((name, dict(params)))
    return out


def _check_step_values(i, step, name: str, p: dict) -> None:
    def positive_int(key, allow=()):
        v = p.get(key)
        if v in allow:
            return
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise _step_error(i, step, f"{key} must be a positive integer, got {v!r}")

    if name == "normalize":
        if p.get("norm", "l2") not in _NORMS:
            raise _step_error(i, step, f"norm must be one of {list(_NORMS)}, got {p['norm']!r}")
        scale = p.get("scale", 1.0)
        if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not scale > 0:
            raise _step_error(i, step, f"scale must be a positive number, got {scale!r}")
    elif name == "pca":
        if "n_components" not in p:
            raise _step_error(i, step, "pca needs n_components (an integer >= 1)")
        positive_int("n_components")
    elif name == "random_projection":
        if p.get("kind", "gaussian") not in _RP_KINDS:
            raise _step_error(i, step, f"kind must be one of {list(_RP_KINDS)}, got {p['kind']!r}")
        if "n_components" not in p:
            raise _step_error(i, step, "random_projection needs n_components (an integer or 'auto')")
        positive_int("n_components", allow=("auto",))
    elif name == "minmax":
        fr = p.get("feature_range", (0, 1))
        if not (isinstance(fr, (list, tuple)) and len(fr) == 2 and fr[0] < fr[1]):
            raise _step_error(i, step, f"feature_range must be [low, high] with low < high, got {fr!r}")


def check_finite(X, what: str = "X") -> None:
    """DatasetError if X holds NaN or inf (dense or sparse)."""
    values = X.data if sp.issparse(X) else np.asarray(X)
    bad = int(values.size - np.count_nonzero(np.isfinite(values)))
    if bad:
        raise DatasetError(f"{what} holds {bad} NaN/inf value(s); impute or drop them before "
                           "preprocessing (e.g. sklearn.impute.SimpleImputer) or fix the parser")


def _seed(random_state) -> int:
    """One int seed for every randomized step, so a Generator/RandomState is consumed once."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**31 - 1))
    if random_state is None or isinstance(random_state, numbers.Integral):
        return int(random_state or 0)
    return int(check_random_state(random_state).randint(2**31 - 1))


def _as_float(X):
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise DatasetError(f"features must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    return X


def _apply_step(X, name: str, p: dict, seed: int):
    sparse = sp.issparse(X)
    if name == "standardize":
        with_mean = p.get("with_mean", not sparse)
        if with_mean and sparse:
            raise ConfigError("standardize with_mean=true would densify sparse features; "
                              "drop with_mean (sparse input is scaled only) or densify upstream")
        return StandardScaler(with_mean=with_mean, with_std=p.get("with_std", True)).fit_transform(X)
    if name == "minmax":
        if sparse:
            warnings.warn("minmax densifies sparse features (the shift fills every zero)",
                          UserWarning, stacklevel=3)
            X = X.toarray()
        return MinMaxScaler(feature_range=tuple(p.get("feature_range", (0, 1)))).fit_transform(X)
    if name == "normalize":
        Xn = normalize(X, norm=p.get("norm", "l2"))
        return Xn * float(p.get("scale", 1.0))
    if name == "pca":
        k = int(p["n_components"])
        limit = min(X.shape) - (1 if sparse else 0)  # arpack needs k < min(n, d)
        if k > limit:
            raise ConfigError(f"pca n_components={k} exceeds the maximum {limit} for features of "
                              f"shape {X.shape}; lower n_components")
        solver = "arpack" if sparse else "auto"
        return PCA(n_components=k, whiten=bool(p.get("whiten", False)), svd_solver=solver,
                   random_state=seed).fit_transform(X)
    if name == "random_projection":
        k = p["n_components"]
        if k != "auto" and int(k) > X.shape[1]:  # scikit-learn only warns: it adds no information
            raise ConfigError(f"random_projection n_components={k} exceeds the {X.shape[1]} features "
                              "it projects; give at most that many components, or drop the step")
        kw = {"n_components": k, "random_state": seed}
        if "eps" in p:
            kw["eps"] = p["eps"]
        if p.get("kind", "gaussian") == "gaussian":
            return GaussianRandomProjection(**kw).fit_transform(X)
        return SparseRandomProjection(density=p.get("density", "auto"), **kw).fit_transform(X)
    raise AssertionError(name)  # validate_chain rejects unknown names


def apply_chain(X, steps, random_state=0):
    """Run the preprocessing ``steps`` on X; returns float64 ndarray or CSR.

    Every randomized step (PCA's solver, random projections) gets the same int seed derived from
    ``random_state``, so the output depends only on X, the steps and the seed.
    """
    chain = validate_chain(steps)
    X = _as_float(X)
    check_finite(X)
    seed = _seed(random_state)
    for name, params in chain:
        X = _as_float(_apply_step(X, name, params, seed))
    if sp.issparse(X):
        X.sort_indices()
    return X


def save_features(path, X, y, params: dict, inputs: dict | None = None,
                  build_seconds: float | None = None) -> None:
    """Write a features file (h5io kind "features") with arrays X (dense or CSR) and y. A graph-only
    dataset (X None: e.g. the 20NEWS graph) stores an n x 0 X, read back as None."""
    y = np.asarray(y)
    if X is None:
        X = np.zeros((y.shape[0], 0))
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise DatasetError(f"y must be 1-D with one label per row of X ({X.shape[0]}), got {y.shape}")
    write_h5(path, "features", {"X": X, "y": y}, params, inputs=inputs, build_seconds=build_seconds,
             extra_attrs={"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
                          "sparse": bool(sp.issparse(X))})


def load_features(path, expect_params: dict | None = None, rule: str | None = None):
    """Read a features file; returns (X, y). CacheError names the file and the fix."""
    arrays, _ = read_h5(path, "features", expect_params=expect_params, required=("X", "y"), rule=rule)
    X, y = arrays["X"], np.asarray(arrays["y"])
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        fix = f"delete it (rm {path})" + (f" or snakemake --forcerun {rule}" if rule else "")
        raise CacheError(f"{path}: inconsistent features file (X {X.shape}, y {y.shape}): {fix}")
    return (None if X.shape[1] == 0 else X), y
