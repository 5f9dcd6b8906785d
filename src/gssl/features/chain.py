"""A preprocessing chain: validated from the config's spelling, applied in order, and its output
shape told before any job (``chain_output``)."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError, DatasetError
from . import learned, steps  # noqa: F401  (the modules that declare steps)
from .step import STEP_CLASSES, Shape, Step, step_error

# step name -> its parameter names
STEPS: dict[str, tuple[str, ...]] = {name: tuple(cls.params) for name, cls in STEP_CLASSES.classes.items()}


def parse_chain(steps) -> list[Step]:
    """The chain's steps, each checked; ConfigError names the bad step."""
    if steps is None:
        return []
    if isinstance(steps, (str, dict)):
        steps = [steps]
    if not isinstance(steps, (list, tuple)):
        raise ConfigError(f"preprocessing chain must be a list of steps, got {type(steps).__name__}")
    return [_parse_step(i, step) for i, step in enumerate(steps)]


def _parse_step(i: int, step) -> Step:
    if isinstance(step, str):
        name, params = step, {}
    elif isinstance(step, dict) and len(step) == 1:
        name, params = next(iter(step.items()))
    else:
        raise step_error(i, step, "a step is a name or a dict with exactly one key "
                                  f"(one of {sorted(STEPS)})")
    if name not in STEP_CLASSES.classes:
        raise step_error(i, step, f"unknown step {name!r}; allowed steps: {sorted(STEPS)}")
    cls = STEP_CLASSES.classes[name]
    if params is None:
        params = {}
    elif cls.shorthand and isinstance(params, str):
        params = {cls.shorthand: params}
    if not isinstance(params, dict):
        raise step_error(i, step, f"parameters of {name!r} must be a mapping, got {params!r}")
    bad = sorted(set(params) - set(cls.params))
    if bad:
        raise step_error(i, step, f"unknown parameter(s) {bad} for {name!r}; allowed: {list(cls.params)}")
    instance = cls(**params)
    problem = instance.check()
    if problem:
        raise step_error(i, step, problem)
    return instance


def validate_chain(steps) -> list[tuple[str, dict]]:
    """Check a chain and return it as ``[(name, params), ...]``; ConfigError names the bad step."""
    return [(s.name, dict(s.p)) for s in parse_chain(steps)]


def chain_output(steps, shape: Shape) -> Shape:
    """The features' shape after the chain, from what is known of its input; ConfigError with the
    message of the step its features job would refuse."""
    for step in parse_chain(steps):
        if shape.d is None:
            break
        shape = step.output(shape)
    return shape


def chain_modules(steps) -> list[str]:
    """The modules a chain's output depends on: the chain's machinery and its own steps' modules
    (a features job's code hash: editing the VAE's code reruns the chains that use it only)."""
    modules = {__name__, "gssl.features.step", "gssl.features.cache"}
    for step in parse_chain(steps):
        modules |= {type(step).__module__, *step.code_modules}
    return sorted(modules)


def is_learned(steps) -> bool:
    """Whether a chain has a step that keeps artifacts (a trained network and its losses)."""
    return any(step.keeps_artifacts for step in parse_chain(steps))


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
    # a RandomState or a legacy seed: rare, and scikit-learn is heavy to import
    from sklearn.utils import check_random_state

    return int(check_random_state(random_state).randint(2**31 - 1))


def _as_float(X):
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise DatasetError(f"features must be a 2-D array (n_samples, n_features), got shape {X.shape}")
    return X


def apply_chain(X, steps, random_state=0, artifacts: dict | None = None):
    """Run the preprocessing ``steps`` on X; returns float64 ndarray or CSR.

    Every randomized step (PCA's solver, random projections, a network's training) gets the same
    int seed derived from ``random_state``, so the output depends only on X, the steps and the
    seed. ``artifacts``: a dict that receives what a step keeps beside its output (a network's
    weights and loss per epoch) as ``"step<i>.<name>.<key>"`` -> array.
    """
    chain = parse_chain(steps)
    X = _as_float(X)
    check_finite(X)
    seed = _seed(random_state)
    for i, step in enumerate(chain):
        X = _as_float(step.apply(X, seed))
        if artifacts is not None:
            artifacts.update({f"step{i}.{step.name}.{k}": v
                              for k, v in getattr(step, "artifacts", {}).items()})
    if sp.issparse(X):
        X.sort_indices()
    return X
