"""The base of the graph-learning solvers (:mod:`gssl.solvers.graph_learning`,
:mod:`gssl.solvers.mbo`): :class:`GraphLearner`.

``class_priors`` (every graph learner): ``None`` (labels are the arg-max of the scores) or a rule
of :mod:`gssl.solvers.class_priors`; with priors, labels come from the volume-constrained
projection of the scores (:func:`gssl.optim.graph_learning.volume_label_projection`).
``unreachable`` (every graph learner): what to do with nodes in graph components that hold no
labeled node, whose labels no graph method can decide: ``"error"`` (default: SolverError saying
so) or ``"abstain"`` (solve on the labeled components; the others get label -1, scored as
errors, and their count is ``fit_metrics_["unreached_nodes"]``).
"""

from __future__ import annotations

import numpy as np

from ..errors import SolverError
from ..optim.graph_learning import volume_label_projection
from ..optim.reachability import components, reached_nodes, unreached_message
from .base import SemiSupervisedClassifier
from .class_priors import class_priors_spec, resolve_priors
from .params import StrOptions

UNREACHABLE = ("error", "abstain")


class GraphLearner(SemiSupervisedClassifier):
    """Shared handling: nodes in graph components without a label (``unreachable``), the solve
    (``_solve``, which may record ``fit_metrics_``) and the optional prior correction."""

    _parameter_constraints = {**SemiSupervisedClassifier._parameter_constraints,
                              "class_priors": [class_priors_spec, None],  # None: arg-max labels
                              "unreachable": [StrOptions(UNREACHABLE)]}

    def _fit(self, graph, codes, n_classes):
        from ..graphs.base import Graph

        self.fit_metrics_ = {}  # nothing left over from an earlier fit
        comp = components(graph.W)  # once per fit: the solvers below reuse it (self._comp)
        reach = reached_nodes(graph.W, np.flatnonzero(codes >= 0), comp)
        n_out = int((~reach).sum())
        self.fit_metrics_["unreached_nodes"] = n_out
        if n_out and self.unreachable == "error":
            raise SolverError(unreached_message(n_out, np.unique(comp[~reach]).size))
        if n_out:  # solve on the labeled components; the others abstain (label -1)
            keep = np.flatnonzero(reach)
            X = None if graph.X is None else graph.X[keep]
            graph = Graph(W=graph.W[keep][:, keep], X=X, params=graph.params, checked=True)
            codes_all, codes, comp = codes, codes[keep], comp[keep]
        self._comp = comp
        try:
            out = self._solve(graph, codes, n_classes)
        finally:
            del self._comp
        scores, labels = out if isinstance(out, tuple) else (out, None)
        if labels is None:  # the method's own labels (PoissonMBO) are kept as they are
            priors = resolve_priors(self.class_priors, codes, n_classes)
            if priors is not None:
                labels, _, self.fit_metrics_["volume_misfit"] = volume_label_projection(scores, priors)
        if not n_out:
            return scores if labels is None else (scores, labels)
        full = np.zeros((codes_all.size, n_classes))
        full[keep] = scores
        full_labels = np.full(codes_all.size, -1)
        full_labels[keep] = np.argmax(scores, axis=1) if labels is None else labels
        return full, full_labels

    def _solve(self, graph, codes, n_classes):
        """Class scores (n, C), or (scores, class indices) when the method decides the labels."""
        raise NotImplementedError

    def _cg_stop(self, cg, *, report_residual=True):
        """Iterations, stop and criterion of a block CG solve (each class's relative residual
        against ``tol``; the largest is reported) and, with ``report_residual``, that residual as
        ``fit_metrics_["cg_residual"]``."""
        residual = float(cg.residual.max(initial=0.0))
        self.n_iter_, self.converged_ = cg.n_iter, cg.converged
        self.stop_reason_ = "tol" if cg.converged else "max_iter"
        self.criteria_ = {"relative CG residual": (residual, self.tol)}
        if report_residual:
            self.fit_metrics_["cg_residual"] = residual

    def _sweep_stop(self, n_iter, change):
        """Iterations, stop and criterion of an iteration that stops once the largest change of a
        sweep is at most ``tol``."""
        self.n_iter_, self.converged_ = n_iter, change <= self.tol
        self.stop_reason_ = "tol" if self.converged_ else "max_iter"
        self.criteria_ = {"largest change of a sweep": (change, self.tol)}
