"""Aggregate an experiment's run JSONs into results/tables/{experiment}.csv and .md."""
from gssl.h5io import atomic_path, atomic_write_text
from gssl.jobs import job_context
from gssl.report import aggregate, load_runs, markdown

with job_context(snakemake.log[0]) as log:
    table = aggregate(load_runs(snakemake.input))
    with atomic_path(snakemake.output.csv) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")
    atomic_write_text(snakemake.output.md,
                      markdown(table, snakemake.wildcards.experiment, snakemake.params.experiment))
    log.info("aggregated %d runs into %d rows", len(snakemake.input), len(table))
