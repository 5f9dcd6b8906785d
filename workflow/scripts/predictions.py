"""An experiment's predictions by name and its confusion matrices: gssl.analysis.predictions_job."""
from gssl.analysis.predictions_job import predictions_job
from gssl.pipeline.jobs import job_context

sm = snakemake
with job_context(sm.log[0]) as log:
    predictions_job(sm.wildcards.experiment, sm.params.cells, sm.output, log)
