"""Build one graph: its cache file, gssl.pipeline.paths.GRAPH under the results folder."""
from gssl.pipeline.jobs import job_context
from gssl.pipeline.stages import build_graph

with job_context(snakemake.log[0], snakemake.threads) as log:
    build_graph(snakemake.input.features, snakemake.params.spec, snakemake.output[0],
                data_path=snakemake.input.data)
    log.info("wrote %s", snakemake.output[0])
