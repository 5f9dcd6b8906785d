"""The random walk, graph nearest neighbour, centered kernel, AMLE and p-eikonal classifiers on
graph.W.

The numerics live in :mod:`gssl.optim.propagation` and :mod:`gssl.optim.eikonal`; ``class_priors`` and ``unreachable`` are
those of every graph learner (:mod:`gssl.solvers.graph_learning`).
"""

from __future__ import annotations

import numpy as np

from ..optim.eikonal import peikonal
from ..optim.graph_learning import one_hot
from ..optim.propagation import amle, centered_kernel, nearest_labeled, random_walk
from .docstrings import documented
from .graph_learner import GraphLearner
from .params import Int, Real, StrOptions, positive


@documented()
class RandomWalk(GraphLearner):
    """Random-walk label propagation (Zhou & Schoelkopf 2004; GraphLearning's ``randomwalk``):
    U solves (I - alpha D^-1/2 W D^-1/2) U = Y, Y the one-hot labels at the labeled nodes, by
    block CG to ``tol``. The same U as ``label_spreading(graph="given", alpha=alpha)`` once that
    iteration has converged (its default 30 iterations stop short).

    Parameters
    ----------
    alpha : float in (0, 1), default=0.95
        Share of a node's score that comes from its neighbours (GraphLearning's default).
    tol : float, default=1e-6
        Relative residual of CG per class (GraphLearning's CG stops at 1e-6 too).
    max_iter : int, default=1000
        Most CG iterations (the condition number is at most (1 + alpha) / (1 - alpha)).
    %(graph_learner_parameters)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        U.
    %(cg_attributes)s
    fit_metrics_ : dict
        ``unreached_nodes``, ``cg_residual`` and, with class priors, ``volume_misfit``.

    References
    ----------
    Zhou & Schoelkopf, "Learning from Labeled and Unlabeled Data Using Random Walks", DAGM 2004
    (LNCS 3175); Zhou, Bousquet, Lal, Weston & Schoelkopf, "Learning with Local and Global
    Consistency", NIPS 16, 2004 (the closed form (I - alpha S)^-1 Y).
    """

    __gssl_tags__ = {"name": "randomwalk", "family": "graph_learning", "floors": {1: 82, 5: 89, 10: 90},
                     "summary": "Zhou & Schölkopf's random walk, `alpha`", "paper": "Zhou & Schölkopf 2004"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "alpha": [Real(0, 1, closed="neither")],
                              "tol": [positive],
                              "max_iter": [Int(1)]}

    def __init__(self, *, alpha=0.95, tol=1e-6, max_iter=1000, class_priors=None,
                 unreachable="error"):
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        labeled = np.flatnonzero(codes >= 0)
        Y = np.zeros((codes.size, n_classes))
        Y[labeled] = one_hot(codes[labeled], n_classes)
        cg = random_walk(graph.W, Y, float(self.alpha), tol=self.tol, max_iter=self.max_iter)
        self._cg_stop(cg)
        return cg.X


@documented()
class GraphNearestNeighbor(GraphLearner):
    """Graph nearest neighbour: each node takes the class of the labeled node nearest to it in
    path length on W (Dijkstra from all labeled nodes at once; GraphLearning's
    ``graph_nearest_neighbor``). decision_function_ is the one-hot class of that labeled node.

    Parameters
    ----------
    edge_length : {"weight", "inverse_weight"}, default="weight"
        An edge's length: its weight w_ij (GraphLearning's choice, which reads W as distances)
        or 1 / w_ij.
    class_priors : None, "uniform", "labeled" or list of float, default=None
        Class fractions for the volume-constrained label decision (None: the nearest's class).
    %(unreachable)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        One-hot class of the nearest labeled node.
    fit_metrics_ : dict
        ``unreached_nodes``, ``mean_distance`` (mean path length of the unlabeled nodes to
        their nearest labeled node) and, with class priors, ``volume_misfit``.

    References
    ----------
    Dijkstra, "A note on two problems in connexion with graphs", Numerische Mathematik 1, 1959;
    used as a baseline by Calder, Cook, Thorpe & Slepcev, ICML 2020 (Table 2, "nearest neighbor").
    """

    __gssl_tags__ = {"name": "graph_nearest_neighbor", "family": "graph_learning",
                     "floors": {1: 61, 5: 77, 10: 79},
                     "summary": "class of the nearest labeled node in path length"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "edge_length": [StrOptions(("weight", "inverse_weight"))]}

    def __init__(self, *, edge_length="weight", class_priors=None, unreachable="error"):
        self.edge_length = edge_length
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        labeled = np.flatnonzero(codes >= 0)
        nearest, dist = nearest_labeled(graph.W, labeled, self.edge_length)
        unl = np.ones(codes.size, dtype=bool)
        unl[labeled] = False
        self.fit_metrics_["mean_distance"] = float(dist[unl].mean()) if unl.any() else 0.0
        return one_hot(codes[labeled][nearest], n_classes)


@documented()
class CenteredKernel(GraphLearner):
    """Centered kernel method (Mai & Couillet 2018; GraphLearning's ``centered_kernel``): the
    centred labels extended by the centred kernel P W P / a, a = ``alpha`` x its largest
    |eigenvalue|; solved by block CG on the unlabeled nodes.

    Parameters
    ----------
    alpha : float > 1, default=1.05
        The scale a as a multiple of the kernel's largest |eigenvalue| (GraphLearning's default).
    tol : float, default=1e-8
        Relative CG residual per class (GraphLearning iterates the fixed point to a change of
        1e-10 per step, about 1e-9 relative at its rate 1 / alpha).
    max_iter : int, default=1000
        Most CG iterations.
    %(graph_learner_parameters)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        The extension of the centred labels.
    %(cg_attributes)s
    fit_metrics_ : dict
        ``unreached_nodes``, ``cg_residual``, ``kernel_scale`` (a) and, with class priors,
        ``volume_misfit``.

    References
    ----------
    Mai & Couillet, "Random Matrix-Inspired Improved Semi-Supervised Learning on Graphs", ICML
    2018 (the centred similarity matrix and its regularized extension of the centred scores).
    """

    __gssl_tags__ = {"name": "centered_kernel", "family": "graph_learning", "floors": {1: 78, 5: 88, 10: 88},
                     "summary": "Mai & Couillet's centered kernel, `alpha`", "paper": "Mai & Couillet 2018"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "alpha": [Real(1, None, closed="neither")],
                              "tol": [positive],
                              "max_iter": [Int(1)]}

    def __init__(self, *, alpha=1.05, tol=1e-8, max_iter=1000, class_priors=None,
                 unreachable="error"):
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        labeled = np.flatnonzero(codes >= 0)
        cg, a = centered_kernel(graph.W, labeled, one_hot(codes[labeled], n_classes),
                                float(self.alpha), tol=self.tol, max_iter=self.max_iter)
        self._cg_stop(cg)
        self.fit_metrics_["kernel_scale"] = a
        return cg.X


@documented()
class AMLE(GraphLearner):
    """Absolutely minimal Lipschitz extension of each class's indicator (the infinity-Laplace
    equation, unweighted as GraphLearning's ``amle`` default), by Gauss-Seidel sweeps to ``tol``.

    Parameters
    ----------
    tol : float, default=1e-3
        Largest change of a sweep at which a class stops (GraphLearning's default). The sweeps
        converge slowly and near-tied classes keep trading nodes: 1e-6 changes 0.5-1 % of the
        labels on digits, without a gain in accuracy.
    max_iter : int, default=100000
        Most sweeps (GraphLearning's default).
    %(graph_learner_parameters)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        The AMLE of each class's indicator.
    n_iter_ : int
        Sweeps of the slowest class.
    converged_, stop_reason_
        Whether it reached ``tol``.
    %(fit_metrics_)s

    References
    ----------
    Kyng, Rao, Sachdeva & Spielman, "Algorithms for Lipschitz Learning on Graphs", COLT 2015;
    Calder, "Consistency of Lipschitz learning with infinite unlabeled data and finite labeled
    data", SIAM J. Math. Data Sci. 1, 2019.
    """

    __gssl_tags__ = {"name": "amle", "family": "graph_learning", "floors": {1: 74, 5: 83, 10: 87},
                     "summary": "absolutely minimal Lipschitz extension", "paper": "Kyng et al. 2015"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "tol": [positive],
                              "max_iter": [Int(1)]}

    def __init__(self, *, tol=1e-3, max_iter=100000, class_priors=None, unreachable="error"):
        self.tol = tol
        self.max_iter = max_iter
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        labeled = np.flatnonzero(codes >= 0)
        U, t, change = amle(graph.W, labeled, one_hot(codes[labeled], n_classes), tol=self.tol,
                            max_iter=self.max_iter)
        self._sweep_stop(t, change)
        return U


@documented()
class PEikonal(GraphLearner):
    """p-eikonal classifier (Calder & Ettehad 2022; GraphLearning's ``peikonal``): for each class
    c, u_c solves sum_j w_ij (u_i - u_j)_+^p = 1 off class c's labeled nodes, u_c = 0 on them
    (a graph distance to the class); each node takes the class of smallest u_c. Solved by a fast
    marching method (:mod:`gssl.optim.eikonal`). decision_function_ is -u (larger: nearer); a
    node that no labeled node of class c reaches (another class's component) scores 1 below the
    lowest reached score for that class, so the class is never chosen there.

    Parameters
    ----------
    p : float > 0, default=1.0
        Exponent of the equation (GraphLearning's default; p = 1 is solved exactly at each node,
        other p by bisection).
    n_bisect : int >= 1, default=30
        Bisection steps of a node's equation for p != 1 (GraphLearning's default).
    class_priors : None, "uniform", "labeled" or list of float, default=None
        Class fractions for the volume-constrained label decision (None: the nearest class).
    %(unreachable)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        -u, the negated p-eikonal distances.
    %(fit_metrics_)s

    References
    ----------
    Calder & Ettehad, "Hamilton-Jacobi equations on graphs with applications to semi-supervised
    learning and data depth", Journal of Machine Learning Research 23, 2022.
    """

    __gssl_tags__ = {"name": "peikonal", "family": "graph_learning", "floors": {1: 81, 5: 88, 10: 88},
                     "summary": "p-eikonal distance to each class, `p`", "paper": "Calder & Ettehad 2022"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "p": [Real(0, None, closed="neither")],
                              "n_bisect": [Int(1)]}

    def __init__(self, *, p=1.0, n_bisect=30, class_priors=None, unreachable="error"):
        self.p = p
        self.n_bisect = n_bisect
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        labeled = np.flatnonzero(codes >= 0)
        scores = -peikonal(graph.W, labeled, codes, n_classes, float(self.p),
                           n_bisect=int(self.n_bisect))
        far = np.isinf(scores)
        if far.any():
            scores[far] = scores[~far].min() - 1.0
        return scores
