"""The checks and conversions at a fit's edges: the labels it takes (``check_labels``), the scores
its ``_fit`` returns (``checked_scores``, ``nonfinite_scores``), its convergence warning, the
features a method needs, and the one-vs-all coding of the kernel methods' targets and scores."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..errors import SolverError


def checked_scores(est, scores, n: int, n_classes: int) -> np.ndarray:
    """_fit's scores as float64, or a SolverError naming the shape they must have (a plugin's
    1-D or transposed scores would otherwise fail later, in an arg-max, without its name)."""
    try:
        out = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise SolverError(f"{type(est).__name__}._fit returned scores that are not a numeric array "
                          f"({exc}); return an (n, C) array of class scores") from None
    if out.shape != (n, n_classes):
        raise SolverError(f"{type(est).__name__}._fit returned scores of shape {out.shape}; return "
                          f"an (n, C) array: one row per graph node (n = {n}), one column per "
                          f"class (C = {n_classes})")
    problem = nonfinite_scores(f"solver {solver_name(type(est))!r}", out)
    if problem:  # arg-max of NaN is class 0: predict() would look like an answer
        raise SolverError(problem + solvers_check_hint(solver_name(type(est))))
    return out


def nonfinite_scores(name: str, scores) -> str | None:
    """The one message for class scores that are not all finite (fit, a workflow job and `gssl
    solvers check` give it), after ``name``; None when they are finite."""
    scores = np.asarray(scores)
    bad = ~np.isfinite(scores)
    if not bad.any():
        return None
    rows = np.flatnonzero(bad.any(axis=tuple(range(1, scores.ndim))))
    return (f"{name}: decision_function_ holds NaN or infinite scores (in {rows.size} of "
            f"{scores.shape[0]} nodes' rows, the first node {int(rows[0])})")


def solvers_check_hint(solver: str) -> str:
    """The fix a solver's failed fit names: the contract check that shows what it breaks."""
    return f"; run `gssl solvers check {solver}` to see what its fit breaks"


def solver_name(cls) -> str:
    """What a config's ``solver:`` gives for a class: gssl's registered name (its
    ``__gssl_tags__``), else its import path ``module:Class``."""
    tags = cls.__dict__.get("__gssl_tags__")
    return tags["name"] if isinstance(tags, dict) and "name" in tags else f"{cls.__module__}:{cls.__qualname__}"


def warn_not_converged(est) -> None:
    """scikit-learn's ``ConvergenceWarning`` for a fit that stopped on its limit without meeting
    its criterion (``converged_`` False): names the solver, how it stopped, each criterion's last
    value beside its tolerance (``criteria_``; without it, the last ``history_`` record's values)
    and the parameter to change. Every solver's warning comes from here, the clustering and MTV
    estimators' too; the caller's line is the one named."""
    criteria = getattr(est, "criteria_", None) or {}
    if criteria:
        values = ", ".join(f"{name} = {_value(v)} ({_tolerance(t)})"
                           for name, (v, t) in criteria.items())
    else:
        last = (getattr(est, "history_", None) or [{}])[-1]
        values = ", ".join(f"{k} = {v:.3g}" for k, v in last.items() if k not in ("iteration", "objective")
                           and isinstance(v, (int, float)) and not isinstance(v, bool))
    n_iter = getattr(est, "n_iter_", 0)
    where = f" after {n_iter} iterations" if n_iter else ""
    knob = " Increase max_iter (or loosen the tolerance);" if "max_iter" in est.get_params(deep=False) else ""
    warnings.warn(f"{type(est).__name__} did not converge{where} (stop: {est.stop_reason_})"
                  + (f": {values}" if values else "") + f".{knob} the results are the last "
                  "iterate's.", ConvergenceWarning, stacklevel=_outside_package_level())


def _value(v) -> str:
    """A criterion's last value in the warning: 3 significant digits (None: not known, e.g.
    kept to itself by scikit-learn or not measured yet)."""
    if v is None:
        return "unknown"
    return f"{v:.3g}" if isinstance(v, (float, np.floating)) else str(v)


def _tolerance(t) -> str:
    """A criterion's tolerance in the warning: a number, or the rule in words."""
    return f"tol {t:.3g}" if isinstance(t, (int, float, np.number)) else str(t)


def _outside_package_level() -> int:
    """``warnings.warn``'s stacklevel, called from a function, that names the first frame
    outside the gssl package (the caller's ``fit``, whichever subclass fit passed through)."""
    import os
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    level, frame = 2, sys._getframe(2)           # level 1: the function that calls warn
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def check_labels(graph, y, n_classes: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return (classes_, codes) with codes in 0..C-1 for labeled nodes and -1 elsewhere.

    With ``n_classes`` the classes are 0..n_classes-1 and each needs a labeled node; without it
    the classes are the distinct labeled values. Raises SolverError.
    """
    y = np.asarray(y)
    n = graph.n_nodes
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise SolverError(f"y has {int(np.isnan(y).sum())} NaN entries; mark unlabeled nodes with -1 "
                          f"(as scikit-learn's semi_supervised does), e.g. np.where(np.isnan(y), -1, y)")
    if y.ndim != 1 or y.size != n:
        raise SolverError(f"y must be a 1-D array with one entry per graph node ({n}), got shape "
                          f"{y.shape}")
    if y.dtype.kind not in "iu" and not (y.dtype.kind == "f" and np.all(y == np.round(y))):
        raise SolverError(f"y must hold integer class labels (-1 = unlabeled), got dtype {y.dtype}")
    if y.dtype.kind == "u" and y.size and y.max() == np.iinfo(y.dtype).max:
        raise SolverError(f"y is unsigned ({y.dtype}) and holds {y.max()}, which is what -1 becomes "
                          f"there: give y a signed dtype, e.g. y.astype(np.int64), with -1 for "
                          f"unlabeled nodes")
    if n_classes is not None and (isinstance(n_classes, bool) or not isinstance(n_classes, Integral)
                                  or n_classes < 2):
        raise SolverError(f"n_classes must be an integer >= 2 (the number of classes), got "
                          f"{n_classes!r}")
    y = y.astype(np.int64)
    labeled = y != -1
    if n_classes is None:
        if (y[labeled] < 0).any():
            raise SolverError("labels must be >= 0 (-1 marks unlabeled nodes)")
        classes = np.unique(y[labeled])
    else:
        classes = np.arange(int(n_classes))
        bad = labeled & ((y < 0) | (y >= n_classes))
        if bad.any():
            raise SolverError(f"label {y[bad][0]} is outside 0..{n_classes - 1} (n_classes="
                              f"{n_classes}); -1 marks unlabeled nodes")
        missing = np.setdiff1d(classes, y[labeled])
        if missing.size:
            raise SolverError(
                f"class {missing[0]} has no labeled node ({missing.size} of {n_classes} classes "
                f"have none: {missing.tolist()}); use a split protocol that labels every class "
                f"(e.g. labels_per_class or stratified melacci_cv) or drop the class with "
                f"gssl.datasets.select")
    if classes.size < 2:
        raise SolverError(f"need labeled nodes of at least 2 classes, got {classes.size} "
                          f"({int(labeled.sum())} labeled nodes)")
    codes = np.full(n, -1, dtype=np.int64)
    codes[labeled] = np.searchsorted(classes, y[labeled])
    return classes, codes


FEATURES_FIX = ("pass the features with the graph: gssl.build_graph(X, W=W) keeps your W and adds "
                "X as graph.X, fit(X, y, graph={'k': 10}) builds a kNN graph from X; without "
                "features, use a graph-only method (laplace, poisson, ...)")


def require_features(graph, solver: str, fix: str = FEATURES_FIX):
    """graph.X, or a SolverError that says ``solver`` needs it and how to ``fix`` that."""
    if graph.X is None:
        raise SolverError(f"{solver} needs node features (graph.X), but this graph has none (a bare "
                          f"weight matrix or a graph-only dataset): {fix}")
    return graph.X


def normalized_scores(scores, rule: str = "scores") -> np.ndarray:
    """Rows of class scores as non-negative rows that sum to one (the rules of
    :meth:`SemiSupervisedClassifier.predict_proba`); rows without information become uniform."""
    S = np.asarray(scores, dtype=np.float64)
    if rule == "ova":
        P = np.clip((1.0 + S) / 2.0, 0.0, 1.0)
    elif rule == "scores":
        P = S - np.minimum(S.min(axis=1, keepdims=True), 0.0)
    else:
        raise SolverError(f"unknown probability rule {rule!r}; known: 'scores', 'ova'")
    total = P.sum(axis=1, keepdims=True)
    flat = total == 0  # every score at the row's floor: no class is preferred
    P = np.divide(P, total, out=np.zeros_like(P), where=~flat)
    P[flat[:, 0]] = 1.0 / S.shape[1]
    return P


def node_mask(mask, n: int) -> np.ndarray:
    """A boolean mask over n nodes from a boolean array (n,) or an array of node indices."""
    m = np.asarray(mask)
    if m.dtype == bool:
        if m.shape != (n,):
            raise SolverError(f"a boolean mask needs one entry per graph node ({n}), got shape "
                              f"{m.shape}")
        return m
    if m.dtype.kind not in "iu" or m.ndim != 1 or (m.size and (m.min() < -n or m.max() >= n)):
        raise SolverError(f"mask must be a boolean array ({n},) or node indices in 0..{n - 1}")
    out = np.zeros(n, dtype=bool)
    out[m] = True
    return out


def ova_targets(codes_labeled: np.ndarray, n_classes: int) -> np.ndarray:
    """One-vs-all ±1 targets (l, C); binary problems use one column (+1 = second class)."""
    if n_classes == 2:
        return np.where(codes_labeled == 1, 1.0, -1.0)[:, None]
    return 2.0 * (codes_labeled[:, None] == np.arange(n_classes)) - 1.0


def ova_scores(F: np.ndarray) -> np.ndarray:
    """(n, C) scores from one-vs-all outputs; a single binary column f becomes [-f, f]."""
    return np.column_stack([-F[:, 0], F[:, 0]]) if F.shape[1] == 1 else F
