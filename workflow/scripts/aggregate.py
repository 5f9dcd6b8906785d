"""An experiment's tables, statistics and plots, in one job (the solve jobs' outputs read once):

- the results table: results/tables/{experiment}.csv (long format, one row per dataset, prep,
  graph, method and protocol), .md and .html (paper-style tables; the .html is the report's);
- the error plot against the split protocol, drawn from that CSV;
- the statistics (issue #18): per cell mean, standard error and 95 % interval with the paired
  Wilcoxon test against the setting's best method (Holm-corrected); across settings the average
  ranks, Friedman test and Nemenyi critical difference (Demšar 2006); box plots per cell, the
  critical-difference diagram and the rank heat-map."""
import json
import math

import pandas as pd

from gssl.store.h5io import atomic_path, atomic_write_text
from gssl.pipeline.jobs import job_context
from gssl.analysis.report import (aggregate, headline_metric, html, load_runs, markdown, plot, statistics_html,
                                  statistics_markdown, with_paired_tests, with_paper_statistic, with_reference)
from gssl.analysis.ranks import average_ranks, friedman_test, nemenyi_cd, score_table
from gssl.analysis.stats import StatsError, cell_summary, higher_is_better, paired_tests
from gssl.analysis.plots import plot_boxes, plot_cd_diagram, plot_note, plot_rank_heatmap

sm = snakemake
out = sm.output


def results_table(runs, cells, experiment, entry, log):
    table = with_reference(with_paper_statistic(with_paired_tests(cells, runs), runs, entry), entry)
    with atomic_path(out.csv) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")
    atomic_write_text(out.md, markdown(table, experiment, entry))
    atomic_write_text(out.html, html(table, experiment, entry, protocol_labels=sm.params.labels))
    with atomic_path(out.plot) as tmp:  # from the CSV's digits, as a reader of the CSV would draw it
        plot(pd.read_csv(out.csv), tmp, experiment, sm.params.labels, fmt="png")
    log.info("aggregated %d job outputs into %d rows", len(sm.input), len(table))


def statistics(runs, cells_mean, experiment, log):
    metric = headline_metric(cells_mean)
    cells = cell_summary(runs, metric).merge(
        paired_tests(runs, metric)[["dataset", "prep", "graph", "method", "protocol", "best", "n_paired",
                                    "p_value", "p_holm", "tied_with_best"]])
    with atomic_path(out.stats_csv) as tmp:
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
    atomic_write_text(out.ranks, json.dumps(across, indent=1) + "\n")
    atomic_write_text(out.stats_md, statistics_markdown(cells, across, experiment))
    atomic_write_text(out.stats_html, statistics_html(cells, across, experiment))
    title = f"{experiment}: {metric}"
    with atomic_path(out.boxes) as tmp:
        plot_boxes(runs, metric, tmp)
    for path, draw in ((out.cd, lambda t: plot_cd_diagram(ranks.average, across["critical_difference"], t,
                                                           title=title)),
                       (out.heatmap, lambda t: plot_rank_heatmap(ranks.ranks, t))):
        if ranks is None:
            draw = lambda t: plot_note(t, f"No ranking: {across['not_ranked']}")  # noqa: E731
        with atomic_path(path) as tmp:
            draw(tmp)
    log.info("statistics of %d cells on %s; %s", len(cells), metric,
             f"{ranks.n} settings x {ranks.k} methods ranked" if ranks else across["not_ranked"])


with job_context(sm.log[0]) as log:
    runs = load_runs(sm.input)
    cells = aggregate(runs)  # per cell mean, std, SE and count: both parts start from it
    results_table(runs, cells, sm.wildcards.experiment, sm.params.experiment, log)
    statistics(runs, cells, sm.wildcards.experiment, log)
