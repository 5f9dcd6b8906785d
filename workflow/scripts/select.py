"""Choose a method's parameters from its grid runs on the selection protocol (one choice, or one
per split); write the grid (table, plot) and its MLflow run to log (rule mlflow_summary logs it):
gssl.pipeline.select_job."""
from gssl.analysis.plots import plot_grid
from gssl.pipeline.jobs import job_context
from gssl.pipeline.select_job import select_job
from gssl.tracking.job_runs import JobRuns
from gssl.tracking.records import write_pending

sm = snakemake
wc = {k: sm.wildcards[k] for k in ("experiment", "dataset", "prep", "graph", "method")}
# the run's start in MLflow: this job's, not the logging job's
runs = JobRuns(wc, [], whole_cell=True, rule=sm.rule, stage="selection", code=sm.params.code,
               output=sm.output.choice, input_tags={}, spec={})
with job_context(sm.log[0]):
    write_pending(sm.output.mlflow, [select_job(sm.input.runs, wc, sm.params.selection, sm.params.method, runs,
                                                sm.output, plot_grid)])
