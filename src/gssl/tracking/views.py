"""The MLflow UI side of gssl's experiments: the saved views of the runs page an experiment opens
on and the links to them. Plain data (no MLflow import): :mod:`gssl.tracking.store` writes them as
experiment tags."""

from __future__ import annotations

from ..store.hashing import canonical_json
from .records import KIND_TAG, SUPERSEDED_TAG


EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}
VIEW_TAG = "mlflow.sharedViewState."  # + view id: a saved view of the runs page, stored server-side
CELL_VIEW, SPLIT_VIEW, SELECTION_VIEW = "gssl-cells", "gssl-splits", "gssl-selection"
HISTORY_VIEW = "gssl-history"


def saved_views(headline: str = "error_unlabeled", ascending: bool = True) -> dict[str, str]:
    """Experiment tags holding the runs-page views a gssl experiment opens on (MLflow 3 saved views).

    ``gssl-cells``: the current cell runs, grouped by protocol and sorted by the headline score,
    with its mean / standard error, the number of splits, the fit time and the method / protocol /
    dataset / graph tags as columns; its charts: the score per cell (bars) and score vs fit time.
    ``gssl-splits``: the current split runs grouped by method and protocol. ``gssl-selection``:
    the selection stage's runs (the chosen values, the best score; each holds the grid as a table
    and a plot). ``gssl-history``: every cell run, the superseded ones too, newest first and
    grouped by method and protocol, so that a cell rerun after a change of its parameters sits
    beside the run it replaced (select both, then Compare, to see the changed params). Open one
    with :func:`ui_link`.
    """
    def col(kind, name):
        return f"{kind}.`{name}`"

    def tag_group(*names, aggregate="average"):  # the table's "Group by" on tag values (groups open)
        return {"groupByKeys": [{"mode": "tag", "groupByData": f"gssl.{n}"} for n in names],
                "aggregateFunction": aggregate}

    def bar(metric):
        return {"uuid": f"gssl-bar-{metric}", "type": "BAR", "metricKey": metric,
                "displayName": metric}

    def scatter(x, y):
        return {"uuid": f"gssl-scatter-{x}-{y}", "type": "SCATTER",
                "xaxis": {"key": x, "type": "METRIC"}, "yaxis": {"key": y, "type": "METRIC"}}

    def view(name, kind, columns, widths, group_by, charts, history=False):
        current = "" if history else f"tags.`{SUPERSEDED_TAG}` = 'false' AND "
        state = {
            "searchFilter": f"{current}tags.`{KIND_TAG}` = '{kind}'",
            "orderByKey": "attributes.start_time" if history else col("metrics", columns[0][1]),
            "orderByAsc": False if history else ascending,
            "startTime": "ALL", "lifecycleFilter": "Active", "datasetsFilter": [],
            "modelVersionFilter": "All Runs",
            "selectedColumns": [col(*c) for c in columns],
            "columnOrder": ["attributes.`Run Name`"] + [col(*c) for c in columns],
            "columnWidths": {"attributes.`Run Name`": widths[0],
                             **{col(*c): w for c, w in zip(columns, widths[1:])}},
            "runsHiddenMode": "SHOW_ALL", "viewMaximized": False, "runListHidden": False,
            # charts: gssl's section first, MLflow's one-chart-per-metric section collapsed
            "isAccordionReordered": True, "useGroupedValuesInCharts": False,
            "hideEmptyCharts": True,
            "compareRunSections": [
                {"uuid": "gssl", "name": "gssl", "display": True, "isReordered": True,
                 "columns": 2},
                {"uuid": "gssl-other", "name": "Model metrics", "display": False,
                 "isReordered": False}],
            "compareRunCharts": [{"metricSectionId": "gssl", "deleted": False,
                                  "isGenerated": False, "runsCountToCompare": 100, **c}
                                 for c in charts],
            "groupBy": group_by, "groupsExpanded": {},
            "globalLineChartConfig": {"xAxisKey": "step", "lineSmoothness": 0,
                                      "selectedXAxisMetricKey": ""},
        }
        return canonical_json({"name": name, "createdAt": 0, "updatedAt": 0,
                               "state": canonical_json(state)})

    tags = [("tags", f"gssl.{k}") for k in ("method", "protocol", "dataset", "graph")]
    cells = [("metrics", f"{headline}_mean"), ("metrics", f"{headline}_sem"),
             ("metrics", "n_splits"), ("metrics", "fit_seconds_mean"), *tags]
    splits = [("metrics", headline), ("metrics", "fit_seconds"), ("tags", "gssl.split"), *tags]
    selection = [("metrics", "selection_score_mean"), ("metrics", "n_grid_points"),
                 ("metrics", "n_splits"), ("params", "chosen"), *tags[:1], *tags[2:]]
    history = [*cells[:3], ("tags", SUPERSEDED_TAG), *tags]
    best = "min" if ascending else "max"  # a group's row: each column's best value (a mean
    return {                              # over methods would mean nothing)
        VIEW_TAG + CELL_VIEW: view(
            "gssl: compare cells", "cell", cells, [340, 170, 160, 90, 150, 130, 110, 110, 110],
            tag_group("protocol", aggregate=best),
            [bar(f"{headline}_mean"), scatter("fit_seconds_mean", f"{headline}_mean")]),
        VIEW_TAG + HISTORY_VIEW: view(
            "gssl: history", "cell", history, [340, 170, 160, 90, 130, 130, 110, 110, 110],
            tag_group("method", "protocol", aggregate=best), [bar(f"{headline}_mean")],
            history=True),
        VIEW_TAG + SPLIT_VIEW: view(
            "gssl: every split", "split", splits, [440, 150, 130, 80, 130, 110, 110, 110],
            tag_group("method", "protocol"), [bar(headline), scatter("fit_seconds", headline)]),
        VIEW_TAG + SELECTION_VIEW: view(
            "gssl: selection", "selection", selection, [360, 200, 120, 90, 220, 130, 110, 110],
            None, [bar("selection_score_mean")]),
    }


def ui_link(experiment_id: str, base: str = "http://127.0.0.1:5000", view: str = CELL_VIEW) -> str:
    """The MLflow UI address that opens an experiment's runs table on a gssl saved view."""
    return (f"{base}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
            f"&viewStateShareKey={view}")
