"""Class-prior correction of class scores: labels whose class fractions match given priors.

Usable by every solver that outputs class scores: the graph-learning solvers take it as their
``class_priors`` parameter, any other classifier through the method-level ``class_priors`` key of a
config (applied to ``decision_function_`` after the fit). Rules: ``"uniform"``, ``"labeled"`` (the
class fractions of the labeled nodes: never the labels of the points that are scored) or a list of
C positive fractions (normalized to sum 1).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError, SolverError
from .params import Check

PRIOR_RULES = ("uniform", "labeled")


def _is_prior(priors) -> bool:
    """A rule of PRIOR_RULES or >= 2 positive finite class fractions (list, tuple or array)."""
    if isinstance(priors, str):
        return priors in PRIOR_RULES
    values = list(priors) if isinstance(priors, (list, tuple, np.ndarray)) else []
    return len(values) >= 2 and all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                                    and 0 < v < np.inf for v in values)


# the constraint of the solvers' ``class_priors`` parameter (add None where it is optional)
class_priors_spec = Check(_is_prior, f"one of {list(PRIOR_RULES)} or a list of >= 2 positive "
                                     f"class fractions")


def check_class_priors(owner: str, priors) -> None:
    """ConfigError unless ``priors`` is None, a rule or >= 2 positive numbers
    (the method-level ``class_priors`` key of a config; solvers declare ``class_priors_spec``)."""
    if priors is None:
        return
    if isinstance(priors, str) and priors not in PRIOR_RULES:
        raise ConfigError(f"{owner}: class_priors must be null, one of {list(PRIOR_RULES)} or a "
                          f"list of class fractions, got {priors!r}")
    if not _is_prior(priors):
        raise ConfigError(f"{owner}: class_priors must be one of {list(PRIOR_RULES)} or a list of "
                          f">= 2 positive class fractions, got {priors!r}")


def resolve_priors(priors, codes: np.ndarray, n_classes: int) -> np.ndarray | None:
    """The class fractions a rule names, normalized to sum 1 (None: no correction)."""
    if priors is None:
        return None
    if isinstance(priors, str) and priors == "uniform":
        p = np.ones(n_classes)
    elif isinstance(priors, str) and priors == "labeled":
        p = np.bincount(codes[codes >= 0], minlength=n_classes).astype(np.float64)
    else:
        p = np.asarray(priors, dtype=np.float64)
        if p.size != n_classes:
            raise ConfigError(f"class_priors lists {p.size} fractions but the problem has "
                              f"{n_classes} classes")
    return p / p.sum()


def prior_corrected_labels(estimator, priors, codes: np.ndarray, mask=None) -> tuple[np.ndarray, float]:
    """Labels of every node from a fitted classifier's class scores, the nodes in ``mask`` (all
    when None; e.g. leave out nodes a split does not use, whose scores may be placeholders)
    projected onto ``priors``, the others keeping the estimator's labels. Returns (labels in the
    estimator's classes, the remaining misfit of the projected nodes' class fractions)."""
    from ..optim.graph_learning import volume_label_projection  # numba: imported where it is used

    scores = getattr(estimator, "decision_function_", None)
    classes = getattr(estimator, "classes_", None)
    if scores is None or classes is None or np.ndim(scores) != 2 or scores.shape[1] != len(classes):
        raise SolverError(f"{type(estimator).__name__} has no per-class scores "
                          f"(decision_function_ of shape (n, C)) to correct with class_priors")
    codes = np.where(codes >= 0, np.searchsorted(classes, codes), -1)
    rows = np.ones(len(codes), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    labels = np.asarray(estimator.transduction_).copy()
    projected, _, misfit = volume_label_projection(np.asarray(scores)[rows],
                                                   resolve_priors(priors, codes, len(classes)))
    labels[rows] = classes[projected]
    return labels, misfit
