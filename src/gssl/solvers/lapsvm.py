"""Laplacian SVM family after Melacci & Belkin (2011), "Laplacian Support Vector Machines Trained
in the Primal" (JMLR 12): dual LapSVM (Belkin et al. 2006), primal LapSVM by Newton's method and by
preconditioned conjugate gradient with early stopping, and LapRLSC with bias (closed form or PCG).

All four share f = K alpha + b 1 over every graph node (kernel expansion, so they extend to new
points), the normalized (or declared) graph Laplacian raised to ``laplacian_power`` (M = L^p), and
one-vs-all ±1 targets (binary problems: one column, +1 = second class). The primal problems are
the paper's Eq. 7 / Eq. 14 without extra scaling (no 1/l, no 1/(l+u)^2):

    LapSVM primal:  min 1/2 ( sum_{i in L} max(0, 1 - y_i f_i)^2 + gamma_A a'Ka + gamma_I f'Mf )
    LapRLSC:        min 1/2 ( sum_{i in L} (y_i - f_i)^2         + gamma_A a'Ka + gamma_I f'Mf )

The dual LapSVM (Belkin et al.'s hinge-loss problem, the same unscaled weights) is solved by
:func:`gssl.optim.manifold_dual.lapsvm_dual`.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..errors import SolverError
from ..optim.kernels import kernel_matrix
from ..optim.manifold_dual import lapsvm_dual
from ..optim.manifold_primal import (LaplacianPower, laprlsc_closed_form, lapsvm_newton_ova,
                                     manifold_pcg, primal_objective)
from ..optim.pcg import STOPPING, default_check_every, make_criterion
from .base import KernelExpansion
from .fit_checks import ova_scores, ova_targets, require_features
from .docstrings import documented
from .params import DEFAULT_KERNEL, Int, Real, StrOptions, positive
from .rls import MANIFOLD_CONSTRAINTS


class _ManifoldKernelMachine(KernelExpansion):
    """Shared parameters, kernel/Laplacian preparation and one-vs-all bookkeeping."""

    _parameter_constraints = {**KernelExpansion._parameter_constraints, **MANIFOLD_CONSTRAINTS}

    def _prepare(self, graph, codes, n_classes):
        X = require_features(graph, type(self).__name__)
        self.X_fit_ = X
        K = kernel_matrix(X, None, self.kernel)
        p = self.laplacian_power if self.laplacian_power is not None else graph.laplacian_power
        M = LaplacianPower(graph.laplacian(self.laplacian, 1), p)
        lab = np.flatnonzero(codes >= 0)
        Y = ova_targets(codes[lab], n_classes)          # (l, C') with C' = 1 for binary
        return K, M, lab, Y

    def _val_targets(self, n_classes, column):
        """Validation nodes and their ±1 targets for one-vs-all column ``column``."""
        if self._validation is None:
            return None
        idx, vcodes = self._validation
        pos = 1 if n_classes == 2 else column
        return np.asarray(idx), np.where(np.asarray(vcodes) == pos, 1.0, -1.0)

    def _unlabeled(self, n, lab):
        mask = np.ones(n, bool)
        mask[lab] = False
        if self._validation is not None:
            mask[np.asarray(self._validation[0])] = False
        return np.flatnonzero(mask)

    def _finish(self, K, alphas, bs):
        self.dual_coef_ = np.column_stack(alphas)
        self.intercept_ = np.asarray(bs, dtype=np.float64)
        return ova_scores(K @ self.dual_coef_ + self.intercept_)

    def _decision_new(self, X_new):
        return ova_scores(kernel_matrix(X_new, self.X_fit_, self.kernel) @ self.dual_coef_
                          + self.intercept_)

    def _summarize(self, results, column_reasons=None):
        """n_iter_ = max over the one-vs-all problems (per class in n_iter_per_class_)."""
        self.n_iter_per_class_ = [int(r.n_iter) for r in results]
        self.n_iter_ = max(self.n_iter_per_class_)
        self.converged_ = all(r.converged for r in results)
        reasons = Counter(column_reasons or [r.stop_reason for r in results])
        self.stop_reason_ = (next(iter(reasons)) if len(reasons) == 1 else
                             ", ".join(f"{k} x{v}" for k, v in sorted(reasons.items())))
        self.objective_ = [float(r.objective) for r in results]
        self.history_ = [dict(h, column=c) for c, r in enumerate(results) for h in r.history]
        # the criteria of the first column that did not converge (of the first, if all did)
        c, worst = next(((c, r) for c, r in enumerate(results) if not r.converged), (0, results[0]))
        where = f" (column {c})" if len(results) > 1 else ""
        self.criteria_ = {f"{name}{where}": v for name, v in worst.criteria.items()}


@documented()
class LapSVMDual(_ManifoldKernelMachine):
    """LapSVM in the dual (Belkin et al. 2006), two steps: libsvm on the l x l Gram matrix
    G = J K (2 gamma_A I + 2 gamma_I M K)^-1 J' with C = 1, then a = (2 gamma_A I + 2 gamma_I M K)^-1 J'Y beta.

    Hinge loss (not squared), bias from libsvm. One (n x n) LU factorization shared by every
    one-vs-all column; O(n^3) time and a few n x n float64 arrays. ``tol`` is libsvm's.

    Parameters
    ----------
    %(manifold_parameters)s
    tol : float > 0, default=1e-3
        libsvm's stopping tolerance.

    Attributes
    ----------
    %(manifold_attributes)s
    beta_ : list of ndarray (l,)
        Dual variables beta of each one-vs-all problem.
    n_iter_ : int
        libsvm iterations (largest over the columns; per column in ``n_iter_per_class_``).

    References
    ----------
    Belkin, Niyogi & Sindhwani, "Manifold Regularization", JMLR 7, 2006 (the dual LapSVM);
    Melacci & Belkin, "Laplacian Support Vector Machines Trained in the Primal", JMLR 12, 2011:
    the problem of Eq. 4, its dual (Eq. 6) and the expansion coefficients of Eq. 5.
    """

    # floors: the defaults reached 89.2 95.9 96.3
    __gssl_tags__ = {"name": "lap_svm_dual", "aliases": ("lapsvm_dual",),
                     "family": "laplacian_svm", "floors": {1: 83, 5: 89, 10: 90}}

    _parameter_constraints = {**_ManifoldKernelMachine._parameter_constraints, "tol": [positive]}

    def __init__(self, *, kernel=DEFAULT_KERNEL, gamma_A=1e-6, gamma_I=1e-2, laplacian=None,
                 laplacian_power=None, tol=1e-3):
        self.kernel = kernel
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.tol = tol

    def _fit(self, graph, codes, n_classes):
        K, M, lab, Y = self._prepare(graph, codes, n_classes)
        alpha, b, betas, iters = lapsvm_dual(K, M, lab, Y, self.gamma_A, self.gamma_I, self.tol)
        self.beta_ = betas
        self.n_iter_per_class_ = iters
        self.n_iter_ = max(iters)
        self.stop_reason_ = "libsvm"
        self.history_ = [{"iteration": it, "column": c, "n_support": int(np.sum(bt > 0))}
                         for c, (it, bt) in enumerate(zip(iters, betas))]
        return self._finish(K, list(alpha.T), list(b))


@documented()
class LapSVMNewton(_ManifoldKernelMachine):
    """Primal LapSVM (Eq. 7, squared hinge) by Newton's method: generalized Hessian on the
    error-vector set, step size 1, stop when the set does not change (at most ``max_iter`` steps).

    Each step solves an (n+1) x (n+1) dense system (O(n^3)); M K is formed once, and the first
    step (the LapRLSC system, the same for every one-vs-all column) is factorized once.

    Parameters
    ----------
    %(manifold_parameters)s
    max_iter : int >= 1, default=50
        Most Newton steps.

    Attributes
    ----------
    %(manifold_attributes)s
    n_iter_ : int
        Newton steps (largest over the columns; per column in ``n_iter_per_class_``).
    objective_ : list of float
        Eq. 7 at the solution, per column.
    converged_, stop_reason_
        Whether every column's error-vector set stopped changing.

    References
    ----------
    Melacci & Belkin, "Laplacian Support Vector Machines Trained in the Primal", JMLR 12, 2011:
    the primal problem Eq. 7, Newton's step Eq. 8 with the gradient Eq. 9 and the generalized
    Hessian, i.e. the update of Eq. 10-11 (section 3.1).
    """

    # floors: the defaults reached 89.2 96.2 96.2; one count: lap_svm_dual keeps its objective's
    __gssl_tags__ = {"name": "lap_svm_newton", "aliases": ("lapsvm_newton",),
                     "family": "laplacian_svm", "floors": {5: 90}}

    _parameter_constraints = {**_ManifoldKernelMachine._parameter_constraints,
                              "max_iter": [Int(1)]}

    def __init__(self, *, kernel=DEFAULT_KERNEL, gamma_A=1e-6, gamma_I=1e-2, laplacian=None,
                 laplacian_power=None, max_iter=50):
        self.kernel = kernel
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.max_iter = max_iter

    def _fit(self, graph, codes, n_classes):
        K, M, lab, Y = self._prepare(graph, codes, n_classes)
        MK = M.dense_times(K)
        M1 = M @ np.ones(K.shape[0])
        results = lapsvm_newton_ova(K, M, lab, Y, self.gamma_A, self.gamma_I,
                                    max_iter=self.max_iter, MK=MK, M1=M1)
        self._summarize(results)
        return self._finish(K, [r.alpha for r in results], [r.b for r in results])


class _PCGParams:
    """The PCG solver's options and its run over the one-vs-all columns."""

    _parameter_constraints = {"stopping": [StrOptions(STOPPING)],
                              "check_every": [Int(1), None],  # None: ceil(sqrt(n) / 2)
                              "stability_tol": [Real(0, 1, closed="left")],
                              "tol": [positive],
                              "max_iter": [Int(1), None]}     # None: 10 n

    def _run_pcg(self, K, M, lab, Y, n_classes, loss):
        n = K.shape[0]
        if self.stopping in ("validation", "mixed") and self._validation is None:
            raise SolverError(f"{type(self).__name__}: stopping={self.stopping!r} needs validation "
                              f"nodes (fit(..., validation=(indices, labels)); in the workflow a "
                              f"protocol with validation points such as melacci_cv); use "
                              f"stopping='stability' without them")
        every = self.check_every or default_check_every(n)
        unl = self._unlabeled(n, lab)
        results = []
        for c in range(Y.shape[1]):
            crit = make_criterion(self.stopping, every, self.stability_tol, self.tol)
            results.append(manifold_pcg(
                K, M, lab, Y[:, c], self.gamma_A, self.gamma_I, loss=loss, criterion=crit,
                max_iter=self.max_iter, unlabeled=unl,
                validation=self._val_targets(n_classes, c)))
        self.check_every_ = every
        return results


@documented()
class LapSVMPCG(_PCGParams, _ManifoldKernelMachine):
    """Primal LapSVM (Eq. 7) by preconditioned conjugate gradient (Algorithm 1 of the paper):
    preconditioner blockdiag(K, 1), Polak–Ribière with automatic restart, exact line search over
    the squared-hinge breakpoints, one K-by-vector product per iteration (K M K never formed).

    ``stopping``: "stability" (decisions on unlabeled nodes change <= ``stability_tol``, checked
    every ``check_every`` iterations, default ceil(sqrt(n)/2)), "validation" (validation errors stop
    decreasing), "mixed" (both), "gradient" (preconditioned gradient norm <= ``tol`` x initial),
    "objective" (relative decrease <= ``tol``), "none" (to convergence, gradient 1e-10 x initial).
    ``max_iter`` defaults to 10 n. stop_reason_ names the criterion that fired.

    Parameters
    ----------
    %(manifold_parameters)s
    stopping : str, default="stability"
        Stopping criterion: "stability", "validation", "mixed", "gradient", "objective" or
        "none" (above).
    check_every : int >= 1 or None, default=None
        Iterations between two checks of the early-stopping criteria; None: ceil(sqrt(n)/2).
    stability_tol : float in [0, 1), default=0.015
        Largest fraction of unlabeled decisions that may change for "stability" to stop.
    tol : float > 0, default=1e-3
        Relative tolerance of "gradient" and "objective".
    max_iter : int >= 1 or None, default=None
        Most PCG iterations per column; None: 10 n.

    Attributes
    ----------
    %(manifold_attributes)s
    n_iter_ : int
        PCG iterations (largest over the columns; per column in ``n_iter_per_class_``).
    check_every_ : int
        The check interval used.
    objective_ : list of float
        Eq. 7 at the returned iterate, per column.
    converged_, stop_reason_
        Whether and by which criterion each column stopped.

    References
    ----------
    Melacci & Belkin, "Laplacian Support Vector Machines Trained in the Primal", JMLR 12, 2011:
    Eq. 7 minimized by Algorithm 1 (PCG on the system of Eq. 12, exact line search of Eq. 13),
    early stopping of section 4.
    """

    # floors: the defaults reached 78.3 93.1 93.9
    __gssl_tags__ = {"name": "lap_svm_pcg", "aliases": ("lapsvm_pcg",), "family": "laplacian_svm",
                     "floors": {1: 72, 5: 87, 10: 87},
                     "summary": "early stopping: `stability`, `validation`, `mixed`, `gradient`, `objective`"}

    _parameter_constraints = {**_ManifoldKernelMachine._parameter_constraints,
                              **_PCGParams._parameter_constraints}

    def __init__(self, *, kernel=DEFAULT_KERNEL, gamma_A=1e-6, gamma_I=1e-2, laplacian=None,
                 laplacian_power=None, stopping="stability", check_every=None, stability_tol=0.015,
                 tol=1e-3, max_iter=None):
        self.kernel = kernel
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.stopping = stopping
        self.check_every = check_every
        self.stability_tol = stability_tol
        self.tol = tol
        self.max_iter = max_iter

    def _fit(self, graph, codes, n_classes):
        K, M, lab, Y = self._prepare(graph, codes, n_classes)
        results = self._run_pcg(K, M, lab, Y, n_classes, "squared_hinge")
        self._summarize(results)
        return self._finish(K, [r.alpha for r in results], [r.b for r in results])


@documented()
class LapRLSC(_PCGParams, _ManifoldKernelMachine):
    """Laplacian RLS classifier with bias (Eq. 14), ``method`` "closed_form" (Eq. 15, one dense
    (n+1) system for all columns) or "pcg" (same PCG as LapSVMPCG with the closed-form step and the
    same ``stopping`` options; default "none" = to convergence).

    Same gamma_A, gamma_I as gssl's ``lap_rls`` (LaplacianRLS: (J K + gamma_A I + gamma_I L K) a = Y,
    whose objective is twice Eq. 14's) except that this one has the unregularized bias b.

    Parameters
    ----------
    %(manifold_parameters)s
    method : {"closed_form", "pcg"}, default="closed_form"
        The linear system of Eq. 15, or PCG.
    stopping, check_every, stability_tol, tol, max_iter
        PCG options (``method="pcg"``), as :class:`LapSVMPCG`; ``stopping`` defaults to "none".

    Attributes
    ----------
    %(manifold_attributes)s
    n_iter_ : int
        1 (closed form) or PCG iterations (largest over the columns).
    objective_ : list of float
        Eq. 14 at the solution, per column.

    References
    ----------
    Melacci & Belkin, "Laplacian Support Vector Machines Trained in the Primal", JMLR 12, 2011:
    the LapRLSC objective Eq. 14 and its linear system Eq. 15 (section 5).
    """

    # floors: the defaults reached 89.2 96.2 96.1
    __gssl_tags__ = {"name": "lap_rls_pcg", "aliases": ("laprlsc",), "family": "laplacian_svm",
                     "floors": {1: 83, 5: 90, 10: 90}}

    _parameter_constraints = {**_ManifoldKernelMachine._parameter_constraints,
                              **_PCGParams._parameter_constraints,
                              "method": [StrOptions(("closed_form", "pcg"))]}

    def __init__(self, *, kernel=DEFAULT_KERNEL, gamma_A=1e-6, gamma_I=1e-2, laplacian=None,
                 laplacian_power=None, method="closed_form", stopping="none", check_every=None,
                 stability_tol=0.015, tol=1e-3, max_iter=None):
        self.kernel = kernel
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.method = method
        self.stopping = stopping
        self.check_every = check_every
        self.stability_tol = stability_tol
        self.tol = tol
        self.max_iter = max_iter

    def _fit(self, graph, codes, n_classes):
        K, M, lab, Y = self._prepare(graph, codes, n_classes)
        if self.method == "pcg":
            results = self._run_pcg(K, M, lab, Y, n_classes, "squared")
            self._summarize(results)
            return self._finish(K, [r.alpha for r in results], [r.b for r in results])
        alpha, b = laprlsc_closed_form(K, M, lab, Y, self.gamma_A, self.gamma_I)
        self.n_iter_ = 1
        self.objective_ = [primal_objective(K, M, lab, Y[:, c], self.gamma_A, self.gamma_I,
                                            alpha[:, c], b[c], loss="squared")
                           for c in range(Y.shape[1])]
        self.history_ = [{"iteration": 1, "column": c, "objective": o}
                         for c, o in enumerate(self.objective_)]
        return self._finish(K, list(alpha.T), list(b))


__all__ = ["LapSVMDual", "LapSVMNewton", "LapSVMPCG", "LapRLSC", "lapsvm_dual"]
