"""Common base of the semi-supervised classifiers: fit, outputs, predict (the checks at a fit's
edges: :mod:`gssl.solvers.fit_checks`).

Subclasses implement ``_fit(graph, codes, n_classes) -> scores (n, C)`` where ``codes`` are class
indices 0..C-1 for labeled nodes and -1 elsewhere, and optionally ``_decision_new(X_new)`` for an
out-of-sample extension.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import SolverError
from ..optim.kernels import kernel_matrix
from .fit_checks import (
    check_labels,
    checked_scores,
    node_mask,
    normalized_scores,
    ova_scores,
    warn_not_converged,
)
from .params import ParamValidation, kernel_spec


class SemiSupervisedClassifier(ParamValidation, ClassifierMixin, BaseEstimator):
    """fit(X, y, n_classes=None, validation=None, *, graph=None) with y == -1 on unlabeled nodes;
    X a gssl Graph, a weight matrix W, or features with ``graph`` = a spec to build one.

    Beside fit: ``fit_predict`` (the labels of every node), ``predict`` / ``decision_function`` /
    ``predict_proba`` (labels, class scores, normalised scores; of the graph's nodes or, where the
    method has an out-of-sample extension, of new points) and ``score(y_true, *, mask=None)`` (the
    accuracy of the nodes' labels).

    The estimator contract: keyword-only constructors that store each parameter as given (and
    nothing else); ``_parameter_constraints`` declares every parameter's allowed values
    (:mod:`gssl.solvers.params`), ``_check_param_relations`` the rules between parameters; fit
    validates them (ConfigError), never changes a parameter and, with the same parameters
    (``random_state`` included), gives the same results; it leaves no array in a reference cycle
    (freed at once, not when Python's cyclic collector next runs).

    Attributes
    ----------
    classes_ : ndarray (C,)
        Class labels.
    transduction_ : ndarray (n,)
        Labels of every graph node (-1 where a method abstains).
    decision_function_ : ndarray (n, C)
        Class scores (arg-max = label unless the method decides labels otherwise).
    n_iter_ : int
        Iterations (0 where the solver reports none).
    history_ : list of dict
        Per-iteration records.
    converged_ : bool
        Whether an iterative method met its criterion (direct solves: True); when it did not,
        fit warns with scikit-learn's ``ConvergenceWarning`` (:func:`warn_not_converged`).
    stop_reason_ : str
        Why it stopped (direct solves: "direct solve").
    criteria_ : dict
        Name -> (last value, tolerance) of each stop criterion of an iterative method (empty for
        direct solves): what the warning reports.
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
        self.criteria_ = {}
        self._F_last = None
        out = self._fit(graph, codes, classes.size)
        if not self.converged_:
            warn_not_converged(self)
        scores, labels = out if isinstance(out, tuple) else (out, None)
        self.decision_function_ = checked_scores(self, scores, graph.n_nodes, classes.size)
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
        raise NotImplementedError(f"{type(self).__name__} must implement _fit(graph, codes, "
                                  f"n_classes), returning the class scores (n, C)")

    def fit_predict(self, X, y, **fit_kwargs) -> np.ndarray:
        """Fit, then return the labels of every graph node (``transduction_``).

        Parameters
        ----------
        X, y
            As :meth:`fit`.
        **fit_kwargs
            The other arguments of :meth:`fit` (``n_classes``, ``validation``, ``graph``).

        Returns
        -------
        ndarray (n,)
            ``fit(X, y, **fit_kwargs).transduction_``: what ``predict()`` then gives.
        """
        return self.fit(X, y, **fit_kwargs).transduction_

    # -- prediction ----------------------------------------------------------------------------
    def decision_function(self, X_new=None) -> np.ndarray:
        """Class scores (n, C) of the graph's nodes (X_new None) or of new points."""
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

    # how predict_proba maps the class scores: "scores" (the generic rule below), "ova" (one-vs-all
    # scores fitted to +-1 targets by squared loss) or None (scores that are no probabilities)
    _proba_rule = "scores"

    def predict_proba(self, X_new=None) -> np.ndarray:
        """Class scores normalised to rows that are non-negative and sum to one.

        No softmax and no calibration: the class scores of :meth:`decision_function` are mapped
        by a rule that keeps their order, so the arg-max of a row is the arg-max of its scores
        (and so ``predict()`` wherever the method labels by arg-max: not with ``class_priors``,
        nor where MBO steps or an SVM's votes decide the labels). The values are the method's
        scores made comparable across nodes, not calibrated probabilities.

        * Generic rule: each row is shifted up by its most negative score, if it has one, and
          divided by its sum, ``p_c = (s_c - m) / sum_k (s_k - m)`` with ``m = min(0, min_k s_k)``.
          Non-negative scores keep their ratios: Laplace learning's harmonic functions (the
          probabilities that a random walk from the node first meets a labeled node of each
          class) and label spreading's label distributions come back as they are; signed scores
          (Poisson learning's U, kernel machines' decision values) become relative scores in
          which the lowest class gets 0. A two-class one-vs-all method (scores ``[-f, f]``) gets
          0 and 1.
        * Methods that fit one-vs-all ``+-1`` targets by squared loss (``_proba_rule = "ova"``),
          whose score ``f_c`` estimates ``2 P(c) - 1``: ``p_c`` proportional to
          ``clip((1 + f_c) / 2, 0, 1)`` (two classes: ``1 - p`` and ``p``; the clip may tie
          classes whose scores pass 1).

        Rows that hold no information (all scores equal, or a node the method abstained on,
        label -1) are uniform.

        Parameters
        ----------
        X_new : array (m, d), optional
            New points (methods with an out-of-sample extension); None: the graph's nodes.

        Returns
        -------
        ndarray (n, C) or (m, C)
            Columns in the order of ``classes_``.
        """
        if self._proba_rule is None:
            raise SolverError(f"{type(self).__name__}'s class scores are not probabilities and "
                              f"have no normalisation; use decision_function() for the scores or "
                              f"predict() for the labels")
        return normalized_scores(self.decision_function(X_new), self._proba_rule)

    def score(self, y_true, y=None, sample_weight=None, *, mask=None) -> float:
        """Accuracy of the labels of the graph's nodes against ``y_true``.

        ``score(y_true)``: the share of the nodes with ``y_true >= 0`` (and in ``mask``) whose
        label ``predict()`` (``transduction_``) equals ``y_true``; nodes the method abstained on
        (label -1) count as errors. The labeled nodes of the fit count too: pass
        ``mask=(y_train == -1)`` to score the unlabeled nodes only.
        ``score(X_new, y)`` with two arguments is scikit-learn's ``ClassifierMixin.score``: the
        accuracy of ``predict(X_new)`` on new points (methods with an out-of-sample extension).

        Parameters
        ----------
        y_true : array (n,)
            True label of every graph node, -1 (or any negative value) where unknown. With ``y``
            given: the new points X_new.
        y : array (m,), optional
            True labels of the new points (scikit-learn's form).
        sample_weight : array (n,) or (m,), optional
            Weight of each node (or new point).
        mask : bool array (n,) or int array of node indices, optional
            Score only these nodes (the graph's nodes only).

        Returns
        -------
        float
            Accuracy in [0, 1].
        """
        from sklearn.metrics import accuracy_score

        if y is not None:
            if np.ndim(y_true) == 1:  # labels, not new points: score(y_true, mask) by position
                raise SolverError("score(y_true, y): a 1-D first argument holds labels, not new "
                                  "points X_new; to score some graph nodes, pass the mask as a "
                                  "keyword: score(y_true, mask=...)")
            if mask is not None:
                raise SolverError("score(X_new, y) scores new points; mask selects graph nodes: "
                                  "call score(y_true, mask=...) for those")
            return float(accuracy_score(y, self.predict(y_true), sample_weight=sample_weight))
        check_is_fitted(self, "transduction_")
        n = self.transduction_.size
        y_true = np.asarray(y_true)
        if y_true.shape != (n,):
            raise SolverError(f"score(y_true): y_true must hold one label per graph node ({n}), got "
                              f"shape {y_true.shape}; for new points call score(X_new, y)")
        keep = y_true >= 0
        if mask is not None:
            keep &= node_mask(mask, n)
        if not keep.any():
            raise SolverError("score(y_true): no node to score (none has y_true >= 0"
                              + (" inside mask)" if mask is not None else ")"))
        w = None if sample_weight is None else np.asarray(sample_weight)[keep]
        return float(accuracy_score(y_true[keep], self.transduction_[keep], sample_weight=w))

    def _decision_new(self, X_new) -> np.ndarray:
        raise SolverError(f"{type(self).__name__} has no out-of-sample extension; call predict() "
                          f"without arguments for the graph's nodes")

    def _labels(self, scores: np.ndarray) -> np.ndarray:
        return self.classes_[np.argmax(scores, axis=1)]


class KernelExpansion(SemiSupervisedClassifier):
    """Base of the kernel methods: a ``kernel`` parameter and the out-of-sample extension
    f(X_new) = K(X_new, X_fit_) dual_coef_ (the subclass's fit sets ``X_fit_`` and ``dual_coef_``)."""

    _parameter_constraints = {**SemiSupervisedClassifier._parameter_constraints,
                              "kernel": [kernel_spec]}

    def _decision_new(self, X_new):
        return ova_scores(kernel_matrix(X_new, self.X_fit_, self.kernel) @ self.dual_coef_)
