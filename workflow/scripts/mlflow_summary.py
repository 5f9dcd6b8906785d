"""The experiment's logging job: log the runs its jobs left to log, the cells' and the summary
run; write the ledger `gssl verify` checks: gssl.pipeline.logging_job."""
from gssl.analysis.verify import expected_caches
from gssl.pipeline.jobs import job_context
from gssl.pipeline.stages import representation_runs
from gssl.pipeline.logging_job import logging_job

sm = snakemake
with job_context(sm.log[0]) as log:
    name = sm.wildcards.experiment
    logging_job(sm.params.tracking_uri, name, sm.params.experiment, sm.params.headline, sm.input, sm.output[0],
                expected_caches(sm.config, name), log,
                representations=representation_runs(sm.input.learned, sm.input.loss_plots, name),
                configfiles=list(sm.params.configfiles))
