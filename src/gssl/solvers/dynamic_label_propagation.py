"""Dynamic label propagation on the cached graph W; the numerics live in
:mod:`gssl.optim.dynamic_label_propagation`."""

from __future__ import annotations

from ..optim.dynamic_label_propagation import dynamic_label_propagation
from .docstrings import documented
from .graph_learner import GraphLearner
from .params import Int, nonnegative


@documented()
class DynamicLabelPropagation(GraphLearner):
    """Dynamic label propagation (Wang, Tu & Tsotsos 2013): label propagation by P = D^-1 W
    whose transition operator is updated each step, P_{t+1} = P P_t P^T + alpha V_t V_t^T +
    lambda I (V_t = P U_t, the label similarities of the last step), the labeled rows reset after
    every step. P_t is applied by its recursion, never formed, so that the method runs on graphs
    of any size (GraphLearning 1.7.5 forms it densely and refuses graphs above 5,000 nodes).

    Parameters
    ----------
    alpha : float >= 0, default=0.05
        Weight of the label-similarity term (GraphLearning's default).
    lam : float >= 0, default=0.1
        Weight of the identity term (GraphLearning's default).
    n_steps : int >= 1, default=2
        Propagation steps (GraphLearning's ``T``, same default; the paper's iteration count).
    %(graph_learner_parameters)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        The propagated scores U.
    n_iter_ : int
        Steps (``n_steps``).
    %(fixed_steps_attributes)s

    References
    ----------
    Wang, Tu & Tsotsos, "Dynamic Label Propagation for Semi-supervised Multi-class Multi-label
    Classification", ICCV 2013, section 3 (Algorithm 1).
    """

    __gssl_tags__ = {"name": "dynamic_label_propagation", "family": "graph_learning",
                     "floors": {1: 75, 5: 87, 10: 89}, "paper": "Wang, Tu & Tsotsos 2013"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "alpha": [nonnegative],
                              "lam": [nonnegative],
                              "n_steps": [Int(1)]}

    def __init__(self, *, alpha=0.05, lam=0.1, n_steps=2, class_priors=None,
                 unreachable="error"):
        self.alpha = alpha
        self.lam = lam
        self.n_steps = n_steps
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        U = dynamic_label_propagation(graph.W, codes, n_classes, alpha=self.alpha, lam=self.lam,
                                      n_steps=self.n_steps)
        self.n_iter_, self.converged_, self.stop_reason_ = self.n_steps, True, "max_iter"
        return U
