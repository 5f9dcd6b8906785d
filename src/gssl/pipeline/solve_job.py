"""A solve or grid job (rules solve and solve_grid): fit one method on a cell's splits (or a block
of them) in one process, write the job's JSON and return its MLflow runs to log (a parent run for
the cell with its splits' statistics, a child run per split; a grid job: one run per grid point,
its splits' values as steps), which the experiment's logging job logs: no job imports MLflow.

Rule solve runs the evaluation cells (a gridded method with the parameters its selection chose,
one choice or one per split); rule solve_grid runs every point of a method's grid on a block of the
selection protocol's splits."""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..store.hashing import canonical_json
from ..store.lineage import LINEAGE_TAG, input_digests
from .jobs import git_commit
from .selection import methods_for_splits
from .stages import (Cell, block_payload, describe_inputs, expected_params, run_cell, run_grid, write_block, write_grid,
                     write_predictions)


def input_tags(features, graph, splits, provenance: dict, data=None) -> dict:
    """The code that ran and the inputs' hashes (git and three HDF5 files: read once per job; their
    params hashes, and their content digests as JSON under ``gssl.lineage``), and ``provenance``
    (a data file's sha256, a plugin's version)."""
    tags = {f"gssl.{name}_hash": h for name, h in describe_inputs(
        features=features, graph=graph, splits=splits).items()}
    tags[LINEAGE_TAG] = canonical_json(input_digests(features=features, graph=graph, splits=splits, data=data))
    commit = git_commit(Path(__file__).parents[1])  # the gssl code that ran
    if commit:
        tags["mlflow.source.git.commit"] = commit
    return {**tags, **provenance}


def fit_evaluation(cell: Cell, method: dict, splits: list, chosen, seed: int, log) -> tuple[list, dict]:
    """The cell's splits with the method's own params, or with those its selection chose (the
    ``chosen`` file: one choice, or one per split): each result carries the method it was fitted
    with. Returns the results in split order and the method of the cell's run."""
    groups = [(method, splits, None)]
    if chosen:
        groups = methods_for_splits(method, json.loads(Path(chosen).read_text()), splits)
        for _, ss, values in groups:
            log.info("splits %s: parameters chosen by the selection stage: %s", ss, values)
    results = []
    for m, ss, values in groups:
        results += [dict(r, method=m, chosen=values) for r in run_cell(cell, ss, m, seed=seed)]
    return sorted(results, key=lambda r: r["split"]), (groups[0][0] if len(groups) == 1 else method)


def graph_metrics(cell: Cell) -> dict:
    """An approximate kNN graph's measured recall (the graph file's params), beside the scores."""
    params = cell.graph.params
    return {"graph_knn_recall": params["knn_recall"]} if "knn_recall" in params else {}


def solve_job(inputs, params, wc: dict, splits: list, runs, out_json, log, out_predictions=None) -> list[dict]:
    """Run one job: ``inputs`` (features, graph, splits, and chosen for a selected method) and
    ``params`` (method, seed, prep_steps, graph_spec, protocol_spec, code; grid for a grid job) as
    the rule names them; write ``out_json`` (and an evaluation job's ``out_predictions``: each
    split's labels, :func:`gssl.pipeline.stages.write_predictions`) and return the run trees
    ``runs`` (a JobRuns) built."""
    t_start = time.perf_counter()
    seed, method = params.seed, dict(params.method)
    cell = Cell(inputs.features, inputs.graph, inputs.splits, expect=expected_params(
        params.prep_steps, seed, params.graph_spec, params.protocol_spec,
        wc["dataset"], wc["protocol"]), data_path=inputs.get("data"),
        check_splits=splits)  # a foreign file in an input's place is refused; the job's splits drawn again
    lineage = input_digests(features=inputs.features, graph=inputs.graph, splits=inputs.splits,
                            data=inputs.get("data"))
    grid = params.get("grid")  # solve_grid: [[variant id, {solver, params}], ...]
    if grid:
        fitted = run_grid(cell, splits, grid, seed=seed, log=log)
        trees = [runs.grid_point(v, m, rs, cell.load_seconds) for v, m, rs in fitted]
        results = [r for _, _, rs in fitted for r in rs]
    else:
        results, method = fit_evaluation(cell, method, splits, inputs.get("chosen"), seed, log)
        for r in results:
            r["metrics"]["load_seconds"] = cell.load_seconds
            log.info("split %d: %s", r["split"], r["metrics"])
        trees = [runs.evaluation(method, results, {"load_seconds": cell.load_seconds, **graph_metrics(cell)})]
    timings = {"load_seconds": cell.load_seconds,
               "fit_seconds": sum(r["metrics"]["fit_seconds"] for r in results),
               "job_seconds": time.perf_counter() - t_start, "n_splits": len(splits)}
    if grid:
        timings["n_grid_points"] = len(fitted)
        write_grid(out_json, [block_payload({**wc, "variant": v}, m, rs, params.code, {
            "fit_seconds": sum(r["metrics"]["fit_seconds"] for r in rs)}, inputs=lineage) for v, m, rs in fitted],
            timings)
        log.info("%d grid points x %d splits; timings %s", len(fitted), len(splits), timings)
    else:
        write_block(out_json, wc, method, results, params.code, timings, inputs=lineage)
        if out_predictions is not None:
            write_predictions(out_predictions, results)
        log.info("%d splits, %d runs to log; timings %s", len(results), len(results) + 1, timings)
    return trees
