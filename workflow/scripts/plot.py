"""Plot error vs protocol for one experiment."""
import pandas as pd

from gssl.store.h5io import atomic_path
from gssl.pipeline.jobs import job_context
from gssl.analysis.report import plot

with job_context(snakemake.log[0]):
    table = pd.read_csv(snakemake.input[0])
    with atomic_path(snakemake.output[0]) as tmp:
        plot(table, tmp, snakemake.wildcards.experiment, snakemake.params.labels, fmt="png")
