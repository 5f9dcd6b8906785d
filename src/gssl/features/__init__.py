"""Feature preprocessing: one class per step (:mod:`.registry`), chains of them, the features cache."""

from .cache import load_features, save_features
from .chain import apply_chain, chain_output_shape, check_finite, validate_chain
from .registry import STEPS, fill_step_schema
from .step import Step

__all__ = ["STEPS", "Step", "apply_chain", "chain_output_shape", "check_finite", "fill_step_schema",
           "load_features", "save_features", "validate_chain"]
