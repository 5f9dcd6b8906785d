"""Fit one method on a cell's splits (or a block of them), or every point of its grid (rule
solve_grid); write the job's JSON and its MLflow runs to log: gssl.pipeline.solve_job."""
from gssl.pipeline.jobs import job_context
from gssl.pipeline.solve_job import input_tags, solve_job
from gssl.tracking.job_runs import JobRuns
from gssl.tracking.records import write_pending

sm = snakemake
wc = {k: sm.wildcards[k] for k in ("experiment", "dataset", "prep", "graph", "method", "protocol")}
splits = list(range(int(sm.wildcards.first), int(sm.wildcards.last) + 1))
with job_context(sm.log[0], sm.threads) as log:
    p = sm.params
    runs = JobRuns(wc, splits, whole_cell=len(splits) == p.n_splits, rule=sm.rule, stage=p.stage, code=p.code,
                   output=sm.output[0], input_tags=input_tags(sm.input.features, sm.input.graph,
                                                              sm.input.splits, p.provenance, sm.input.data),
                   spec={"graph": p.graph_spec, "preprocessing": {"steps": p.prep_steps},
                         "protocol": p.protocol_spec, "seed": p.seed})
    write_pending(sm.output.runs, solve_job(sm.input, p, wc, splits, runs, sm.output.json, log,
                                           getattr(sm.output, "predictions", None)))  # solve_grid: none
