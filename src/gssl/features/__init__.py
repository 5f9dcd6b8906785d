"""Feature preprocessing chains (scikit-learn steps) and the HDF5 features cache.

A chain is a list of steps; each step is a bare name (``"standardize"``) or a one-key dict
(``{"pca": {"n_components": 50}}``; ``{"normalize": "l2"}`` is short for ``{"normalize": {"norm": "l2"}}``).
Steps run in order and are deterministic given ``random_state``. Each step is one class
(``steps.py``, on the base of ``step.py``): its parameters, their checks, the config schema's
entry and docs/configuration.md's rows, its output shape for ``gssl config check``, and its
transform are declared there once.

Sparse input (CSR) stays sparse where the scikit-learn step keeps it sparse:
``standardize`` only scales (``with_mean=False``; centring would densify), ``normalize`` and the
sparse random projection keep CSR. ``pca`` on sparse input runs scikit-learn's PCA with
``svd_solver="arpack"``, which centres implicitly (true PCA, dense output, no densified copy of X).
``minmax`` has no sparse form (the shift fills every zero), so it densifies X; the step says so
with a ``UserWarning``.
"""

from .cache import load_artifacts, load_features, loss_curves, save_features
from .chain import (STEPS, apply_chain, chain_modules, chain_output, check_finite, is_learned,
                    parse_chain, validate_chain)
from .step import STEP_CLASSES, Param, Shape, Step

__all__ = ["STEPS", "STEP_CLASSES", "Step", "Param", "Shape", "apply_chain", "chain_modules", "chain_output",
           "check_finite", "is_learned", "parse_chain", "validate_chain", "save_features", "load_features", "load_artifacts",
           "loss_curves",
           "step_schemas"]


def step_schemas() -> dict[str, dict]:
    """Each step's entry of the config schema's ``prep_step`` mapping, from its class."""
    return {name: cls.json_schema() for name, cls in STEP_CLASSES.classes.items()}
