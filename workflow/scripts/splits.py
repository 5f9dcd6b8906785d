"""Draw every split of one protocol: its splits file, gssl.pipeline.paths.SPLITS."""
from gssl.pipeline.jobs import job_context
from gssl.pipeline.stages import build_splits

with job_context(snakemake.log[0]) as log:
    build_splits(snakemake.input[0], snakemake.wildcards.dataset, snakemake.wildcards.protocol,
                 snakemake.params.spec, snakemake.output[0],
                 data_params=snakemake.config["datasets"][snakemake.wildcards.dataset])
    log.info("wrote %s", snakemake.output[0])
