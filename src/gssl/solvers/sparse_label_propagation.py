"""Sparse label propagation on the cached graph W; the numerics live in
:mod:`gssl.optim.sparse_label_propagation`."""

from __future__ import annotations

from ..optim.sparse_label_propagation import sparse_label_propagation
from .graph_learner import GraphLearner
from .params import Int


class SparseLabelPropagation(GraphLearner):
    """Sparse label propagation (Jung, Hero, Mara & Jahromi 2016): the graph total variation of
    the class indicators minimized with the labeled nodes fixed, by a fixed number of
    preconditioned primal-dual steps (Chambolle & Pock) on the graph's weighted incidence matrix.

    Parameters
    ----------
    n_steps : int >= 1, default=100
        Primal-dual steps (GraphLearning 1.7.5's ``T``, same default).
    class_priors : None, "uniform", "labeled" or list of float, default=None
        Class fractions for the volume-constrained label decision (None: arg-max).
    unreachable : {"error", "abstain"}, default="error"
        Nodes in components without a labeled node: SolverError, or label -1.

    Attributes
    ----------
    classes_ : ndarray (C,)
        Class labels.
    decision_function_ : ndarray (n, C)
        The primal iterate U (labeled rows: their indicators).
    transduction_ : ndarray (n,)
        Labels of every node (-1: unreachable, abstained).
    n_iter_ : int
        Steps (``n_steps``).
    converged_, stop_reason_
        A fixed number of steps: True, "max_iter".
    fit_metrics_ : dict
        ``unreached_nodes`` and, with class priors, ``volume_misfit``.

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
