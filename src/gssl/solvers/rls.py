"""Regularized least squares in an RKHS: supervised KernelRLS and Laplacian RLS (Belkin et al.).

Both use one-vs-all ±1 targets (binary: one column, label = sign) and a closed-form dual solution
f(x) = sum_i alpha_i k(x_i, x), so they extend to new points by kernel expansion.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..kernels import kernel_matrix, validate_kernel
from ..optim.linalg import relative_residual, solve_dense, solve_spd
from .base import (SemiSupervisedClassifier, check_nonnegative, check_positive, ova_scores,
                   ova_targets, require_features)

_LAPLACIANS = (None, "unnormalized", "normalized", "random_walk", "lle")


class _KernelExpansion(SemiSupervisedClassifier):
    """Out-of-sample extension f(X_new) = K(X_new, X_fit_) dual_coef_."""

    def _decision_new(self, X_new):
        return ova_scores(kernel_matrix(X_new, self.X_fit_, self.kernel) @ self.dual_coef_)


class KernelRLS(_KernelExpansion):
    """Supervised kernel RLS on the labeled nodes: (K_LL + gamma_A I) alpha = Y.

    Equals sklearn KernelRidge(alpha=gamma_A) with the same kernel, per one-vs-all column.
    """

    # the dict default is never mutated (validate_kernel returns a copy)
    def __init__(self, kernel={"kind": "rbf", "sigma": "median"}, gamma_A=1e-6):  # noqa: B006
        self.kernel = kernel
        self.gamma_A = gamma_A

    def check_params(self):
        validate_kernel(self.kernel)
        check_positive("KernelRLS", gamma_A=self.gamma_A)

    def _fit(self, graph, codes, n_classes):
        X = require_features(graph, "KernelRLS")
        lab = np.flatnonzero(codes >= 0)
        self.X_fit_ = X[lab]
        Y = ova_targets(codes[lab], n_classes)
        A = kernel_matrix(self.X_fit_, None, self.kernel)
        A[np.diag_indices_from(A)] += self.gamma_A
        self.dual_coef_ = solve_spd(A, Y, hint="increase gamma_A")
        self.n_iter_ = 1
        res = relative_residual(A, self.dual_coef_, Y)
        self.history_ = [{"iteration": 1, "relative_residual": res}]
        return ova_scores(kernel_matrix(X, self.X_fit_, self.kernel) @ self.dual_coef_)


class LaplacianRLS(_KernelExpansion):
    """Laplacian RLS, Sindhwani's scaling: (J K + gamma_A I + gamma_I L K) alpha = Y.

    J = diag(labeled), Y = ±1 targets on labeled rows and 0 elsewhere; it is the stationary point
    of |J K alpha - Y|^2 + gamma_A alpha' K alpha + gamma_I alpha' K L K alpha.
    L = graph.laplacian(laplacian or the graph's kind, laplacian_power or the graph's power).
    Dense LU solve: O(n^3) time and a few n x n float64 matrices of memory.
    """

    def __init__(self, kernel={"kind": "rbf", "sigma": "median"},  # noqa: B006 (never mutated)
                 gamma_A=1e-6, gamma_I=1e-2, laplacian=None, laplacian_power=None):
        self.kernel = kernel
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power

    def check_params(self):
        validate_kernel(self.kernel)
        check_positive("LaplacianRLS", gamma_A=self.gamma_A)
        check_nonnegative("LaplacianRLS", gamma_I=self.gamma_I)
        if self.laplacian not in _LAPLACIANS:
            raise ConfigError(f"LaplacianRLS: laplacian must be one of {list(_LAPLACIANS)}, "
                              f"got {self.laplacian!r}")
        p = self.laplacian_power
        if p is not None and (isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1):
            raise ConfigError(f"LaplacianRLS: laplacian_power must be null or an integer >= 1, "
                              f"got {p!r}")

    def _fit(self, graph, codes, n_classes):
        X = require_features(graph, "LaplacianRLS")
        lab = codes >= 0
        self.X_fit_ = X
        K = kernel_matrix(X, None, self.kernel)
        Y = np.zeros((codes.size, 1 if n_classes == 2 else n_classes))
        Y[lab] = ova_targets(codes[lab], n_classes)
        A = self._system(graph, K, lab)
        self.dual_coef_ = solve_dense(A, Y, hint="increase gamma_A")
        self.n_iter_ = 1
        self.history_ = [{"iteration": 1,
                          "relative_residual": relative_residual(A, self.dual_coef_, Y),
                          "objective": self._objective(graph, K, lab, Y)}]
        return ova_scores(K @ self.dual_coef_)

    def _laplacian(self, graph):
        return graph.laplacian(self.laplacian, self.laplacian_power)

    def _system(self, graph, K, lab):
        """A = J K + gamma_A I + gamma_I L K, built in place to keep memory at ~2 n^2 floats."""
        if self.gamma_I > 0:
            A = np.asarray(self._laplacian(graph) @ K)
            A *= self.gamma_I
            A[lab] += K[lab]
        else:
            A = np.where(lab[:, None], K, 0.0)
        A[np.diag_indices_from(A)] += self.gamma_A
        return A

    def _objective(self, graph, K, lab, Y):
        F = K @ self.dual_coef_
        fit = np.sum((F[lab] - Y[lab]) ** 2)
        ridge = self.gamma_A * np.sum(self.dual_coef_ * F)
        smooth = 0.0
        if self.gamma_I > 0:
            smooth = self.gamma_I * np.sum(F * (self._laplacian(graph) @ F))
        return float(fit + ridge + smooth)
