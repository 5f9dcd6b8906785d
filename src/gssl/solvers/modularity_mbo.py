"""Modularity MBO with fidelity on the cached graph W; the numerics live in
:mod:`gssl.optim.modularity_mbo`."""

from __future__ import annotations

from ..optim.modularity_mbo import modularity_mbo
from .docstrings import documented
from .graph_learner import GraphLearner
from .params import Int, nonnegative, positive


@documented()
class ModularityMBO(GraphLearner):
    """Modularity MBO (Hu, Laurent, Porter & Bertozzi 2013) with a fidelity term at the labeled
    nodes, as GraphLearning 1.7.5 runs it (after Boyd, Bae, Tai & Bertozzi 2018): MBO steps that
    diffuse the class indicators by the heat kernel of the modularity operator
    L + (gamma / m) d d^T in the span of its lowest eigenvectors, pull the labeled nodes towards
    their labels, and threshold to the arg-max.

    Parameters
    ----------
    gamma : float >= 0, default=0.5
        Resolution of the modularity's null-model term (GraphLearning's default).
    epsilon : float > 0, default=1.0
        Sets the diffusion time's upper scale log(sqrt(#labeled) / epsilon) / lambda_1
        (GraphLearning's default); it must lie below sqrt(#labeled).
    mu : float >= 0, default=1.0
        Fidelity weight (GraphLearning's ``lamb``, same default).
    n_outer : int >= 1, default=20
        Most MBO steps (GraphLearning's ``T``, which it always runs; gssl stops once the labels
        repeat, where every later step gives them again).
    n_inner : int >= 1, default=5
        Fidelity steps per MBO step (GraphLearning's ``Ns``).
    n_eig : None or int >= 1, default=None
        Eigenvectors spanning the diffusion (None: 5 per class, GraphLearning's fixed choice).
    class_priors : None, "uniform", "labeled" or list of float, default=None
        Class fractions for the volume-constrained label decision on the last diffused U
        (GraphLearning's projects its one-hot labels); None: arg-max.
    %(unreachable)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        The last diffused U, before its thresholding.
    n_iter_ : int
        MBO steps taken.
    converged_, stop_reason_
        A fixed number of steps at most: True; "fixed point" when the labels repeated,
        otherwise "max_iter".
    fit_metrics_ : dict
        ``unreached_nodes``, ``dt`` (the diffusion time) and, with class priors,
        ``volume_misfit``.

    References
    ----------
    Hu, Laurent, Porter & Bertozzi, "A method based on total variation for network modularity
    optimization using the MBO scheme", SIAM J. Appl. Math. 73(6), 2013, sections 3-4; Boyd, Bae,
    Tai & Bertozzi, "Simplified energy landscape for modularity using total variation", SIAM J.
    Appl. Math. 78(5), 2018 (GraphLearning's reference).
    """

    __gssl_tags__ = {"name": "modularity_mbo", "family": "graph_learning", "floors": {1: 82, 5: 89, 10: 90},
                     "summary": "modularity MBO with fidelity", "paper": "Hu, Laurent, Porter & Bertozzi 2013"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "gamma": [nonnegative],
                              "epsilon": [positive],
                              "mu": [nonnegative],
                              "n_outer": [Int(1)],
                              "n_inner": [Int(1)],
                              "n_eig": [Int(1), None]}

    def __init__(self, *, gamma=0.5, epsilon=1.0, mu=1.0, n_outer=20, n_inner=5, n_eig=None,
                 class_priors=None, unreachable="error"):
        self.gamma = gamma
        self.epsilon = epsilon
        self.mu = mu
        self.n_outer = n_outer
        self.n_inner = n_inner
        self.n_eig = n_eig
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        _, U, info = modularity_mbo(graph.W, codes, n_classes, gamma=self.gamma,
                                    epsilon=self.epsilon, mu=self.mu, n_outer=self.n_outer,
                                    n_inner=self.n_inner, n_eig=self.n_eig)
        self.n_iter_, self.converged_ = info["steps"], True
        self.stop_reason_ = "fixed point" if info["fixed_point"] else "max_iter"
        self.fit_metrics_["dt"] = info["dt"]
        return U
