"""Fit one method on a cell's splits (or a block of them) in one process; write the job's JSON and
its MLflow runs to log (a parent run for the cell with its splits' statistics, a child run per
split), which the experiment's logging job (rule mlflow_summary) logs: this job never imports MLflow.

Rule solve runs the evaluation cells (a gridded method with the parameters its selection chose,
one choice or one per split); rule solve_grid runs every point of a method's grid on a block of the
selection protocol's splits, one MLflow run per grid point (its splits' values as steps)."""
import json
import time
from pathlib import Path

import gssl

from gssl.pipeline.jobs import git_commit, job_context
from gssl.pipeline.selection import methods_for_splits
from gssl.pipeline.stages import (Cell, block_payload, describe_inputs, expected_params, run_cell, run_grid,
                                  write_block, write_grid)
from gssl.tracking.job_runs import JobRuns
from gssl.tracking.records import write_pending

sm = snakemake
wc = {k: sm.wildcards[k] for k in ("experiment", "dataset", "prep", "graph", "method", "protocol")}
splits = list(range(int(sm.wildcards.first), int(sm.wildcards.last) + 1))
grid = sm.params.get("grid")  # solve_grid: [[variant id, {solver, params}], ...]


def input_tags():
    """The code that ran and the inputs' hashes (git and three HDF5 files: read once per job)."""
    tags = {f"gssl.{name}_hash": h for name, h in describe_inputs(
        features=sm.input.features, graph=sm.input.graph, splits=sm.input.splits).items()}
    commit = git_commit(Path(gssl.__file__).parent)  # the gssl code that ran
    if commit:
        tags["mlflow.source.git.commit"] = commit
    return {**tags, **sm.params.provenance}  # a data file's sha256, a plugin's version


def fit_evaluation(cell, method, log):
    """The cell's splits with the method's own params, or with those its selection chose (one
    choice, or one per split): each result carries the method it was fitted with."""
    groups = [(method, splits, None)]
    if sm.input.get("chosen"):
        groups = methods_for_splits(method, json.loads(Path(sm.input.chosen).read_text()), splits)
        for _, ss, values in groups:
            log.info("splits %s: parameters chosen by the selection stage: %s", ss, values)
    results = []
    for m, ss, values in groups:
        results += [dict(r, method=m, chosen=values) for r in run_cell(cell, ss, m, seed=sm.params.seed)]
    return sorted(results, key=lambda r: r["split"]), (groups[0][0] if len(groups) == 1 else method)


def graph_metrics(cell):
    """An approximate kNN graph's measured recall (the graph file's params), beside the scores."""
    params = cell.graph.params
    return {"graph_knn_recall": params["knn_recall"]} if "knn_recall" in params else {}


with job_context(sm.log[0], sm.threads) as log:
    t_start = time.perf_counter()
    method = dict(sm.params.method)
    runs = JobRuns(wc, splits, whole_cell=len(splits) == sm.params.n_splits, rule=sm.rule,
                   stage=sm.params.stage, code=sm.params.code, output=sm.output[0], input_tags=input_tags(),
                   spec={"graph": sm.params.graph_spec, "preprocessing": {"steps": sm.params.prep_steps},
                         "protocol": sm.params.protocol_spec, "seed": sm.params.seed})
    cell = Cell(sm.input.features, sm.input.graph, sm.input.splits, expect=expected_params(
        sm.params.prep_steps, sm.params.seed, sm.params.graph_spec, sm.params.protocol_spec,
        wc["dataset"], wc["protocol"]))  # a foreign file in an input's place is refused
    if grid:
        fitted = run_grid(cell, splits, grid, seed=sm.params.seed, log=log)
        trees = [runs.grid_point(v, m, rs, cell.load_seconds) for v, m, rs in fitted]
        results = [r for _, _, rs in fitted for r in rs]
    else:
        results, method = fit_evaluation(cell, method, log)
        for r in results:
            r["metrics"]["load_seconds"] = cell.load_seconds
            log.info("split %d: %s", r["split"], r["metrics"])
        trees = [runs.evaluation(method, results, {"load_seconds": cell.load_seconds, **graph_metrics(cell)})]
    write_pending(sm.output.runs, trees)
    timings = {"load_seconds": cell.load_seconds,
               "fit_seconds": sum(r["metrics"]["fit_seconds"] for r in results),
               "job_seconds": time.perf_counter() - t_start, "n_splits": len(splits)}
    if grid:
        timings["n_grid_points"] = len(fitted)
        write_grid(sm.output.json, [block_payload({**wc, "variant": v}, m, rs, sm.params.code, {
            "fit_seconds": sum(r["metrics"]["fit_seconds"] for r in rs)}) for v, m, rs in fitted], timings)
        log.info("%d grid points x %d splits; timings %s", len(fitted), len(splits), timings)
    else:
        write_block(sm.output.json, wc, method, results, sm.params.code, timings)
        log.info("%d splits, %d runs to log; timings %s", len(results), len(results) + 1, timings)
