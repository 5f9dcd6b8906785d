"""Run one solver on one split, log one MLflow run, write the job's JSON."""
import platform
from pathlib import Path

import gssl

from gssl import __version__
from gssl.jobs import git_commit, job_context
from gssl.pipeline import describe_inputs, run_solver, write_result
from gssl.tracking import log_run, read_sentinel

sm = snakemake
wc = {k: sm.wildcards[k] for k in ("experiment", "dataset", "prep", "graph", "method", "protocol")}
wc["split"] = int(sm.wildcards.split)

with job_context(sm.log[0], sm.threads) as log:
    uri = sm.params.tracking_uri
    exp_id = read_sentinel(sm.input.experiment, wc["experiment"], uri)
    result = run_solver(sm.input.features, sm.input.graph, sm.input.splits, wc["split"],
                        sm.params.method, seed=sm.params.seed)
    log.info("metrics %s", result["metrics"])
    tags = {f"gssl.{k}": v for k, v in wc.items()}
    tags.update({"gssl.solver": sm.params.method["solver"], "gssl.rule": "solve",
                 "gssl.version": __version__, "gssl.code_hash": sm.params.code,
                 "gssl.host": platform.node(), "gssl.output": sm.output[0],
                 "mlflow.source.name": "snakemake rule solve", "mlflow.source.type": "JOB"})
    commit = git_commit(Path(gssl.__file__).parent)  # the gssl code that ran
    if commit:
        tags["mlflow.source.git.commit"] = commit
    for name, h in describe_inputs(features=sm.input.features, graph=sm.input.graph,
                                   splits=sm.input.splits).items():
        tags[f"gssl.{name}_hash"] = h
    params = {"method": sm.params.method, "graph": sm.params.graph_spec,
              "preprocessing": {"steps": sm.params.prep_steps}, "protocol": sm.params.protocol_spec,
              "seed": sm.params.seed}
    run_name = "/".join(str(wc[k]) for k in ("dataset", "prep", "graph", "method", "protocol", "split"))
    run_id = log_run(uri, exp_id, run_name, tags, params, result["metrics"],
                     history=result["history"],
                     artifacts={"predictions.json": {"predictions": result["predictions"]}})
    write_result(sm.output[0], wc, sm.params.method, result, run_id, uri, sm.params.code)
    log.info("mlflow run %s", run_id)
