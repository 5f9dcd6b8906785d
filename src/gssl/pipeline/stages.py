"""One function per workflow stage: read cache files, compute, write the stage's output atomically.

The Snakemake scripts are thin wrappers around these (solve and select, around the jobs that
compose them: :mod:`.solve_job`, :mod:`.select_job`); they are equally usable from Python.
"""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path

import numpy as np

from .._package import __version__
from ..errors import ConfigError
from ..store.h5io import atomic_path, atomic_write_text, read_attrs
from ..store.hashing import file_sha256
from ..store.lineage import check_inputs, input_digests as _inputs, same_source


def fetch_dataset(source: str, raw_dir, manifest_path) -> dict:
    """Download (or copy from the mirror) every file of ``source``; write a manifest of their hashes."""
    from ..datasets import fetch

    files = fetch(source, raw_dir)
    manifest = {"source": source, "files": {name: file_sha256(p) for name, p in sorted(files.items())}}
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2) + "\n")
    return manifest


def build_dataset(dataset_id: str, entry: dict, raw_dir, out) -> None:
    """Parse a fetched (or generated) dataset, apply its class view, write the canonical file."""
    from ..datasets import FILE_SOURCE, load, read_file_dataset, save_dataset, select
    from ..datasets.views import class_view

    t0 = time.perf_counter()
    inputs = None
    if entry["source"] == FILE_SOURCE:  # the data file's sha256 is recorded with the dataset
        ds = read_file_dataset(entry, dataset_id)
        inputs = ds.meta["files"]
    else:
        ds = load(entry["source"], raw_dir=raw_dir, params=entry.get("params"))
    view = class_view(entry)
    if view:
        ds = select(ds, **view)
    ds.name = dataset_id
    save_dataset(out, ds, params=entry, inputs=inputs, build_seconds=time.perf_counter() - t0)


def build_features(data_path, steps: list, out, seed: int = 0, data_params: dict | None = None) -> None:
    """A preprocessing chain on a dataset file; ``data_params``: the dataset's config entry, which
    the file must have been built with (a dataset file of another entry in its place is refused)."""
    from ..datasets import load_dataset
    from ..features import apply_chain, save_features

    t0 = time.perf_counter()
    ds = load_dataset(data_path, expect_params=data_params, rule="dataset")
    X, artifacts = None, {}  # artifacts: what a step keeps beside X (a network's weights, losses)
    if ds.X is None:
        if steps:
            raise ConfigError(f"dataset {ds.name} is graph-only (no features); use an empty "
                              f"preprocessing chain for it")
    else:
        X = apply_chain(ds.X, steps, random_state=seed, artifacts=artifacts)
    save_features(out, X, ds.y, params={"steps": steps, "seed": seed},
                  inputs=_inputs(data=data_path), build_seconds=time.perf_counter() - t0,
                  artifacts=artifacts)


def build_graph(features_path, spec: dict, out, data_path=None) -> None:
    """The graph of a features file. ``data_path``: the dataset file the features were built from
    (the workflow always gives it): features of another dataset are refused by name."""
    from ..features import load_features
    from ..graphs import build_graph as _build
    from ..graphs.cache import save_graph

    t0 = time.perf_counter()
    X, _ = load_features(features_path, rule="features")
    if data_path is not None:
        check_inputs(features_path, read_attrs(features_path), "features", data=data_path)
    W = None
    inputs = {"features": features_path, "data": data_path}
    if spec["kind"] == "precomputed":
        from ..datasets import load_dataset

        if data_path is None:
            raise ConfigError("a precomputed graph needs the dataset file")
        W = load_dataset(data_path).W
        if W is None:
            raise ConfigError(f"graph kind 'precomputed' needs a graph dataset (like 20news); "
                              f"{data_path} holds features only: use kind knn or lle")
    graph = _build(X=X, spec=spec, W=W)
    save_graph(out, graph, params=spec, inputs=_inputs(**inputs), build_seconds=time.perf_counter() - t0)


def build_splits(data_path, dataset_id: str, protocol_id: str, spec: dict, out,
                 data_params: dict | None = None) -> None:
    """Every split of a protocol on a dataset file (``data_params``: as for :func:`build_features`)."""
    from ..datasets import load_dataset
    from ..splits import make_splits, save_splits, with_test_part

    t0 = time.perf_counter()
    ds = load_dataset(data_path, expect_params=data_params, rule="dataset")
    # a test file beside the data file (test:): the test part of the protocol, recorded beside it
    test_from = ds.meta.get("test_from")
    roles = make_splits(ds.y, with_test_part(spec, test_from, dataset_id, protocol_id), dataset_id, protocol_id)
    save_splits(out, roles, params={"protocol": spec, "dataset": dataset_id, "protocol_id": protocol_id},
                inputs=_inputs(data=data_path), build_seconds=time.perf_counter() - t0, test_from=test_from)


def expected_params(prep_steps, seed: int, graph_spec: dict, protocol_spec: dict, dataset: str,
                    protocol: str) -> dict:
    """The params the features, graph and splits files of a cell are written with (by
    build_features, build_graph and build_splits), for :class:`Cell`'s ``expect``."""
    return {"features": {"steps": prep_steps, "seed": seed}, "graph": graph_spec,
            "splits": {"protocol": protocol_spec, "dataset": dataset, "protocol_id": protocol}}


class Cell:
    """What every split of one (dataset, prep, graph, protocol) cell shares, loaded once:
    features, labels, the graph (with ``graph.X``) and the split roles.

    ``expect``: the params each file must have been built with (keys ``features``, ``graph``,
    ``splits``; see :func:`expected_params`): a file built for another config entry (a foreign or
    renamed file in its place) is refused instead of silently used.

    Lineage (:mod:`gssl.store.lineage`): the graph must have been built from these features, and
    the features and splits from one data file, ``data_path`` where given (the workflow's jobs
    give it): a valid file of another dataset of the same shape in an input's place is refused
    by name. The splits are drawn again from the labels and the protocol they record and
    compared (:func:`gssl.splits.check_rederived`), so an edited split is refused too: the
    splits ``check_splits`` names (a job's block), or every split."""

    def __init__(self, features_path, graph_path, splits_path, expect: dict | None = None,
                 data_path=None, check_splits=None):
        from ..features import load_features
        from ..graphs.cache import load_graph
        from ..splits import check_rederived, load_splits

        expect = expect or {}
        t0 = time.perf_counter()
        self.X, self.y = load_features(features_path, expect_params=expect.get("features"),
                                       rule="features")
        self.graph = load_graph(graph_path, expect_params=expect.get("graph"), rule="graph")
        self.graph.X = self.X
        self.roles = load_splits(splits_path, expect_params=expect.get("splits"), rule="splits")
        self.splits_path = splits_path
        attrs = {name: read_attrs(p) for name, p in (("features", features_path), ("graph", graph_path),
                                                     ("splits", splits_path))}
        strict = data_path is not None  # the workflow's jobs: every file records its inputs
        check_inputs(features_path, attrs["features"], "features", strict, data=data_path)
        check_inputs(graph_path, attrs["graph"], "graph", strict, features=features_path)
        check_inputs(splits_path, attrs["splits"], "splits", strict, data=data_path)
        if data_path is None:  # no data file to check each against: at least one and the same
            same_source("data", (features_path, attrs["features"]), (splits_path, attrs["splits"]))
        t1 = time.perf_counter()
        drawn = attrs["splits"]["params"]  # what they were drawn from (the workflow's: always there)
        if (strict or {"protocol", "dataset", "protocol_id"} <= set(drawn)) \
                and self.y.shape[0] == self.roles.shape[1]:  # else the size check below names all three
            check_rederived(splits_path, self.roles, self.y, drawn, only=check_splits,
                            test_from=attrs["splits"].get("test_from"))
        self.rederive_seconds = time.perf_counter() - t1
        self.protocol = drawn.get("protocol")
        n = self.y.shape[0]
        if self.graph.n_nodes != n or self.roles.shape[1] != n:
            raise ConfigError(f"size mismatch: features {n}, graph {self.graph.n_nodes}, splits "
                              f"{self.roles.shape[1]} nodes; rebuild with snakemake --forcerun")
        self.n_classes = int(self.y.max()) + 1  # -1: a point without a label (role UNSCORED)
        self.load_seconds = time.perf_counter() - t0


def run_solver(features_path, graph_path, splits_path, split: int, method: dict,
               seed: int = 0, data_path=None) -> dict:
    """Fit one method on one split; return metrics, timings, iterations and predictions
    (``data_path``: the dataset file, to check the three files' lineage against)."""
    cell = Cell(features_path, graph_path, splits_path, data_path=data_path)
    result = fit_split(cell, split, method, seed)
    result["metrics"]["load_seconds"] = cell.load_seconds
    return result


def fit_split(cell: Cell, split: int, method: dict, seed: int = 0) -> dict:
    """Fit one method on one split of a loaded cell; return metrics, history and predictions."""
    from sklearn.base import is_clusterer

    from ..metrics import (chance_error, clustering_accuracy, error_rate, macro_error, purity,
                           squared_hinge)
    from ..solvers.registry import make_solver
    from ..splits import LABELED, TEST, UNLABELED, UNSCORED, UNUSED, VALIDATION

    if not 0 <= split < cell.roles.shape[0]:
        raise ConfigError(f"split {split} out of range: {cell.splits_path} holds "
                          f"{cell.roles.shape[0]} splits")
    active = (cell.protocol or {}).get("active")
    if bool(active) != bool(method.get("active")):
        raise ConfigError(f"method {method['solver']!r} {'with' if method.get('active') else 'without'} "
                          f"an acquisition on a protocol {'without' if not active else 'with'} active: "
                          f"give both or neither (gssl.active.protocol)")
    if active:
        from ..splits import validate_protocol
        from .active_split import fit_active_split

        return fit_active_split(cell, split, method, validate_protocol(cell.protocol)["active"], seed)
    y, role = cell.y, cell.roles[split]
    y_train = np.where(role == LABELED, y, -1)
    params = dict(method.get("params") or {})
    if "random_state" in _param_names(method["solver"]):
        params.setdefault("random_state", solver_seed(seed, split, role))
    est = make_solver(method["solver"], params)
    fit_kwargs = {}
    if (role == VALIDATION).any():  # held-out labels for early stopping / selection, never fitted
        val = np.flatnonzero(role == VALIDATION)
        fit_kwargs["validation"] = (val, y[val])
    fit_args = _fit_parameters(est)
    if "train_mask" in fit_args:  # inductive solvers: learn on labeled + unlabeled nodes only
        fit_kwargs["train_mask"] = (role == LABELED) | (role == UNLABELED) | (role == UNSCORED)
    if "predict_mask" in fit_args:  # ... and predict the scored nodes (others are UNUSED)
        fit_kwargs["predict_mask"] = role != UNUSED
    t_fit = time.perf_counter()
    _fit_named(est, method["solver"], cell.graph, y_train, n_classes=cell.n_classes, **fit_kwargs)
    fit_seconds = time.perf_counter() - t_fit
    _check_fitted(est, method["solver"], y.shape[0])
    pred = np.asarray(est.transduction_)
    metrics = {"fit_seconds": fit_seconds, "n_labeled": int((role == LABELED).sum()),
               "n_nodes": int(y.shape[0]), "n_iter": float(getattr(est, "n_iter_", 0) or 0)}
    converged = getattr(est, "converged_", None)  # 0: stopped on its limit (ConvergenceWarning)
    metrics["converged"] = 1.0 if converged is None else float(bool(converged))
    # solver-specific diagnostics an estimator chooses to expose (e.g. which start won)
    metrics.update({f"solver_{k}": float(v) for k, v in getattr(est, "fit_metrics_", {}).items()})
    if method.get("class_priors") is not None:  # the method-level prior correction of the scores
        from ..solvers.class_priors import prior_corrected_labels

        pred, metrics["solver_volume_misfit"] = prior_corrected_labels(
            est, method["class_priors"], y_train, mask=role != UNUSED)
    for name, code in (("unlabeled", UNLABELED), ("validation", VALIDATION), ("test", TEST)):
        mask = role == code
        if mask.any():
            metrics[f"error_{name}"] = error_rate(y[mask], pred[mask])
            metrics[f"macro_error_{name}"] = macro_error(y[mask], pred[mask])
            metrics[f"chance_error_{name}"] = chance_error(y[mask])  # the tables' below-chance mark
    scores = getattr(est, "decision_function_", None)
    if "error_validation" in metrics and scores is not None and scores.ndim == 2 \
            and scores.shape[1] == len(getattr(est, "classes_", ())):  # class scores: a selection tie-break
        val = role == VALIDATION
        metrics["sq_hinge_validation"] = squared_hinge(y[val], scores[val], est.classes_)
    for rule, alt in getattr(est, "alternative_labels_", {}).items():  # another decision rule
        for name, code in (("unlabeled", UNLABELED), ("test", TEST)):
            mask = role == code
            if mask.any():
                metrics[f"error_{name}_{rule}"] = error_rate(y[mask], np.asarray(alt)[mask])
    if is_clusterer(est):  # predictions are cluster ids: score them by purity and matching
        mask = role == UNLABELED
        metrics["purity"] = purity(y[mask], pred[mask])
        metrics["clustering_accuracy"] = clustering_accuracy(y[mask], pred[mask])
    history = list(getattr(est, "history_", None) or [])
    out = {"split": split, "metrics": metrics, "history": history, "predictions": pred.tolist(),
           "converged": getattr(est, "converged_", None), "stop_reason": getattr(est, "stop_reason_", None),
           "clusterer": bool(is_clusterer(est))}
    if (role == UNSCORED).any() and not np.isin(role, (UNLABELED, VALIDATION, TEST)).any():
        scores = None if scores is None else np.asarray(scores, dtype=np.float64)  # protocol predict
        out["scores"] = scores if scores is not None and scores.shape == (y.shape[0], cell.n_classes) else None
    return out


def solver_seed(seed: int, split: int, role) -> int:
    """A stochastic solver's seed on one split. A split that labels no point (a repeat of an
    unsupervised protocol) differs from the others only by this seed, so each gets its own, and
    the repeats are independent trials (MTV's trials, issue 32) rather than copies; split 0 and
    every labeled split keep the experiment's seed (their results are unchanged)."""
    from ..splits import LABELED

    if split == 0 or (np.asarray(role) == LABELED).any():
        return seed
    return int(np.random.SeedSequence([seed, split]).generate_state(1)[0])


def _fit_named(est, solver: str, *args, **kwargs) -> None:
    """est.fit; a plugin's own exception (not one of gssl's, which name their cause) comes back
    as a SolverError that names the solver and the check that shows what its fit breaks."""
    from ..errors import GsslError, SolverError
    from ..solvers.fit_checks import solvers_check_hint
    from ..solvers.registry import SOLVERS

    try:
        est.fit(*args, **kwargs)
    except GsslError:
        raise
    except Exception as exc:
        if solver in SOLVERS:
            raise
        raise SolverError(f"solver {solver!r} failed in its fit ({type(exc).__name__}: {exc})"
                          + solvers_check_hint(solver)) from exc


def _check_fitted(est, solver: str, n: int) -> None:
    """A solver (a plugin's above all) that gives no label per node or non-finite scores fails
    its own job, by name, instead of writing numbers the tables would average."""
    from ..errors import SolverError
    from ..solvers.fit_checks import solvers_check_hint
    from ..solvers.checks import ContractError, check_outputs

    try:
        check_outputs(est, n, f"solver {solver!r}")
    except ContractError as exc:
        raise SolverError(f"{exc}{solvers_check_hint(solver)}") from None


def run_cell(cell: Cell, splits, method: dict, seed: int = 0) -> list[dict]:
    """Fit one method on several splits of a loaded cell, sharing kernel matrices and graph
    operators (components, the normalized W and its renumbering) between them."""
    from ..optim.kernels import shared_kernels
    from ..optim.shared_operators import shared_graph_operators

    with shared_kernels(cell.X), shared_graph_operators(cell.graph.W):
        return [fit_split(cell, s, method, seed) for s in splits]


def run_grid(cell: Cell, splits, points: list, seed: int = 0, log=None) -> list[tuple]:
    """Every grid point ``(variant, method)`` on the same splits in one kernel scope (a matrix
    is computed once for all points that share its spec); returns ``(variant, method, results)``
    with predictions and histories dropped (hundreds of fits: selection needs the metrics only)."""
    from ..optim.kernels import shared_kernels
    from ..optim.shared_operators import shared_graph_operators

    out = []
    with shared_kernels(cell.X), shared_graph_operators(cell.graph.W):
        for i, (variant, method) in enumerate(points):
            results = [dict(r, predictions=None, history=[]) for r in run_cell(cell, splits, method, seed)]
            out.append((variant, method, results))
            if log is not None:
                log.info("grid point %d/%d %s: %.1f s of fits", i + 1, len(points), variant,
                         sum(r["metrics"]["fit_seconds"] for r in results))
    return out


def _fit_parameters(est) -> set:
    """Names of the keyword arguments ``est.fit`` accepts (optional hooks: train_mask, predict_mask)."""
    import inspect

    return set(inspect.signature(est.fit).parameters)


@functools.cache
def _param_names(solver: str) -> frozenset:
    """A solver's constructor parameters (once per process: a grid job asks on every fit)."""
    from ..solvers.registry import solver_class

    return frozenset(solver_class(solver)().get_params(deep=False))


def describe_inputs(**paths) -> dict:
    """params_hash of each upstream cache file, for run tags and params."""
    return {name: read_attrs(p)["params_hash"] for name, p in paths.items()}


def block_payload(wildcards: dict, method: dict, results: list[dict], code_hash: str,
                  timings: dict, inputs: dict | None = None) -> dict:
    """One block: a method (or grid point) on some splits of a cell, a record per split (metrics,
    convergence) and the job's timings; ``inputs``: the content digest of each file the job read
    (:func:`gssl.store.lineage.input_digests`), checked by the logging job and ``gssl verify``.
    The MLflow run ids are in the experiment's logging output
    (``results/mlflow/<experiment>.summary.json``), not here: jobs do not log."""
    records = [{"split": r["split"], "metrics": r["metrics"], "converged": r.get("converged"),
                "stop_reason": r.get("stop_reason"),
                **({"chosen": r["chosen"]} if r.get("chosen") is not None else {}),
                **({"curve": r["curve"]} if r.get("curve") is not None else {})}
               for r in results]
    return {"gssl_version": __version__, **wildcards, "method_params": method,
            "splits": records, "code_hash": code_hash, "timings": timings,
            **({"inputs": inputs} if inputs else {})}


def write_block(out, *args, **kwargs) -> None:
    """A solve job's output: one block (see :func:`block_payload`)."""
    atomic_write_text(out, json.dumps(block_payload(*args, **kwargs), indent=1, sort_keys=True) + "\n")


def write_grid(out, blocks: list[dict], timings: dict) -> None:
    """A grid job's output: one block per grid point, in grid order, and the job's timings."""
    atomic_write_text(out, json.dumps({"gssl_version": __version__, "blocks": blocks,
                                       "timings": timings}, indent=1, sort_keys=True) + "\n")


def write_predictions(out, results: list[dict]) -> None:
    """A solve job's predictions (``.predictions.npz`` beside its JSON): ``splits`` (k,), the label
    codes ``predictions`` (k, n; -1 where a method abstains), ``clusterer`` (whether they are
    cluster ids) and, for a split of protocol predict, the class ``scores`` (k, n, C; NaN-free,
    as fit checked). Turned into named tables by :mod:`gssl.analysis.predictions`."""
    import io

    arrays = {"splits": np.asarray([r["split"] for r in results], dtype=np.int64),
              "predictions": np.asarray([r["predictions"] for r in results], dtype=np.int32),
              "clusterer": np.asarray(any(r.get("clusterer") for r in results))}
    if results and all(r.get("scores") is not None for r in results):
        arrays["scores"] = np.stack([r["scores"] for r in results]).astype(np.float32)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    with atomic_path(out) as tmp:
        Path(tmp).write_bytes(buf.getvalue())


def read_blocks(path) -> list[dict]:
    """The blocks of a solve job's output (one) or of a grid job's output (one per grid point)."""
    payload = json.loads(Path(path).read_text())
    return payload["blocks"] if "blocks" in payload else [payload]


def representation_runs(features: list, plots: list, experiment: str) -> list[dict]:
    """One MLflow run spec per learned chain of an experiment (``gssl.kind=representation``): its
    steps as params, the loss per epoch as the metric history ``history.loss`` (one series per
    learned step where a chain has several: ``history.<step>.loss``), the loss plot as an
    artifact, and ``key`` (dataset, prep): the cells to link to it. ``features[i]`` is the file
    results/features/<dataset>/<prep>.h5 whose plot is ``plots[i]``."""
    from ..features import load_artifacts, loss_curves
    from ..tracking.records import KIND_TAG

    runs = []
    for path, plot in zip(features, plots, strict=True):
        path = Path(path)
        dataset, prep = path.parent.name, path.stem
        curves = loss_curves(load_artifacts(path, rule="features"))
        one = len(curves) == 1
        n = max(len(c) for c in curves.values())
        history = [{("loss" if one else f"{name}.loss"): float(c[e])
                    for name, c in curves.items() if e < len(c)} for e in range(n)]
        attrs = read_attrs(path, "features")
        runs.append({"name": f"representation:{dataset}/{prep}", "key": (dataset, prep),
                     "tags": {KIND_TAG: "representation", "gssl.experiment": experiment,
                              "gssl.dataset": dataset, "gssl.prep": prep,
                              "mlflow.note.content": f"The network the preprocessing chain {prep} "
                                                    f"trained on {dataset}: its loss per epoch "
                                                    f"(history.loss) and the plot of it."},
                     "params": {"preprocessing": attrs["params"]},
                     "metrics": {"final_loss": history[-1].get("loss", np.nan) if one else np.nan,
                                 "epochs": n, "build_seconds": float(attrs["build_seconds"])},
                     "history": history, "files": [plot]})
    return runs
