"""Reference baselines from scikit-learn."""

from __future__ import annotations

import numpy as np
from sklearn.semi_supervised import LabelSpreading

from ..errors import ConfigError, SolverError
from .base import SemiSupervisedClassifier, check_positive, require_features


class LabelSpreadingBaseline(SemiSupervisedClassifier):
    """scikit-learn's LabelSpreading (Zhou et al. 2004, local and global consistency).

    ``graph="features"`` (default): sklearn's own ``n_neighbors``-NN connectivity graph of graph.X
    (graph.W is not used; predict(X_new) uses sklearn's inductive rule). ``graph="given"``: the
    same iteration on the given graph's W (sklearn's code, W passed as a precomputed kernel), so
    it compares with the other graph methods on one graph; no out-of-sample extension.
    decision_function_ = label_distributions_.
    """

    def __init__(self, n_neighbors=10, alpha=0.2, max_iter=30, tol=1e-3, graph="features"):
        self.n_neighbors = n_neighbors
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.graph = graph

    def check_params(self):
        for name in ("n_neighbors", "max_iter"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ConfigError(f"LabelSpreadingBaseline: {name} must be an integer >= 1, "
                                  f"got {v!r}")
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) \
                or not 0 < self.alpha < 1:
            raise ConfigError(f"LabelSpreadingBaseline: alpha must be in (0, 1), "
                              f"got {self.alpha!r}")
        check_positive("LabelSpreadingBaseline", tol=self.tol)
        if self.graph not in ("features", "given"):
            raise ConfigError(f"LabelSpreadingBaseline: graph must be 'features' (sklearn's kNN graph "
                              f"of the features) or 'given' (the graph's W), got {self.graph!r}")

    def _fit(self, graph, codes, n_classes):
        if self.graph == "given":
            return self._fit_given(graph, codes)
        X = require_features(graph, "LabelSpreadingBaseline")
        if self.n_neighbors >= graph.n_nodes:
            raise ConfigError(f"LabelSpreadingBaseline: n_neighbors={self.n_neighbors} must be "
                              f"smaller than the number of nodes ({graph.n_nodes})")
        self.model_ = LabelSpreading(kernel="knn", n_neighbors=int(self.n_neighbors),
                                     alpha=float(self.alpha), max_iter=int(self.max_iter),
                                     tol=float(self.tol))
        self.model_.fit(X, codes)
        self.n_iter_ = int(self.model_.n_iter_)
        self.converged_ = self.n_iter_ < self.max_iter
        self.stop_reason_ = "tol" if self.converged_ else "max_iter"
        # every class has a labeled node, so sklearn's classes_ are exactly 0..C-1
        return self.model_.label_distributions_

    def _fit_given(self, graph, codes):
        import scipy.sparse as sp

        W = sp.csr_matrix(graph.W, dtype=np.float64)
        W = sp.csr_matrix(W - sp.diags(W.diagonal()))  # sklearn zeroes the diagonal of -L itself
        # the node index stands in for the features; the "kernel" is the given affinity matrix
        self.model_ = LabelSpreading(kernel=lambda a, b: W, alpha=float(self.alpha),
                                     max_iter=int(self.max_iter), tol=float(self.tol))
        self.model_.fit(np.arange(W.shape[0], dtype=np.float64)[:, None], codes)
        self.n_iter_ = int(self.model_.n_iter_)
        self.converged_ = self.n_iter_ < self.max_iter
        self.stop_reason_ = "tol" if self.converged_ else "max_iter"
        return self.model_.label_distributions_

    def _decision_new(self, X_new):
        if self.graph == "given":
            raise SolverError("label spreading on a given graph has no out-of-sample extension; call "
                              "predict() without arguments for the graph's nodes")
        return self.model_.predict_proba(X_new)
