"""Reference baselines from scikit-learn."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.semi_supervised import LabelSpreading

from ..errors import ConfigError, SolverError
from .base import SemiSupervisedClassifier
from .fit_checks import require_features
from .params import Int, Real, StrOptions, positive


class LabelSpreadingBaseline(SemiSupervisedClassifier):
    """scikit-learn's LabelSpreading (Zhou et al. 2004, local and global consistency).

    ``graph="features"`` (the constructor's default): sklearn's own ``n_neighbors``-NN
    connectivity graph of graph.X (graph.W is not used; predict(X_new) uses sklearn's inductive
    rule). ``graph="given"``: the same iteration on the given graph's W (sklearn's code, W passed
    as a precomputed kernel), so it compares with the other graph methods on one graph; no
    out-of-sample extension. In a workflow cell ``graph: given`` is the default (every method
    of a cell uses the cell's graph); a method entry gives ``graph: features`` for sklearn's own.
    decision_function_ = label_distributions_.

    Parameters
    ----------
    n_neighbors : int >= 1, default=10
        Neighbours of sklearn's kNN graph (``graph="features"``; fewer than the nodes).
    alpha : float in (0, 1), default=0.2
        Clamping factor: the share of a node's label taken from its neighbours each iteration.
    max_iter : int >= 1, default=30
        Most iterations.
    tol : float > 0, default=1e-3
        Convergence tolerance of sklearn's iteration.
    graph : {"features", "given"}, default="features"
        sklearn's kNN graph of the node features, or the given graph's W (a workflow cell's
        default).

    Attributes
    ----------
    classes_ : ndarray (C,)
        Class labels.
    model_ : sklearn.semi_supervised.LabelSpreading
        The fitted scikit-learn model.
    decision_function_ : ndarray (n, C)
        Its label distributions.
    transduction_ : ndarray (n,)
        Labels of every node.
    n_iter_ : int
        Iterations sklearn ran.
    converged_ : bool
        Whether it stopped on ``tol`` before ``max_iter`` (if not, the base class warns, in place
        of scikit-learn's warning, which names neither the solver nor the criterion).

    References
    ----------
    Zhou, Bousquet, Lal, Weston & Schölkopf, "Learning with Local and Global Consistency",
    Advances in NIPS 16, 2004: the iteration F <- alpha S F + (1 - alpha) Y with
    S = D^-1/2 W D^-1/2 of its algorithm (scikit-learn's ``LabelSpreading``).
    """

    # floors: the defaults reached 78.9 91.9 92.3
    __gssl_tags__ = {"name": "label_spreading", "family": "baselines",
                     "floors": {1: 72, 5: 85, 10: 86},
                     "summary": "scikit-learn's; in a workflow cell on the cell's graph (`graph: given`, the "
                                "default there), with `graph: features` on its own kNN graph of the features "
                                "(`n_neighbors`; the Python API's default)",
                     "fast": {"n_neighbors": 5},
                     "cell_params": {"graph": "given"}, "cell_params_unused": ("n_neighbors",)}

    _parameter_constraints = {**SemiSupervisedClassifier._parameter_constraints,
                              "n_neighbors": [Int(1)],
                              "alpha": [Real(0, 1, closed="neither")],
                              "max_iter": [Int(1)],
                              "tol": [positive],
                              "graph": [StrOptions(("features", "given"))]}

    def __init__(self, *, n_neighbors=10, alpha=0.2, max_iter=30, tol=1e-3, graph="features"):
        self.n_neighbors = n_neighbors
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.graph = graph

    def _fit(self, graph, codes, n_classes):
        if self.graph == "given":
            return self._fit_given(graph, codes)
        X = require_features(
            graph, "LabelSpreadingBaseline (graph='features', its kNN graph of the node features)",
            "pass graph='given' to spread the labels on the given W, e.g. "
            "make_solver('label_spreading', graph='given') or LabelSpreadingBaseline(graph='given'); "
            "or keep graph='features' and pass the features: gssl.build_graph(X, W=W) or "
            "fit(X, y, graph={'k': 10})")
        if self.n_neighbors >= graph.n_nodes:
            raise ConfigError(f"LabelSpreadingBaseline: n_neighbors={self.n_neighbors} must be "
                              f"smaller than the number of nodes ({graph.n_nodes})")
        self.model_ = LabelSpreading(kernel="knn", n_neighbors=int(self.n_neighbors),
                                     alpha=float(self.alpha), max_iter=int(self.max_iter),
                                     tol=float(self.tol))
        # every class has a labeled node, so sklearn's classes_ are exactly 0..C-1
        return self._run(X, codes)

    def _fit_given(self, graph, codes):
        import scipy.sparse as sp

        W = sp.csr_matrix(graph.W, dtype=np.float64)
        W = sp.csr_matrix(W - sp.diags(W.diagonal()))  # sklearn zeroes the diagonal of -L itself
        # the node index stands in for the features; the "kernel" is the given affinity matrix
        self.model_ = LabelSpreading(kernel=lambda a, b: W, alpha=float(self.alpha),
                                     max_iter=int(self.max_iter), tol=float(self.tol))
        return self._run(np.arange(W.shape[0], dtype=np.float64)[:, None], codes)

    def _run(self, X, codes):
        """Fit ``model_``; its iterations and stop. scikit-learn's own ConvergenceWarning gives
        way to the base class's (one warning, naming the solver and the criterion; scikit-learn
        keeps the criterion's last value to itself)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model_.fit(X, codes)
        self.n_iter_ = int(self.model_.n_iter_)
        self.converged_ = self.n_iter_ < self.max_iter
        self.stop_reason_ = "tol" if self.converged_ else "max_iter"
        self.criteria_ = {"summed change of the label distributions": (None, float(self.tol))}
        return self.model_.label_distributions_

    def _decision_new(self, X_new):
        if self.graph == "given":
            raise SolverError("label spreading on a given graph has no out-of-sample extension; call "
                              "predict() without arguments for the graph's nodes")
        return self.model_.predict_proba(X_new)
