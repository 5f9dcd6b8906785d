"""A preprocessing step: one class declares its name, parameters, output shape and how it runs.

``_parameter_constraints`` is scikit-learn's vocabulary (as in :mod:`gssl.solvers.params`): its
keys are the parameters a step takes, in the order its messages list them; ``required`` names the
ones without a default (and what they take); ``defaults`` the documented defaults. The config
schema's bounds, enums and defaults of a step are read from here (:func:`gssl.features.registry.fill_step_schema`).
"""

from __future__ import annotations

from numbers import Integral

from ..errors import ConfigError
from ..solvers.params import StrOptions

_MISSING = object()
NO_CHECK = "no_validation"  # scikit-learn's word for a parameter taken as given


def step_error(i: int, step, what: str) -> ConfigError:
    """The error of step ``i`` of a chain, naming it as written."""
    return ConfigError(f"preprocessing step {i} ({step!r}): {what}")


def words(constraint) -> str:
    """What a constraint allows, as the step's messages say it."""
    if isinstance(constraint, StrOptions):
        return f"one of {sorted(constraint.options)}"
    if hasattr(constraint, "left") and constraint.right is None:  # an Int or Real interval
        if constraint.type is Integral and constraint.left == 1:
            return "a positive integer"
        if constraint.left == 0 and constraint.closed == "neither":
            return "a positive number"
    return str(constraint)


class Step:
    """Base of the preprocessing steps. A subclass sets ``name``, ``_parameter_constraints``
    (and ``required``, ``defaults``, ``shorthand`` where it has them) and implements
    :meth:`output_shape` and :meth:`apply`; :data:`gssl.features.registry.STEPS` lists it."""

    name: str = ""
    _parameter_constraints: dict = {}
    required: dict[str, str] = {}  # parameter -> what it takes, for "needs ..." messages
    defaults: dict = {}
    shorthand: str | None = None  # {step: value} short for {step: {shorthand: value}}

    @classmethod
    def parameters(cls) -> tuple[str, ...]:
        return tuple(cls._parameter_constraints)

    @classmethod
    def check_params(cls, i: int, step, p: dict) -> None:
        """ConfigError (naming step ``i``) for a missing required parameter or a value outside
        its constraints; parameters are checked in their declared order."""
        for key, constraints in cls._parameter_constraints.items():
            value = p.get(key, cls.defaults.get(key, _MISSING))
            if value is _MISSING:
                if key in cls.required:
                    raise step_error(i, step, f"{cls.name} needs {key} ({cls.required[key]})")
                continue
            if constraints == NO_CHECK:
                continue
            if not any(c.is_satisfied_by(value) for c in constraints):
                raise step_error(i, step, f"{key} must be {words(constraints[0])}, got {value!r}")

    def __init__(self, params: dict):
        self.params = params

    def output_shape(self, n: int, d: int, sparse: bool | None, n_exact: bool = True):
        """``(d, sparse)`` of the features after this step, for ``n`` rows (exactly, or at most
        where not ``n_exact``) of ``d`` columns (``sparse`` None: dense or CSR); d None: unknown.
        ConfigError with the features job's message where the step would refuse that shape."""
        return d, sparse

    def apply(self, X, seed: int):
        """The step's output for float64 X (dense or CSR); ``seed`` seeds a randomized step."""
        raise NotImplementedError


def schema_constraints(constraints) -> dict:
    """The JSON-schema keywords of a parameter's constraints (enum, bounds)."""
    if constraints == NO_CHECK:
        return {}
    first = constraints[0]
    if isinstance(first, StrOptions):
        return {"enum": sorted(first.options)}
    if hasattr(first, "left") and first.left is not None:
        return {"minimum" if first.closed in ("left", "both") else "exclusiveMinimum": first.left}
    return {}
