"""Laplace, Poisson, PoissonMBO and p-Laplace learning on the cached graph W.

The numerics live in :mod:`gssl.optim.graph_learning`; these classes validate parameters, map
labels and expose the scikit-learn estimator interface of :class:`SemiSupervisedClassifier`.
Every class here takes ``class_priors`` and ``unreachable`` (:mod:`gssl.solvers.graph_learner`).
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..optim.graph_learning import (R_RULES, REWEIGHTINGS, laplace_learning, one_hot, poisson_cg,
                                    poisson_mbo, poisson_random_walk, poisson_source, reweight)
from ..optim.plaplace import plaplace_learning
from .class_priors import class_priors_spec, resolve_priors
from .docstrings import documented
from .graph_learner import GraphLearner
from .params import Int, Real, StrOptions, positive


@documented()
class LaplaceLearning(GraphLearner):
    """Laplace learning (harmonic extension; Zhu, Ghahramani & Lafferty 2003) on graph.W.

    Parameters
    ----------
    reweighting : {"none", "wnll", "properly"}, default="none"
        Weights raised near the labeled nodes before solving: WNLL (Shi, Osher & Zhu 2017) or the
        properly weighted Laplacian (Calder & Slepcev 2019; needs node features graph.X).
    r : float or "median_label_distance", default=0.1
        Radius of the properly weighted Laplacian, in feature units (GraphLearning's default), or
        the median distance from the unlabeled nodes to their nearest labeled node (a scale that
        follows the data's: 0.1 is tiny on pixels in 0..255, where only the labeled nodes' edges
        would be raised).
    alpha, zeta : float, default=2.0, 1e7
        Exponent and cap of the properly weighted Laplacian.
    tol : float, default=1e-5
        Relative residual at which the block conjugate gradients (the classes share one Krylov
        space) stop, per class (GraphLearning's default value, which it applies to the absolute
        residual of all classes together).
    max_iter : int, default=10000
        Most CG iterations (GraphLearning's conjugate gradients allow 100,000).
    %(graph_learner_parameters)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        The harmonic functions, one per class (the labeled rows are the indicators).
    %(cg_attributes)s
    fit_metrics_ : dict
        ``unreached_nodes``, ``cg_residual`` and, with class priors, ``volume_misfit``.

    References
    ----------
    Zhu, Ghahramani & Lafferty, "Semi-Supervised Learning Using Gaussian Fields and Harmonic
    Functions", ICML 2003; Shi, Osher & Zhu, "Weighted Nonlocal Laplacian on Interpolation from
    Sparse Data", J. Sci. Comput. 73, 2017, eq. (6) (``wnll``); Calder & Slepcev, "Properly-weighted
    graph Laplacian for semi-supervised learning", Appl. Math. Optim. 82, 2020 (arXiv 2019),
    section 2 (``properly``).
    """

    # floors: the defaults reached 89.1 96.6 95.9
    __gssl_tags__ = {"name": "laplace", "family": "graph_learning",
                     "floors": {1: 83, 5: 90, 10: 89},
                     "summary": "harmonic extension; `reweighting: none \\| wnll \\| properly`"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "reweighting": [StrOptions(REWEIGHTINGS)],
                              "r": [positive, StrOptions(R_RULES)],
                              "alpha": [positive],
                              "zeta": [Real(1, None, closed="neither")],
                              "tol": [positive],
                              "max_iter": [Int(1)]}

    def __init__(self, *, reweighting="none", r=0.1, alpha=2.0, zeta=1e7, tol=1e-5, max_iter=10000,
                 class_priors=None, unreachable="error"):
        self.reweighting = reweighting
        self.r = r
        self.alpha = alpha
        self.zeta = zeta
        self.tol = tol
        self.max_iter = max_iter
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        labeled = np.flatnonzero(codes >= 0)
        W = reweight(graph.W, labeled, self.reweighting, graph.X, r=self.r, alpha=self.alpha,
                     zeta=self.zeta)
        U, cg = laplace_learning(W, labeled, one_hot(codes[labeled], n_classes), tol=self.tol,
                                 max_iter=self.max_iter, checked=True)
        self._cg_stop(cg)
        return U


@documented()
class PoissonLearning(GraphLearner):
    """Poisson learning (Calder, Cook, Thorpe & Slepcev, ICML 2020) on graph.W.

    Solves L U = B, B the centred one-hot labels at the labeled nodes (sum_i d_i U_i = 0); the
    labels are the arg-max of U (or its volume-constrained projection with ``class_priors``).

    Parameters
    ----------
    solver : {"cg", "random_walk"}, default="cg"
        Block conjugate gradients on the normalized system (the classes share one Krylov
        space), or the paper's iteration
        U <- U + D^-1 (B - L U) stopped when the random walk from the labeled nodes has mixed.
    tol : float, default=1e-4
        CG: relative residual per class. GraphLearning's default is 1e-3, on the absolute
        residual of all classes together, about 2x tighter per class on these graphs; 1e-4 here
        makes the labels agree with its to 99.95 % on MNIST-10k (1e-3: 99.85 %), which PoissonMBO
        needs: started from Poisson labels 0.15 % apart, its 20 MBO steps ended 7 % apart on one
        draw.
    min_iter, max_iter : int, default=50, 1000
        Random walk: fewest and most iterations (GraphLearning's defaults for its
        ``gradient_descent`` solver); CG: ``max_iter`` x 10 iterations at most (GraphLearning's
        conjugate gradients allow 100,000).
    %(graph_learner_parameters)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        U, the Poisson solution.
    n_iter_ : int
        CG or random-walk iterations.
    converged_, stop_reason_
        Whether CG reached ``tol`` or the random walk mixed.
    %(fit_metrics_)s

    References
    ----------
    Calder, Cook, Thorpe & Slepcev, "Poisson Learning: Graph Based Semi-Supervised Learning At
    Very Low Label Rates", ICML 2020: the source B of eq. (9) and the iteration of Algorithm 1.
    """

    # floors: the defaults reached 91.1 90.0 94.3
    __gssl_tags__ = {"name": "poisson", "family": "graph_learning",
                     "floors": {1: 85, 5: 84, 10: 88}, "summary": "`solver: cg \\| random_walk`"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "solver": [StrOptions(("cg", "random_walk"))],
                              "tol": [positive],
                              "min_iter": [Int(0)],
                              "max_iter": [Int(1)]}

    def __init__(self, *, solver="cg", tol=1e-4, min_iter=50, max_iter=1000, class_priors=None,
                 unreachable="error"):
        self.solver = solver
        self.tol = tol
        self.min_iter = min_iter
        self.max_iter = max_iter
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _check_param_relations(self):
        if self.solver == "random_walk" and self.min_iter > self.max_iter:
            raise ConfigError(f"{type(self).__name__}: min_iter ({self.min_iter}) must not exceed "
                              f"max_iter ({self.max_iter})")

    def _poisson(self, graph, codes, n_classes):
        comp = self._comp
        B = poisson_source(codes, n_classes, comp)  # centred per component
        if self.solver == "cg":
            U, cg = poisson_cg(graph.W, B, tol=self.tol, max_iter=10 * self.max_iter)
            self._cg_stop(cg, report_residual=False)
        else:
            U, t, mixed = poisson_random_walk(graph.W, B, np.flatnonzero(codes >= 0),
                                              min_iter=self.min_iter, max_iter=self.max_iter)
            self.n_iter_, self.converged_ = t, mixed
            self.stop_reason_ = "mixed" if self.converged_ else "max_iter"
            self.criteria_ = {"distance of the walk to its stationary law": (None, "1/n")}
        return _single_class_components(U, comp, codes, n_classes), B

    def _solve(self, graph, codes, n_classes):
        return self._poisson(graph, codes, n_classes)[0]


def _single_class_components(U: np.ndarray, comp: np.ndarray, codes: np.ndarray,
                             n_classes: int) -> np.ndarray:
    """A component whose labeled nodes are all of one class has a zero (centred) source and a
    constant solution; its scores become that class's indicator (the only answer its labels
    give). On a connected graph with two or more classes nothing changes."""
    labeled = np.flatnonzero(codes >= 0)
    classes_in = np.zeros((comp.max() + 1, n_classes), dtype=bool)
    classes_in[comp[labeled], codes[labeled]] = True
    single = classes_in.sum(axis=1) == 1
    rows = single[comp]
    if rows.any():
        U = U.copy()
        U[rows] = classes_in[comp[rows]].astype(np.float64)
    return U


@documented()
class PoissonMBO(PoissonLearning):
    """PoissonMBO (Calder et al. 2020): Poisson learning, then ``n_outer`` MBO steps of
    ``n_inner`` heat steps with the Poisson source (fidelity ``mu``) and a volume-constrained
    projection on the class fractions ``class_priors`` (required; default ``"labeled"``).

    decision_function_ is the last heat-step U before its projection; labels are the projection.
    converged_ / stop_reason_ / n_iter_ describe the Poisson start (the MBO steps are a fixed
    number); fit_metrics_["volume_misfit"] is the class-fraction misfit of the final labels.

    Parameters
    ----------
    solver, tol, min_iter, max_iter, unreachable
        The Poisson start, as :class:`PoissonLearning` (``tol`` 1e-4 where GraphLearning's
        default is 1e-3: see there).
    class_priors : "uniform", "labeled" or list of float, default="labeled"
        Class fractions of the volume-constrained projection (required). GraphLearning has no
        default: its ``class_priors`` must be given (its examples pass the fractions of all
        points, which uses the labels of the scored points).
    mu : float > 0, default=1.0
        Fidelity weight of the Poisson source in the heat steps (GraphLearning's ``mu``, same
        default).
    n_outer : int >= 1, default=20
        MBO steps (heat steps then projection; GraphLearning's ``T``, same default).
    n_inner : int >= 1, default=40
        Heat steps per MBO step (GraphLearning's ``Ns``, same default).

    Attributes
    ----------
    classes_ : ndarray (C,)
        Class labels.
    decision_function_ : ndarray (n, C)
        The last heat-step U before its projection.
    transduction_ : ndarray (n,)
        Labels of every node: the projection (-1: unreachable, abstained).
    n_iter_, converged_, stop_reason_
        Of the Poisson start.
    fit_metrics_ : dict
        ``unreached_nodes`` and ``volume_misfit`` (of the final labels).

    References
    ----------
    Calder, Cook, Thorpe & Slepcev, "Poisson Learning: Graph Based Semi-Supervised Learning At
    Very Low Label Rates", ICML 2020, Algorithm 2 (PoissonMBO).
    """

    # floors: the defaults reached 93.5 98.2 95.0
    __gssl_tags__ = {"name": "poisson_mbo", "family": "graph_learning",
                     "floors": {1: 87, 5: 92, 10: 89}, "fast": {"n_outer": 2, "n_inner": 5}}

    _parameter_constraints = {**PoissonLearning._parameter_constraints,
                              "class_priors": [class_priors_spec],  # no None: the method needs them
                              "mu": [positive],
                              "n_outer": [Int(1)],
                              "n_inner": [Int(1)]}

    def __init__(self, *, solver="cg", tol=1e-4, min_iter=50, max_iter=1000, class_priors="labeled",
                 mu=1.0, n_outer=20, n_inner=40, unreachable="error"):
        self.solver = solver
        self.tol = tol
        self.min_iter = min_iter
        self.max_iter = max_iter
        self.class_priors = class_priors
        self.mu = mu
        self.n_outer = n_outer
        self.n_inner = n_inner
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        U, B = self._poisson(graph, codes, n_classes)
        priors = resolve_priors(self.class_priors, codes, n_classes)
        labels, U, misfit = poisson_mbo(graph.W, B, np.argmax(U, axis=1), priors, mu=self.mu,
                                        n_outer=self.n_outer, n_inner=self.n_inner)
        self.fit_metrics_["volume_misfit"] = misfit
        return U, labels


@documented()
class PLaplaceLearning(GraphLearner):
    """Game-theoretic p-Laplace learning (Flores, Calder & Lerman 2022) on graph.W, one class
    against the rest: each class's indicator is extended by the p-Laplace equation.

    Parameters
    ----------
    p : float, default=10.0
        Exponent, p > 2 (p -> 2 is Laplace learning, p -> infinity the Lipschitz extension).
    tol : float, default=1e-6
        Largest change of an iteration at which it stops (GraphLearning's default solver,
        ``fast=True``, also stops at 1e-6 whatever its ``tol``).
    max_iter : int, default=100000
        Most iterations (GraphLearning's ``max_num_it`` default is 1,000,000).
    %(graph_learner_parameters)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        The p-harmonic extension of each class's indicator.
    n_iter_ : int
        Iterations.
    converged_, stop_reason_
        Whether the last change was <= ``tol``.
    %(fit_metrics_)s

    References
    ----------
    Flores, Calder & Lerman, "Analysis and algorithms for Lp-based semi-supervised learning on
    graphs", Applied and Computational Harmonic Analysis 60, 2022.
    """

    # floors: the defaults reached 82.5 91.6 94.6
    __gssl_tags__ = {"name": "plaplace", "family": "graph_learning",
                     "floors": {1: 76, 5: 85, 10: 88}, "summary": "game-theoretic p-Laplace, `p`",
                     "fast": {"max_iter": 500, "tol": 0.0001}}

    # p -> 2 is Laplace learning (the "laplace" solver); the iteration needs a finite p
    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "p": [Real(2, np.inf, closed="neither")],
                              "tol": [positive],
                              "max_iter": [Int(1)]}

    def __init__(self, *, p=10.0, tol=1e-6, max_iter=100000, class_priors=None, unreachable="error"):
        self.p = p
        self.tol = tol
        self.max_iter = max_iter
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        labeled = np.flatnonzero(codes >= 0)
        U, t, change = plaplace_learning(graph.W, labeled, one_hot(codes[labeled], n_classes),
                                         float(self.p), tol=self.tol, max_iter=self.max_iter,
                                         checked=True)
        self._sweep_stop(t, change)
        return U
