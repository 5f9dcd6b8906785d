"""An experiment's statistics (issue #18): per cell mean, standard error and 95 % interval with the
paired Wilcoxon test against the setting's best method (Holm-corrected); across settings the
average ranks, Friedman test and Nemenyi critical difference (Demšar 2006); and the plots: box
plots per cell, the critical-difference diagram and the rank heat-map."""
import json
import math

from gssl.store.h5io import atomic_path, atomic_write_text
from gssl.pipeline.jobs import job_context
from gssl.analysis.report import (aggregate, headline_metric, load_runs, statistics_html,
                                  statistics_markdown)
from gssl.analysis.ranks import average_ranks, friedman_test, nemenyi_cd, score_table
from gssl.analysis.stats import StatsError, cell_summary, higher_is_better, paired_tests
from gssl.analysis.plots import plot_boxes, plot_cd_diagram, plot_note, plot_rank_heatmap

sm = snakemake
with job_context(sm.log[0]) as log:
    runs = load_runs(sm.input)
    metric = headline_metric(aggregate(runs))
    cells = cell_summary(runs, metric).merge(
        paired_tests(runs, metric)[["dataset", "prep", "graph", "method", "protocol", "best", "n_paired",
                                    "p_value", "p_holm", "tied_with_best"]])
    with atomic_path(sm.output.csv) as tmp:
        cells.assign(metric=metric).to_csv(tmp, index=False, float_format="%.6g")
    scores, higher = score_table(runs, metric), higher_is_better(metric)  # settings x methods
    try:
        ranks = average_ranks(scores, higher)
    except StatsError as exc:  # one method, or no setting where all were run: nothing to rank
        ranks, across = None, {"metric": metric, "not_ranked": str(exc)}
    else:
        across = {"metric": metric, "settings": ranks.n, "methods": ranks.k, "settings_dropped": ranks.n_dropped,
                  "average_ranks": ranks.average.to_dict(), "critical_difference": nemenyi_cd(ranks.k, ranks.n)}
        if ranks.k >= 3 and ranks.n >= 2:  # Friedman's statistic needs both
            f = friedman_test(scores, higher)
            across.update(friedman_chi2=f.chi2, friedman_p=f.chi2_p_value)
            if math.isfinite(f.f):  # infinite when every setting ranks the methods alike
                across.update(iman_davenport_f=f.f, iman_davenport_p=f.p_value)
    atomic_write_text(sm.output.ranks, json.dumps(across, indent=1) + "\n")
    atomic_write_text(sm.output.md, statistics_markdown(cells, across, sm.wildcards.experiment))
    atomic_write_text(sm.output.html, statistics_html(cells, across, sm.wildcards.experiment))
    title = f"{sm.wildcards.experiment}: {metric}"
    with atomic_path(sm.output.boxes) as tmp:
        plot_boxes(runs, metric, tmp)
    for out, draw in ((sm.output.cd, lambda t: plot_cd_diagram(ranks.average, across["critical_difference"], t,
                                                               title=title)),
                      (sm.output.heatmap, lambda t: plot_rank_heatmap(ranks.ranks, t))):
        if ranks is None:
            draw = lambda t: plot_note(t, f"No ranking: {across['not_ranked']}")  # noqa: E731
        with atomic_path(out) as tmp:
            draw(tmp)
    log.info("statistics of %d cells on %s; %s", len(cells), metric,
             f"{ranks.n} settings x {ranks.k} methods ranked" if ranks else across["not_ranked"])
