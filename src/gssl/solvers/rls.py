"""Regularized least squares in an RKHS: supervised KernelRLS and Laplacian RLS (Belkin et al.).

Both use one-vs-all ±1 targets (binary: one column, label = sign) and a closed-form dual solution
f(x) = sum_i alpha_i k(x_i, x), so they extend to new points by kernel expansion.
"""

from __future__ import annotations

import numpy as np

from ..graphs.laplacian import LAPLACIAN_KINDS
from ..optim.kernels import kernel_matrix
from ..optim.linalg import relative_residual, solve_dense, solve_spd
from .base import KernelExpansion
from .fit_checks import ova_scores, ova_targets, require_features
from .docstrings import documented
from .params import DEFAULT_KERNEL, Int, StrOptions, nonnegative, positive

# Laplacian regularization (Belkin et al.'s manifold regularization, which LaplacianRLS
# introduces), shared by the LapSVM family (gssl.solvers.lapsvm) and the simplex Lap-RLS/SVM
# (gssl.solvers.tv)
MANIFOLD_CONSTRAINTS = {
    "gamma_A": [positive],
    "gamma_I": [nonnegative],
    "laplacian": [StrOptions(LAPLACIAN_KINDS), None],  # None: the graph's own kind
    "laplacian_power": [Int(1), None],                  # None: the graph's own power
}


class KernelRLS(KernelExpansion):
    """Supervised kernel RLS on the labeled nodes: (K_LL + gamma_A I) alpha = Y.

    Equals sklearn KernelRidge(alpha=gamma_A) with the same kernel, per one-vs-all column.

    Parameters
    ----------
    kernel : str or dict, default="rbf" (sigma "median")
        Kernel spec (:func:`gssl.optim.kernels.validate_kernel`): "rbf", "linear", "polynomial" or a
        mapping with "kind" and that kind's keys.
    gamma_A : float, default=1e-6
        Ridge (ambient) weight, > 0.

    Attributes
    ----------
    classes_ : ndarray (C,)
        Class labels.
    X_fit_ : ndarray (l, d)
        Features of the labeled nodes (the kernel expansion points).
    dual_coef_ : ndarray (l, C')
        Expansion coefficients alpha, one column per one-vs-all problem (C' = 1 when binary).
    decision_function_ : ndarray (n, C)
        Scores of every node (binary: [-f, f]).
    transduction_ : ndarray (n,)
        Labels of every node (arg-max of the scores).
    n_iter_ : int
        1 (direct solve).
    history_ : list of dict
        The relative residual of the solve.

    References
    ----------
    Rifkin, Yeo & Poggio, "Regularized least-squares classification", Advances in Learning
    Theory, 2003 (the supervised baseline of Belkin, Niyogi & Sindhwani, JMLR 7, 2006).
    """

    # floors: the defaults reached 69.1 87.2 91.0
    __gssl_tags__ = {"name": "rls", "family": "baselines", "floors": {1: 63, 5: 81, 10: 85},
                     "summary": "kernel RLS on the labeled points"}

    _parameter_constraints = {**KernelExpansion._parameter_constraints, "gamma_A": [positive]}

    def __init__(self, *, kernel=DEFAULT_KERNEL, gamma_A=1e-6):
        self.kernel = kernel
        self.gamma_A = gamma_A

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


@documented()
class LaplacianRLS(KernelExpansion):
    """Laplacian RLS, Sindhwani's scaling: (J K + gamma_A I + gamma_I L K) alpha = Y.

    J = diag(labeled), Y = ±1 targets on labeled rows and 0 elsewhere; it is the stationary point
    of |J K alpha - Y|^2 + gamma_A alpha' K alpha + gamma_I alpha' K L K alpha.
    L = graph.laplacian(laplacian or the graph's kind, laplacian_power or the graph's power).
    Dense LU solve: O(n^3) time and a few n x n float64 matrices of memory.

    Parameters
    ----------
    %(manifold_parameters)s

    Attributes
    ----------
    classes_ : ndarray (C,)
        Class labels.
    X_fit_ : ndarray (n, d)
        Features of every graph node (the kernel expansion points).
    dual_coef_ : ndarray (n, C')
        Expansion coefficients alpha (C' = 1 when binary).
    decision_function_ : ndarray (n, C)
        Scores of every node (binary: [-f, f]).
    transduction_ : ndarray (n,)
        Labels of every node.
    n_iter_ : int
        1 (direct solve).
    history_ : list of dict
        The relative residual of the solve and the objective value.

    References
    ----------
    Belkin, Niyogi & Sindhwani, "Manifold Regularization: A Geometric Framework for Learning from
    Labeled and Unlabeled Examples", JMLR 7, 2006 (Laplacian RLS). Melacci & Belkin, "Laplacian
    Support Vector Machines Trained in the Primal", JMLR 12, 2011: its Eq. 14 is half this
    objective plus an unregularized bias (:class:`gssl.solvers.lapsvm.LapRLSC`).
    """

    # floors: the defaults reached 89.1 96.2 96.1
    __gssl_tags__ = {"name": "lap_rls", "family": "baselines", "floors": {1: 83, 5: 90, 10: 90},
                     "summary": "Laplacian RLS, closed form, one-vs-all"}

    _parameter_constraints = {**KernelExpansion._parameter_constraints, **MANIFOLD_CONSTRAINTS}

    def __init__(self, *, kernel=DEFAULT_KERNEL, gamma_A=1e-6, gamma_I=1e-2, laplacian=None,
                 laplacian_power=None):
        self.kernel = kernel
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power

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
