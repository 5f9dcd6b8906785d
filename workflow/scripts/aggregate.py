"""An experiment's tables, statistics and plots, in one job: gssl.analysis.aggregate_job."""
from gssl.analysis.aggregate_job import aggregate_job
from gssl.pipeline.jobs import job_context

sm = snakemake
with job_context(sm.log[0]) as log:
    aggregate_job(sm.input, sm.output, sm.wildcards.experiment, sm.params.experiment, sm.params.labels, log)
