"""Apply a preprocessing chain: its features file, gssl.pipeline.paths.FEATURES."""
from gssl.pipeline.jobs import job_context
from gssl.pipeline.stages import build_features

with job_context(snakemake.log[0], snakemake.threads) as log:
    build_features(snakemake.input[0], snakemake.params.steps, snakemake.output[0],
                   seed=snakemake.params.seed,
                   # the dataset's entry: a data file of another entry in its place is refused (not a
                   # param: an entry's change reruns the dataset job, and so this one)
                   data_params=snakemake.config["datasets"][snakemake.wildcards.dataset])
    log.info("wrote %s", snakemake.output[0])
