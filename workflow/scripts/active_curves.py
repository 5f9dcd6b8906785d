"""An active-learning experiment's learning curves (plot, with a band over draws) and its tables at
the protocols' report_at query counts with paired tests against random sampling."""
from gssl.analysis.active_curves import budget_markdown, budget_table, curve_summary, load_curves, plot_curves
from gssl.pipeline.jobs import job_context
from gssl.store.h5io import atomic_path, atomic_write_text

with job_context(snakemake.log[0]) as log:
    out, p = snakemake.output, snakemake.params
    curves = load_curves(snakemake.input, p.methods)
    summary = curve_summary(curves)
    with atomic_path(out.csv) as tmp:
        summary.to_csv(tmp, index=False, float_format="%.6g")
    table = budget_table(curves, p.budgets)
    with atomic_path(out.budgets_csv) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")
    atomic_write_text(out.budgets_md, f"# Experiment `{snakemake.wildcards.experiment}`: accuracy (%) "
                      f"at {', '.join(map(str, p.budgets))} queries\n\nmean ± std over draws; in "
                      f"brackets the mean paired difference to random sampling with the same model "
                      f"on the same draws and its Wilcoxon p (Holm-corrected over the acquisitions); "
                      f"▲/▼: significant at 0.05.\n\n" + budget_markdown(table))
    with atomic_path(out.plot) as tmp:
        plot_curves(summary, tmp, snakemake.wildcards.experiment)
    log.info("%d curves (%d rows), budgets %s", curves.groupby(["method", "split"]).ngroups, len(curves), p.budgets)
