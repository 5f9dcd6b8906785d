"""Declarative hyper-parameter validation: scikit-learn's ``_parameter_constraints``.

Every estimator declares ``_parameter_constraints = {name: [constraint, ...]}`` in scikit-learn's
vocabulary (``Interval``, ``StrOptions``, ``Options``, ``None``, ``"boolean"``,
``"random_state"``, a type) plus the constraints below, and :class:`ParamValidation` checks them
with scikit-learn's own validator (``sklearn.utils._param_validation``: private, but the one every
scikit-learn estimator uses since 1.2, and its messages name the class, the parameter, what is
allowed and what was given). Errors become :class:`gssl.errors.ConfigError`. Rules that tie two
parameters together go in ``_check_param_relations``.

The number constraints here refuse booleans (``True`` is an ``int`` to Python, and a YAML
``yes`` should never pass as a count) and NaN.
"""

from __future__ import annotations

from numbers import Integral
from numbers import Real as _RealType

import numpy as np
from sklearn.utils._param_validation import (Interval, InvalidParameterError, Options, StrOptions,
                                             validate_parameter_constraints)

from ..errors import ConfigError

__all__ = ["Check", "Int", "ParamValidation", "Real", "StrOptions", "nonnegative", "positive"]


class _NumberRange(Interval):
    """scikit-learn's Interval, refusing booleans."""

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


def Int(low: int | None = None, high: int | None = None) -> Interval:  # noqa: N802 (a constraint)
    """An integer in [low, high] (None: unbounded)."""
    return _NumberRange(Integral, low, high, closed="both")


def Real(low: float | None = None, high: float | None = None, *,  # noqa: N802 (a constraint)
         closed: str = "neither") -> Interval:
    """A real number (int or float, not bool, not NaN) in the interval; ``closed`` as in
    scikit-learn: "left", "right", "both" or "neither"."""
    return _NumberRange(_RealType, low, high, closed=closed)


positive = Real(0, None, closed="neither")
nonnegative = Real(0, None, closed="left")


class Check(Options):
    """A constraint given by a predicate and the words that describe it in error messages
    (for structured values such as a kernel spec or a list of class fractions).

    Subclasses scikit-learn's ``Options`` only because its validator accepts that family of
    constraint objects.
    """

    def __init__(self, predicate, description: str):
        super().__init__(object, set())
        self._predicate = predicate
        self._description = description

    def is_satisfied_by(self, val):
        try:
            return bool(self._predicate(val))
        except (TypeError, ValueError):
            return False

    def __str__(self):
        return self._description


class ParamValidation:
    """Mixin: ``_validate_params()`` checks ``_parameter_constraints`` then the relations."""

    _parameter_constraints: dict = {}

    def _validate_params(self) -> None:
        """Raise ConfigError naming the parameter, what it may be and what it is."""
        try:
            validate_parameter_constraints(self._parameter_constraints,
                                           self.get_params(deep=False),
                                           caller_name=type(self).__name__)
        except InvalidParameterError as exc:
            raise ConfigError(f"{exc} Fix it in the solver's params.") from None
        self._check_param_relations()

    def _check_param_relations(self) -> None:
        """Rules between parameters (raise ConfigError); none by default."""
        legacy = getattr(self, "check_params", None)  # transitional: estimators not yet declarative
        if legacy is not None:
            legacy()
