"""Apply a preprocessing chain: its features file, gssl.pipeline.paths.FEATURES."""
from gssl.pipeline.jobs import job_context
from gssl.pipeline.stages import build_features

with job_context(snakemake.log[0], snakemake.threads) as log:
    build_features(snakemake.input[0], snakemake.params.steps, snakemake.output[0],
                   seed=snakemake.params.seed)
    log.info("wrote %s", snakemake.output[0])
