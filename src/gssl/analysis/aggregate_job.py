"""An experiment's tables, statistics and plots, in one job (rule aggregate; the solve jobs'
outputs read once):

- the results table: results/tables/{experiment}.csv (long format, one row per dataset, prep,
  graph, method and protocol), .md and .html (paper-style tables; the .html is the report's);
- the error plot against the split protocol, drawn from that CSV;
- the statistics (issue #18): per cell mean, standard error and 95 % interval with the paired
  Wilcoxon test against the setting's best method (Holm-corrected); across settings the average
  ranks, Friedman test and Nemenyi critical difference (Demšar 2006); box plots per cell, the
  critical-difference diagram and the rank heat-map."""

from __future__ import annotations

import json
import math

from ..store.h5io import atomic_path, atomic_write_text
from .plots import plot_boxes, plot_cd_diagram, plot_note, plot_rank_heatmap
from .ranks import average_ranks, friedman_test, nemenyi_cd, score_table
from .report import (aggregate, headline_metric, html, load_runs, markdown, plot, statistics_html,
                     statistics_markdown, with_paired_tests, with_paper_statistic, with_reference)
from .stats import StatsError, cell_summary, higher_is_better, paired_tests


def results_table(runs, cells, out, experiment: str, entry: dict, labels: dict) -> int:
    """Write the results table (``out.csv``, ``.md``, ``.html``) and its error plot; its row count."""
    import pandas as pd

    table = with_reference(with_paper_statistic(with_paired_tests(cells, runs), runs, entry), entry)
    with atomic_path(out.csv) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")
    atomic_write_text(out.md, markdown(table, experiment, entry))
    atomic_write_text(out.html, html(table, experiment, entry, protocol_labels=labels))
    with atomic_path(out.plot) as tmp:  # from the CSV's digits, as a reader of the CSV would draw it
        plot(pd.read_csv(out.csv), tmp, experiment, labels, fmt="png")
    return len(table)


def across_settings(runs, metric: str) -> tuple:
    """(the ranks, or None where nothing can be ranked; the across-settings summary written to
    ``ranks.json``): average ranks, Nemenyi's critical difference, Friedman and Iman-Davenport."""
    scores, higher = score_table(runs, metric), higher_is_better(metric)  # settings x methods
    try:
        ranks = average_ranks(scores, higher)
    except StatsError as exc:  # one method, or no setting where all were run: nothing to rank
        return None, {"metric": metric, "not_ranked": str(exc)}
    across = {"metric": metric, "settings": ranks.n, "methods": ranks.k, "settings_dropped": ranks.n_dropped,
              "average_ranks": ranks.average.to_dict(), "critical_difference": nemenyi_cd(ranks.k, ranks.n)}
    if ranks.k >= 3 and ranks.n >= 2:  # Friedman's statistic needs both
        f = friedman_test(scores, higher)
        across.update(friedman_chi2=f.chi2, friedman_p=f.chi2_p_value)
        if math.isfinite(f.f):  # infinite when every setting ranks the methods alike
            across.update(iman_davenport_f=f.f, iman_davenport_p=f.p_value)
    return ranks, across


def statistics(runs, cells_mean, out, experiment: str, log) -> None:
    """Write the statistics tables (``out.stats_csv``, ``.stats_md``, ``.stats_html``), ``out.ranks``
    and the box, critical-difference and rank plots."""
    metric = headline_metric(cells_mean)
    cells = cell_summary(runs, metric).merge(
        paired_tests(runs, metric)[["dataset", "prep", "graph", "method", "protocol", "best", "n_paired",
                                    "p_value", "p_holm", "tied_with_best"]])
    with atomic_path(out.stats_csv) as tmp:
        cells.assign(metric=metric).to_csv(tmp, index=False, float_format="%.6g")
    ranks, across = across_settings(runs, metric)
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


def aggregate_job(run_paths: list, out, experiment: str, entry: dict, labels: dict, log) -> None:
    """Rule aggregate's outputs ``out`` (csv, md, html, plot, stats_csv, stats_md, stats_html, ranks,
    boxes, cd, heatmap) from the solve jobs' outputs ``run_paths``, each first checked against its
    place and the cache files it was computed from (:func:`gssl.pipeline.lineage.check_job_output`)."""
    from pathlib import Path

    from ..errors import CacheError
    from ..pipeline.lineage import check_job_output

    results = Path(out.csv).parents[1]  # results/tables/<experiment>.csv
    problems = [p for path in run_paths for p in check_job_output(results, path)]
    if problems:
        raise CacheError(f"{len(problems)} job outputs were not computed from the files in their place:\n  "
                         + "\n  ".join(problems))
    runs = load_runs(run_paths)
    cells = aggregate(runs)  # per cell mean, std, SE and count: both parts start from it
    n_rows = results_table(runs, cells, out, experiment, entry, labels)
    log.info("aggregated %d job outputs into %d rows", len(run_paths), n_rows)
    statistics(runs, cells, out, experiment, log)
