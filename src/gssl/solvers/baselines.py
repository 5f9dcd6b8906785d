"""Reference baselines from scikit-learn."""

from __future__ import annotations

import numpy as np
from sklearn.semi_supervised import LabelSpreading

from ..errors import ConfigError
from .base import SemiSupervisedClassifier, check_positive, require_features


class LabelSpreadingBaseline(SemiSupervisedClassifier):
    """sklearn LabelSpreading(kernel="knn") on graph.X (Zhou et al.); ignores graph.W.

    decision_function_ = label_distributions_; predict(X_new) uses sklearn's inductive rule.
    """

    def __init__(self, n_neighbors=10, alpha=0.2, max_iter=30, tol=1e-3):
        self.n_neighbors = n_neighbors
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol

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

    def _fit(self, graph, codes, n_classes):
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

    def _decision_new(self, X_new):
        return self.model_.predict_proba(X_new)
