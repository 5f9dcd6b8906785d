"""Fetch every file of one data source into resources/raw/{source}/ (mirror first)."""
from pathlib import Path

from gssl.pipeline.jobs import job_context
from gssl.pipeline.stages import fetch_dataset

with job_context(snakemake.log[0]) as log:
    out = Path(snakemake.output[0])
    manifest = fetch_dataset(snakemake.wildcards.source, out.parent, out)
    log.info("fetched %s", manifest)
