"""Fit one method on a cell's splits (or a block of them) in one process; log one MLflow parent run
for the cell (its splits' statistics) with a child run per split; write the job's JSON.

Rule solve runs the evaluation cells (a gridded method with the parameters its selection chose);
rule solve_grid runs one grid point on the selection protocol (wildcard ``variant``)."""
import json
import platform
import time
from pathlib import Path

import gssl

from gssl import __version__
from gssl.jobs import git_commit, job_context
from gssl.pipeline import Cell, describe_inputs, run_cell, write_block
from gssl.report import split_statistics
from gssl.tracking import KIND_TAG, connect_in_background, log_cell, read_sentinel, run_name

sm = snakemake
wc = {k: sm.wildcards[k] for k in ("experiment", "dataset", "prep", "graph", "method", "protocol")}
splits = list(range(int(sm.wildcards.first), int(sm.wildcards.last) + 1))
whole_cell = len(splits) == sm.params.n_splits
variant = getattr(sm.wildcards, "variant", None)

with job_context(sm.log[0], sm.threads) as log:
    t_start = time.perf_counter()
    method = dict(sm.params.method)
    if sm.input.get("chosen"):  # a gridded method: the parameters its selection stage chose
        chosen = json.load(open(sm.input.chosen))
        method = {"solver": chosen["solver"], "params": chosen["params"]}
        log.info("parameters chosen by the selection stage: %s", chosen["values"])
    uri = sm.params.tracking_uri
    exp_id = read_sentinel(sm.input.experiment, wc["experiment"], uri)
    connected = connect_in_background(uri, exp_id)  # MLflow's imports overlap the fits
    cell = Cell(sm.input.features, sm.input.graph, sm.input.splits)
    results = run_cell(cell, splits, method, seed=sm.params.seed)
    t_fitted = time.perf_counter()
    for r in results:
        r["metrics"]["load_seconds"] = cell.load_seconds
        log.info("split %d: %s", r["split"], r["metrics"])

    tags = {f"gssl.{k}": v for k, v in wc.items()}
    tags.update({"gssl.solver": method["solver"], "gssl.rule": sm.rule, "gssl.stage": sm.params.stage,
                 "gssl.version": __version__, "gssl.code_hash": sm.params.code,
                 "gssl.host": platform.node(), "gssl.output": sm.output[0],
                 "mlflow.source.name": "snakemake rule solve", "mlflow.source.type": "JOB"})
    commit = git_commit(Path(gssl.__file__).parent)  # the gssl code that ran
    if commit:
        tags["mlflow.source.git.commit"] = commit
    for name, h in describe_inputs(features=sm.input.features, graph=sm.input.graph,
                                   splits=sm.input.splits).items():
        tags[f"gssl.{name}_hash"] = h
    if variant:
        tags["gssl.variant"] = variant
    if sm.input.get("chosen"):
        tags["gssl.chosen"] = json.dumps(chosen["values"], sort_keys=True)
    params = {"method": method, "graph": sm.params.graph_spec,
              "preprocessing": {"steps": sm.params.prep_steps}, "protocol": sm.params.protocol_spec,
              "seed": sm.params.seed}
    stage = "selection_" if variant else ""  # the comparison view lists evaluation cells only
    block = "" if whole_cell else f"{splits[0]}-{splits[-1]}"
    parent = {"name": run_name(wc, variant, splits=block),
              "tags": {**tags, KIND_TAG: stage + ("cell" if whole_cell else "block"),
                       "gssl.splits": f"{splits[0]}-{splits[-1]}"},
              "params": params,
              "metrics": {**split_statistics([r["metrics"] for r in results]),
                          "load_seconds": cell.load_seconds}}
    children = [{"name": run_name(wc, variant, split=r["split"]),
                 "tags": {**tags, KIND_TAG: stage + "split", "gssl.split": r["split"]},
                 "params": params, "metrics": r["metrics"], "history": r["history"],
                 "artifacts": {"result.json": {"predictions": r["predictions"],
                                               "history": r["history"],
                                               "stop_reason": r["stop_reason"]}}}
                for r in results]
    connected.result()
    parent_id, run_ids = log_cell(uri, exp_id, parent, children)
    t_logged = time.perf_counter()
    timings = {"load_seconds": cell.load_seconds,
               "fit_seconds": sum(r["metrics"]["fit_seconds"] for r in results),
               "log_seconds": t_logged - t_fitted, "job_seconds": t_logged - t_start,
               "n_splits": len(results)}
    if variant:
        wc["variant"] = variant
    write_block(sm.output[0], wc, method, results, run_ids, parent_id, uri, sm.params.code, timings)
    log.info("mlflow parent run %s, %d split runs; timings %s", parent_id, len(run_ids), timings)
