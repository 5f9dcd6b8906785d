"""Common base of the semi-supervised classifiers: label checks, outputs, predict.

Subclasses implement ``_fit(graph, codes, n_classes) -> scores (n, C)`` where ``codes`` are class
indices 0..C-1 for labeled nodes and -1 elsewhere, and optionally ``_decision_new(X_new)`` for an
out-of-sample extension.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import SolverError
from .params import ParamValidation


class SemiSupervisedClassifier(ParamValidation, ClassifierMixin, BaseEstimator):
    """fit(graph, y, n_classes=None) with y == -1 on unlabeled nodes.

    The estimator contract: keyword-only constructors that store each parameter as given (and
    nothing else); ``_parameter_constraints`` declares every parameter's allowed values
    (:mod:`gssl.solvers.params`), ``_check_param_relations`` the rules between parameters; fit
    validates them (ConfigError), never changes a parameter and, with the same parameters
    (``random_state`` included), gives the same results.

    Attributes
    ----------
    classes_ : ndarray (C,)
        Class labels.
    transduction_ : ndarray (n,)
        Labels of every graph node (-1 where a method abstains).
    decision_function_ : ndarray (n, C)
        Class scores (arg-max = label unless the method decides labels otherwise).
    n_iter_ : int
        Iterations (1 for direct solves).
    history_ : list of dict
        Per-iteration records.
    converged_ : bool
        Whether an iterative method met its criterion (direct solves: True).
    stop_reason_ : str
        Why it stopped (direct solves: "direct solve").
    fit_metrics_ : dict, optional
        Name -> number: solver diagnostics, logged as ``solver_<name>``.
    alternative_labels_ : dict
        Name -> labels of every node by another decision rule, scored beside the method's own
        as ``error_<set>_<name>``.
    """

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, X, y, n_classes: int | None = None, validation=None, *, graph: dict | None = None):
        """Fit on the nodes of a graph; ``y`` holds a class label per node, -1 where unlabeled.

        Parameters
        ----------
        X : gssl Graph, weight matrix or features
            A :class:`gssl.graphs.Graph`; a symmetric non-negative weight matrix W (SciPy sparse or
            a square array; kernel methods then have no features); or features (n, d) with
            ``graph`` = a spec to build the graph from them (``{"k": 10}``: a kNN graph with the
            config's keys and defaults).
        y : array (n,)
            Integer labels, -1 for unlabeled nodes.
        n_classes : int, optional
            Number of classes (labels 0..n_classes-1); by default the distinct labels of y.
        validation : (indices, labels), optional
            Held out from ``y`` for model selection or early stopping; methods that do not use
            it ignore it (it never enters the fit).
        graph : dict, optional
            Graph spec when X holds features.
        """
        from ..graphs import as_graph

        graph = as_graph(X, graph)
        self._validate_params()
        classes, codes = check_labels(graph, y, n_classes)
        self.classes_ = classes
        self._validation = None
        if validation is not None:
            idx, labels = (np.asarray(v) for v in validation)
            self._validation = (idx, np.searchsorted(classes, labels))
        self.n_iter_, self.history_ = 0, []
        self.converged_, self.stop_reason_ = True, "direct solve"  # iterative solvers overwrite
        self._F_last = None
        out = self._fit(graph, codes, classes.size)
        scores, labels = out if isinstance(out, tuple) else (out, None)
        self.decision_function_ = np.asarray(scores, dtype=np.float64)
        self.transduction_ = (self._labels(self.decision_function_) if labels is None  # -1: abstained
                              else np.where(labels >= 0, classes[np.maximum(labels, 0)], -1))
        # methods whose labels come from a split variable (the simplex g of the multiclass TV
        # family) leave the RKHS function f = K alpha in _F_last: its arg-max labels are the
        # papers' rule, reported beside (alternative_labels_["argmax_f"])
        self.alternative_labels_ = ({} if self._F_last is None
                                    else {"argmax_f": self._labels(np.asarray(self._F_last))})
        del self._F_last
        return self

    def _fit(self, graph, codes: np.ndarray, n_classes: int):
        """Return scores (n, C), or (scores, class indices) when labels are not argmax(scores)."""
        raise NotImplementedError

    # -- prediction ----------------------------------------------------------------------------
    def decision_function(self, X_new=None) -> np.ndarray:
        check_is_fitted(self, "decision_function_")
        if X_new is None:
            return self.decision_function_
        return np.asarray(self._decision_new(X_new), dtype=np.float64)

    def predict(self, X_new=None) -> np.ndarray:
        """Labels of the graph's nodes (X_new None) or of new points (out-of-sample extension)."""
        check_is_fitted(self, "transduction_")
        if X_new is None:
            return self.transduction_
        return self._labels(self.decision_function(X_new))

    def _decision_new(self, X_new) -> np.ndarray:
        raise SolverError(f"{type(self).__name__} has no out-of-sample extension; call predict() "
                          f"without arguments for the graph's nodes")

    def _labels(self, scores: np.ndarray) -> np.ndarray:
        return self.classes_[np.argmax(scores, axis=1)]


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


def require_features(graph, solver: str):
    if graph.X is None:
        raise SolverError(f"{solver} needs node features (graph.X) to build a kernel, but this "
                          f"graph has none (graph-only dataset); use a graph-only method")
    return graph.X


def ova_targets(codes_labeled: np.ndarray, n_classes: int) -> np.ndarray:
    """One-vs-all ±1 targets (l, C); binary problems use one column (+1 = second class)."""
    if n_classes == 2:
        return np.where(codes_labeled == 1, 1.0, -1.0)[:, None]
    return 2.0 * (codes_labeled[:, None] == np.arange(n_classes)) - 1.0


def ova_scores(F: np.ndarray) -> np.ndarray:
    """(n, C) scores from one-vs-all outputs; a single binary column f becomes [-f, f]."""
    return np.column_stack([-F[:, 0], F[:, 0]]) if F.shape[1] == 1 else F
