"""Supervised kernel SVM on the labeled nodes (sklearn SVC with a precomputed kernel)."""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted

from ..kernels import kernel_matrix, validate_kernel
from .base import SemiSupervisedClassifier, check_positive, require_features


class KernelSVM(SemiSupervisedClassifier):
    """SVC(kernel="precomputed", C=C) trained on K_LL; every node scored from its kernel row.

    Multiclass: libsvm's one-vs-one voting (labels = SVC.predict); decision_function_ holds
    SVC's "ovr"-shaped scores; binary scores are [-f, f].
    """

    def __init__(self, kernel={"kind": "rbf", "sigma": 1.0}, C=1.0):  # noqa: B006 (never mutated)
        self.kernel = kernel
        self.C = C

    def check_params(self):
        validate_kernel(self.kernel)
        check_positive("KernelSVM", C=self.C)

    def _fit(self, graph, codes, n_classes):
        X = require_features(graph, "KernelSVM")
        lab = np.flatnonzero(codes >= 0)
        self.X_fit_ = X[lab]
        self.svc_ = SVC(kernel="precomputed", C=float(self.C), decision_function_shape="ovr")
        self.svc_.fit(kernel_matrix(self.X_fit_, None, self.kernel), codes[lab])
        self.n_iter_ = int(np.max(self.svc_.n_iter_))
        self.stop_reason_ = "libsvm"
        K = kernel_matrix(X, self.X_fit_, self.kernel)
        return self._scores(K), self.svc_.predict(K)

    def _scores(self, K):
        f = self.svc_.decision_function(K)
        return np.column_stack([-f, f]) if f.ndim == 1 else f

    def _decision_new(self, X_new):
        return self._scores(kernel_matrix(X_new, self.X_fit_, self.kernel))

    def predict(self, X_new=None):
        """Labels by libsvm's one-vs-one votes (as SVC.predict), for nodes or new points."""
        if X_new is None:
            return super().predict()
        check_is_fitted(self, "svc_")
        return self.classes_[self.svc_.predict(kernel_matrix(X_new, self.X_fit_, self.kernel))]
