"""Sparse label propagation on the cached graph W; the numerics live in
:mod:`gssl.optim.sparse_label_propagation`."""

from __future__ import annotations

from ..optim.sparse_label_propagation import sparse_label_propagation
from .docstrings import documented
from .graph_learner import GraphLearner
from .params import Int


@documented()
class SparseLabelPropagation(GraphLearner):
    """Sparse label propagation (Jung, Hero, Mara & Jahromi 2016): the graph total variation of
    the class indicators minimized with the labeled nodes fixed, by a fixed number of
    preconditioned primal-dual steps (Chambolle & Pock) on the graph's weighted incidence matrix.

    Parameters
    ----------
    n_steps : int >= 1, default=100
        Primal-dual steps (GraphLearning 1.7.5's ``T``, same default).
    %(graph_learner_parameters)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        The primal iterate U (labeled rows: their indicators).
    n_iter_ : int
        Steps (``n_steps``).
    %(fixed_steps_attributes)s

    References
    ----------
    Jung, Hero, Mara & Jahromi, "Semi-supervised learning via sparse label propagation",
    arXiv:1612.01414, 2016, Algorithm 1; Pock & Chambolle, "Diagonal preconditioning for first
    order primal-dual algorithms in convex optimization", ICCV 2011.
    """

    __gssl_tags__ = {"name": "sparse_label_propagation", "family": "graph_learning",
                     "floors": {1: 29, 5: 60, 10: 80}, "summary": "primal-dual, on the incidence matrix",
                     "paper": "Jung et al. 2016"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "n_steps": [Int(1)]}

    def __init__(self, *, n_steps=100, class_priors=None, unreachable="error"):
        self.n_steps = n_steps
        self.class_priors = class_priors
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        U = sparse_label_propagation(graph.W, codes, n_classes, n_steps=self.n_steps)
        self.n_iter_, self.converged_, self.stop_reason_ = self.n_steps, True, "max_iter"
        return U
