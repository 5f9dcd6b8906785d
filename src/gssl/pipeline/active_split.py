"""One split of an active-learning protocol (:mod:`gssl.active.protocol`): the query loop from the
split's labeled (start) set, the labels of its unlabeled points revealed as they are queried.

The result has the shape of :func:`gssl.pipeline.stages.fit_split`'s: ``metrics`` (the errors
after the whole budget, as every table reads them, and ``error_unlabeled_at<q>`` after q queries
for each of the protocol's ``report_at``), ``history`` (one row per round: ``accuracy`` on the
points still unlabeled, ``n_labeled``, ``queries``, ``seconds`` of the round; logged as the split run's MLflow metric
history ``history.accuracy``, step = round) and ``curve`` (the same, for the report's plot)."""

from __future__ import annotations

import time

import numpy as np


def fit_active_split(cell, split: int, method: dict, active: dict, seed: int = 0) -> dict:
    """Run ``method`` (its solver as the model, its ``active`` acquisition) on one split with the
    protocol's ``active`` settings (validated: gssl.active.protocol.validate_protocol_active)."""
    from ..active import ActiveLearner, make_acquisition, run_queries
    from ..active.protocol import has_eigenpairs
    from ..errors import ConfigError
    from ..metrics import chance_error, error_rate, macro_error
    from ..optim.mbo import normalized_eigenpairs
    from ..solvers.registry import make_solver, solver_class
    from ..splits import LABELED, UNLABELED

    y, role = cell.y, cell.roles[split]
    start = np.flatnonzero(role == LABELED)
    oracle = np.where((role == LABELED) | (role == UNLABELED), y, -1)  # other roles: never queried
    params = dict(method.get("params") or {})
    # one seed per (experiment seed, split): random sampling and prop draws differ between draws
    rng_seed = int(np.random.SeedSequence([seed, split]).generate_state(1)[0])
    if "random_state" in solver_class(method["solver"])().get_params(deep=False):
        params.setdefault("random_state", seed)
    model = make_solver(method["solver"], params)
    acq = make_acquisition(method["active"]["acquisition"], method["active"].get("params"))
    acq_kwargs = {}
    if acq.needs_eigenpairs:
        if not has_eigenpairs(type(model)):
            raise ConfigError(f"acquisition {method['active']['acquisition']!r} needs the eigenpairs "
                              f"of a graph-learning method's Laplacian; solver {method['solver']!r} "
                              f"has none")
        # W's eigenpairs: once per cell inside run_cell's shared_graph_operators block
        acq_kwargs["eigenpairs"] = normalized_eigenpairs(cell.graph.W, min(acq.n_eig, y.size - 1))
    learner = ActiveLearner(model, acq, policy=active["policy"], batch=active["batch"],
                            candidates=np.flatnonzero(role == UNLABELED),
                            prop_gamma=active["prop_gamma"], random_state=rng_seed)
    t = time.perf_counter()
    hist = run_queries(learner, cell.graph, oracle, start, budget=active["budget"],
                       n_classes=cell.n_classes, **acq_kwargs)
    seconds = time.perf_counter() - t
    queries = [n - hist.n_labeled[0] for n in hist.n_labeled]
    pred = np.asarray(model.transduction_)
    left = (role == UNLABELED) & ~learner._is_labeled
    metrics = {"fit_seconds": seconds, "acquisition_seconds": hist.acquisition_seconds,
               "refit_seconds": hist.fit_seconds, "n_labeled": int(learner.labeled.size),
               "n_start": int(start.size), "n_queries": int(queries[-1]), "n_nodes": int(y.size),
               "n_iter": float(len(queries) - 1), "converged": 1.0,
               "error_unlabeled": error_rate(y[left], pred[left]),
               "macro_error_unlabeled": macro_error(y[left], pred[left]),
               "chance_error_unlabeled": chance_error(y[left])}
    for q in active["report_at"]:  # the first round with at least q queries
        i = next(i for i, done in enumerate(queries) if done >= q)
        metrics[f"error_unlabeled_at{q}"] = 100.0 * (1.0 - hist.accuracy[i])  # %, as error_rate
    history = [{"accuracy": a, "n_labeled": n, "queries": q, "seconds": t}
               for a, n, q, t in zip(hist.accuracy, hist.n_labeled, queries, hist.seconds, strict=True)]
    return {"split": split, "metrics": metrics, "history": history, "predictions": pred.tolist(),
            "converged": True, "stop_reason": f"budget of {queries[-1]} queries",
            "curve": {"queries": queries, "accuracy": hist.accuracy,
                      "queried": [q for batch in hist.queried for q in batch]}}
