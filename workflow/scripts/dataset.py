"""Parse a fetched or generated dataset into its file, gssl.pipeline.paths.DATA."""
from gssl.pipeline.jobs import job_context
from gssl.pipeline.stages import build_dataset

with job_context(snakemake.log[0]) as log:
    build_dataset(snakemake.wildcards.dataset, snakemake.params.entry, snakemake.params.raw_dir,
                  snakemake.output[0])
    log.info("wrote %s", snakemake.output[0])
