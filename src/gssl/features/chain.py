"""Preprocessing chains: a list of steps (:mod:`gssl.features.registry`) run in order.

A step is a bare name (``"standardize"``) or a one-key dict (``{"pca": {"n_components": 50}}``;
``{"normalize": "l2"}`` is short for ``{"normalize": {"norm": "l2"}}``). Steps run through
scikit-learn and are deterministic given ``random_state``. Sparse input (CSR) stays sparse where
the step keeps it sparse (each step's class says how).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..errors import ConfigError, DatasetError
from .registry import STEPS
from .step import step_error


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
            raise step_error(i, step, "a step is a name or a dict with exactly one key "
                                      f"(one of {sorted(STEPS)})")
        if name not in STEPS:
            raise step_error(i, step, f"unknown step {name!r}; allowed steps: {sorted(STEPS)}")
        cls = STEPS[name]
        if params is None:
            params = {}
        elif cls.shorthand and isinstance(params, str):
            params = {cls.shorthand: params}
        if not isinstance(params, dict):
            raise step_error(i, step, f"parameters of {name!r} must be a mapping, got {params!r}")
        bad = sorted(set(params) - set(cls.parameters()))
        if bad:
            raise step_error(i, step, f"unknown parameter(s) {bad} for {name!r}; "
                                      f"allowed: {list(cls.parameters())}")
        cls.check_params(i, step, params)
        out.append((name, dict(params)))
    return out


def chain_output_shape(steps, n: int, d: int | None, sparse: bool | None, n_exact: bool = True):
    """``(d, sparse)`` after the chain for ``n`` rows of ``d`` columns (see
    :meth:`Step.output_shape`); ConfigError, the features job's message, for the first step that
    would refuse these shapes. Stops where the width is no longer known (d None)."""
    for name, params in validate_chain(steps):
        if d is None:
            break
        d, sparse = STEPS[name](params).output_shape(n, d, sparse, n_exact)
    return d, sparse


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
        X = _as_float(STEPS[name](params).apply(X, seed))
    if sp.issparse(X):
        X.sort_indices()
    return X
