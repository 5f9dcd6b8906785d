"""Declarative hyper-parameter validation: scikit-learn's ``_parameter_constraints``.

Every estimator declares ``_parameter_constraints = {name: [constraint, ...]}`` in scikit-learn's
vocabulary (``Interval``, ``StrOptions``, ``Options``, ``None``, ``"boolean"``,
``"random_state"``, a type) plus the constraints below, and :class:`ParamValidation` checks them
with scikit-learn's own validator (``sklearn.utils._param_validation``: private, but the one every
scikit-learn estimator uses since 1.2, and its messages name the class, the parameter, what is
allowed and what was given). Errors become :class:`gssl.errors.ConfigError`. Rules that tie two
parameters together go in ``_check_param_relations``.

The number constraints here refuse booleans (``True`` is an ``int`` to Python, and a YAML
``yes`` should never pass as a count) and NaN; ``StrOptions`` lists its options in a fixed order
in messages; a ``Check`` whose predicate raises adds that error's text as the message's reason.
"""

from __future__ import annotations

from numbers import Integral
from numbers import Real as _RealType

import numpy as np
from sklearn.utils._param_validation import (Interval, InvalidParameterError, Options,
                                             make_constraint, validate_parameter_constraints)
from sklearn.utils._param_validation import StrOptions as _StrOptions

from ..errors import ConfigError
from ..optim.kernels import validate_kernel

__all__ = ["DEFAULT_KERNEL", "Check", "Int", "ParamValidation", "Real", "StrOptions", "kernel_spec",
           "nonnegative", "positive"]


class _NumberRange(Interval):
    """scikit-learn's Interval, refusing booleans."""

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


def Int(low: int | None = None, high: int | None = None) -> Interval:  # noqa: N802 (a constraint)
    """An integer in [low, high] (None: unbounded)."""
    # scikit-learn refuses a closed end at None (infinity)
    closed = {(True, True): "both", (True, False): "left", (False, True): "right",
              (False, False): "neither"}[low is not None, high is not None]
    return _NumberRange(Integral, low, high, closed=closed)


def Real(low: float | None = None, high: float | None = None, *,  # noqa: N802 (a constraint)
         closed: str = "neither") -> Interval:
    """A real number (int or float, not bool, not NaN) in the interval; ``closed`` as in
    scikit-learn: "left", "right", "both" or "neither"."""
    return _NumberRange(_RealType, low, high, closed=closed)


class StrOptions(_StrOptions):
    """scikit-learn's StrOptions, also from a tuple or list, whose messages list the options in
    a fixed order (the given one; sorted for a set) rather than the set's per-process order."""

    def __init__(self, options, *, deprecated=None):
        self._display = sorted(options) if isinstance(options, (set, frozenset)) else list(options)
        super().__init__(set(options), deprecated=deprecated)

    def __str__(self):
        return f"a str among {{{', '.join(self._mark_if_deprecated(o) for o in self._display)}}}"


positive = Real(0, None, closed="neither")
nonnegative = Real(0, None, closed="left")


class Check(Options):
    """A constraint given by a predicate and the words that describe it in error messages
    (for structured values such as a kernel spec or a list of class fractions).

    The predicate returns a truth value or raises ``ValueError``/``TypeError`` (e.g. a
    ``ConfigError`` of an existing validator); the message of such an error says what exactly is
    wrong with a structured value, and ``ParamValidation`` appends it to its own.

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

    def reason(self, val) -> str | None:
        """The predicate's own error message for ``val``, if it raised one."""
        try:
            self._predicate(val)
        except (TypeError, ValueError) as exc:
            return str(exc)
        return None

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
            raise ConfigError(f"{exc}{self._failure_reason()} Fix it in the solver's "
                              f"params.") from None
        self._check_param_relations()

    def _failure_reason(self) -> str:
        """' Reason: <why>' from a Check's predicate for the first parameter that fails every
        constraint (scikit-learn's message states only what is allowed), else ''."""
        for name, val in self.get_params(deep=False).items():
            constraints = self._parameter_constraints.get(name)
            if not isinstance(constraints, list):
                continue
            if any(make_constraint(c).is_satisfied_by(val) for c in constraints):
                continue
            reasons = [c.reason(val) for c in constraints if isinstance(c, Check)]
            reasons = [r for r in reasons if r]
            return f" Reason: {reasons[0].rstrip('.')}." if reasons else ""
        return ""

    def _check_param_relations(self) -> None:
        """Rules between parameters (raise ConfigError); none by default."""


# -- the kernel methods' shared ``kernel`` parameter --------------------------------------------
# the rbf kernel with the median heuristic width; a str, immutable: a dict default would be one
# object shared by every instance, so that est.kernel["sigma"] = 5 changed every other default
DEFAULT_KERNEL = "rbf"

# the one constraint of every kernel method's ``kernel`` parameter; validate_kernel's ConfigError
# (unknown key, bad width, ...) becomes the "Reason:" of the message
kernel_spec = Check(validate_kernel,
                    "a kernel: 'rbf', 'linear', 'polynomial' or a mapping with 'kind' among them "
                    "and that kind's keys (rbf: sigma > 0 or 'median'; polynomial: degree >= 1, "
                    "gamma > 0, coef0)")
