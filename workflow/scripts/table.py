"""Aggregate an experiment's run JSONs into results/tables/{experiment}.csv (long format, one row
per dataset/prep/graph/method/protocol), .md and .html (paper-style tables; the .html is the
Snakemake report's entry)."""
from gssl.store.h5io import atomic_path, atomic_write_text
from gssl.pipeline.jobs import job_context
from gssl.analysis.report import (aggregate, html, load_runs, markdown, with_paired_tests, with_paper_statistic,
                                  with_reference)

with job_context(snakemake.log[0]) as log:
    experiment = snakemake.wildcards.experiment
    entry = snakemake.params.experiment
    runs = load_runs(snakemake.input)
    table = with_reference(with_paper_statistic(with_paired_tests(aggregate(runs), runs), runs, entry), entry)
    with atomic_path(snakemake.output.csv) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")
    atomic_write_text(snakemake.output.md, markdown(table, experiment, entry))
    atomic_write_text(snakemake.output.html,
                      html(table, experiment, entry, protocol_labels=snakemake.params.labels))
    log.info("aggregated %d runs into %d rows", len(snakemake.input), len(table))
