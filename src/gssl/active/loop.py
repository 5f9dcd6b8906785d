"""The query loop: fit a classifier on the labeled set, score the candidates with an acquisition
function, query the best (``max``) or a draw weighted by them (``prop``), refit; repeat.

Any gssl classifier whose fit leaves class scores ``decision_function_`` (n, C) works as the
model (Laplace, Poisson, PoissonMBO, a plugin's :class:`gssl.SemiSupervisedClassifier`).

    learner = ActiveLearner(make_solver("laplace"), VOpt(), random_state=0)
    learner.start(G, labeled, y[labeled])
    for _ in range(10):
        q = learner.select()
        learner.update(q, y[q])

:func:`run_queries` runs the whole loop against known labels (a benchmark's oracle) and records
the accuracy after every query.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError, SolverError
from .acquisitions import Acquisition

POLICIES = ("max", "prop")


class ActiveLearner:
    """A model, an acquisition function and the labeled set, queried batch by batch.

    Parameters
    ----------
    model : gssl classifier
        Refitted on the labeled set after every batch; its ``decision_function_`` feeds the
        acquisition.
    acquisition : Acquisition
        A configured acquisition (:func:`gssl.active.registry.make_acquisition`).
    policy : {"max", "prop"} or callable, default="max"
        ``max``: the ``batch`` candidates of largest value (ties: the lower index first).
        ``prop``: ``batch`` distinct candidates drawn with probability proportional to
        ``exp(prop_gamma * value)``. A callable ``policy(candidates, values, batch, rng)``
        returns the nodes itself.
    batch : int >= 1, default=1
        Nodes queried per round.
    candidates : None, float in (0, 1) or array of node indices, default=None
        Where a query may fall: every unlabeled node (None); a random fraction of them, drawn
        afresh every round (GraphLearning's ``rand``); or the unlabeled nodes of a fixed pool.
    prop_gamma : float > 0, default=1.0
        The ``prop`` policy's inverse temperature.
    random_state : int, Generator or None
        Seeds the ``prop`` draws, the random candidates and random sampling.
    """

    def __init__(self, model, acquisition: Acquisition, *, policy="max", batch: int = 1,
                 candidates=None, prop_gamma: float = 1.0, random_state=None):
        if not isinstance(acquisition, Acquisition):
            raise ConfigError(f"acquisition must be a gssl.active.Acquisition, got {acquisition!r}")
        if not (callable(policy) or policy in POLICIES):
            raise ConfigError(f"policy must be one of {POLICIES} or a callable, got {policy!r}")
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
            raise ConfigError(f"batch must be an integer >= 1 (nodes queried per round), got {batch!r}")
        if not (isinstance(prop_gamma, (int, float)) and prop_gamma > 0):
            raise ConfigError(f"prop_gamma must be a number > 0, got {prop_gamma!r}")
        if isinstance(candidates, float) and not 0 < candidates < 1:
            raise ConfigError(f"candidates as a fraction must lie in (0, 1), got {candidates}")
        self.model, self.acquisition = model, acquisition
        self.policy, self.batch, self.prop_gamma = policy, int(batch), float(prop_gamma)
        self.candidates = candidates
        self.rng = np.random.default_rng(random_state)

    # -- the loop's three steps ----------------------------------------------------------------
    def start(self, graph, labeled, labels, n_classes: int | None = None, **acq_kwargs):
        """Fit the model on the start set and prepare the acquisition (``acq_kwargs``: passed to
        its ``start``, e.g. precomputed ``eigenpairs``)."""
        from ..graphs import as_graph

        self.graph = as_graph(graph, None)
        self.n = self.graph.n_nodes
        self.labeled = np.asarray(labeled, dtype=np.intp).copy()
        self.labels = np.asarray(labels).copy()
        if self.labeled.size != self.labels.size:
            raise SolverError(f"start: {self.labeled.size} labeled nodes but {self.labels.size} labels")
        self.n_classes = int(n_classes) if n_classes is not None else np.unique(self.labels).size
        self._is_labeled = np.zeros(self.n, dtype=bool)
        self._is_labeled[self.labeled] = True
        self.acquisition.start(self.graph.W, self.labeled, random_state=self.rng, **acq_kwargs)
        self._fit()
        return self

    def select(self, batch: int | None = None) -> np.ndarray:
        """The next batch of nodes to label (``batch`` nodes; default the learner's)."""
        cand = self.candidate_nodes()
        if cand.size == 0:
            raise SolverError("no unlabeled candidate left to query")
        values = np.asarray(self.acquisition.values(self.scores, cand), dtype=np.float64)
        if values.shape != cand.shape:
            raise SolverError(f"{type(self.acquisition).__name__}.values returned shape "
                              f"{values.shape} for {cand.size} candidates")
        self.last_values = values
        b = min(self.batch if batch is None else int(batch), cand.size)
        if callable(self.policy):
            return np.asarray(self.policy(cand, values, b, self.rng), dtype=np.intp)
        if self.policy == "max":
            return cand[np.argsort(-values, kind="stable")[:b]]
        p = np.exp(self.prop_gamma * (values - values.max()))
        nonzero = np.count_nonzero(p)
        if nonzero < b:  # underflow: the ones left come in order of value
            return cand[np.argsort(-values, kind="stable")[:b]]
        return self.rng.choice(cand, size=b, replace=False, p=p / p.sum())

    def update(self, queried, labels) -> None:
        """Add the queried nodes' labels, update the acquisition and refit the model."""
        queried = np.asarray(queried, dtype=np.intp)
        if self._is_labeled[queried].any():
            raise SolverError(f"nodes {queried[self._is_labeled[queried]].tolist()} are labeled already")
        self.labeled = np.append(self.labeled, queried)
        self.labels = np.append(self.labels, labels)
        self._is_labeled[queried] = True
        self.acquisition.update(queried)
        self._fit()

    # -- helpers -------------------------------------------------------------------------------
    def candidate_nodes(self) -> np.ndarray:
        unlabeled = np.flatnonzero(~self._is_labeled)
        c = self.candidates
        if c is None or (isinstance(c, str) and c == "full"):
            return unlabeled
        if isinstance(c, float):
            m = max(1, int(c * unlabeled.size))
            return np.sort(self.rng.choice(unlabeled, size=m, replace=False))
        pool = np.asarray(c, dtype=np.intp)
        if pool.size and (pool.min() < 0 or pool.max() >= self.n):
            raise ConfigError(f"candidates must be node indices in [0, {self.n}), got "
                              f"[{pool.min()}, {pool.max()}]")
        return pool[~self._is_labeled[pool]]

    def _fit(self) -> None:
        y = np.full(self.n, -1, dtype=np.int64)
        y[self.labeled] = self.labels
        t = time.perf_counter()
        self.model.fit(self.graph, y, n_classes=self.n_classes)
        self.fit_seconds = time.perf_counter() - t
        self.scores = self.model.decision_function_


@dataclass
class QueryHistory:
    """What :func:`run_queries` records: ``n_labeled[i]`` labels and the accuracy on the nodes
    unlabeled then (``accuracy[i]``) after round i (round 0: the start set); ``queried[i]`` the
    nodes of round i (none in round 0); ``seconds[i]`` the round's time (acquisition + refit)."""

    n_labeled: list = field(default_factory=list)
    accuracy: list = field(default_factory=list)
    queried: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    acquisition_seconds: float = 0.0
    fit_seconds: float = 0.0

    def record(self, learner, y_true, queried, seconds):
        truth = np.asarray(y_true)
        mask = (~learner._is_labeled) & (truth >= 0)
        pred = learner.model.transduction_
        self.n_labeled.append(int(learner.labeled.size))
        self.accuracy.append(float(np.mean(pred[mask] == truth[mask])) if mask.any() else float("nan"))
        self.queried.append([int(q) for q in queried])
        self.seconds.append(float(seconds))


def run_queries(learner: ActiveLearner, graph, y_true, start, *, budget: int,
                n_classes: int | None = None, **acq_kwargs) -> QueryHistory:
    """Start ``learner`` on ``start`` (node indices; their labels from ``y_true``) and query
    ``budget`` labels from the oracle ``y_true`` in batches, recording the accuracy on the
    unlabeled nodes after every round. A budget larger than the unlabeled pool is a ConfigError."""
    y_true = np.asarray(y_true)
    start = np.asarray(start, dtype=np.intp)
    pool = int(np.count_nonzero(y_true >= 0)) - np.unique(start).size
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 0:
        raise ConfigError(f"budget must be an integer >= 0 (labels to query), got {budget!r}")
    if budget > pool:
        raise ConfigError(f"budget {budget} exceeds the {pool} unlabeled nodes with a label to "
                          f"reveal; lower the budget")
    hist = QueryHistory()
    t = time.perf_counter()
    learner.start(graph, start, y_true[start], n_classes=n_classes, **acq_kwargs)
    hist.fit_seconds += learner.fit_seconds
    hist.record(learner, y_true, [], time.perf_counter() - t)
    asked = 0
    while asked < budget:
        t = time.perf_counter()
        q = learner.select(min(learner.batch, budget - asked))
        t_acq = time.perf_counter() - t
        learner.update(q, y_true[q])
        hist.acquisition_seconds += t_acq
        hist.fit_seconds += learner.fit_seconds
        asked += q.size
        hist.record(learner, y_true, q, time.perf_counter() - t)
    return hist
