"""The training loss per epoch of a learned preprocessing chain: results/plots/learned/..."""
from gssl.analysis.plots import plot_loss_curve
from gssl.features import load_artifacts, loss_curves
from gssl.pipeline.jobs import job_context
from gssl.store.h5io import atomic_path

with job_context(snakemake.log[0]) as log:
    losses = loss_curves(load_artifacts(snakemake.input[0], rule="features"))
    with atomic_path(snakemake.output[0]) as tmp:
        plot_loss_curve(losses, tmp, f"{snakemake.wildcards.dataset} / {snakemake.wildcards.prep}")
    log.info("plotted %s", ", ".join(f"{k}: {len(v)} epochs" for k, v in losses.items()))
