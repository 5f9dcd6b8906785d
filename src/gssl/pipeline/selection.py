"""Model selection as a workflow stage: score every grid point of a method on the selection
protocol's splits, choose the one with the lowest mean metric (ties: the lower mean tie-break
metric, then the first in grid order) -- or, per split, the best point on that split's own
validation points (Melacci & Belkin's protocol).

Selection reads only the grid jobs' outputs, so which labels it saw is decided by the selection
protocol (a holdout set the reported protocols leave unused, see ``gssl.splits.holdout_mask``) or,
per split, by the metric (validation points, never scored in the split they choose for).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from .plan import get_dotted, grid_variants, set_dotted
from ..errors import ConfigError
from ..metrics import HIGHER_IS_BETTER, summary

if TYPE_CHECKING:  # pandas is imported where a table is built: solve jobs never need it
    import pandas as pd


def _split_scores(blocks: list[dict], metric: str, required: bool = True) -> dict[str, dict[int, float]]:
    """{variant: {split: metric}} over the grid jobs' blocks; a metric that is not ``required`` (a
    tie-break some solvers do not report) is NaN where missing."""
    scores: dict[str, dict[int, float]] = {}
    for block in blocks:
        for split in block["splits"]:
            if metric not in split["metrics"] and required:
                raise ConfigError(f"selection metric {metric!r} is not in the grid runs' metrics "
                                  f"(they have: {', '.join(sorted(split['metrics']))}); set "
                                  f"selection.metric to one of them")
            value = split["metrics"].get(metric, float("nan"))
            scores.setdefault(block["variant"], {})[split["split"]] = value
    return scores


def grid_table(blocks: list[dict], entry: dict, metric: str, tie_break: str | None = None) -> pd.DataFrame:
    """One row per grid point, in grid order: variant id, the grid's values, and the metric's (and
    the tie-break's) mean, standard error and number of splits over the selection splits."""
    names = [metric] + ([tie_break] if tie_break else [])
    scores = {name: _split_scores(blocks, name, required=name == metric) for name in names}
    rows = []
    for order, (variant, params) in enumerate(grid_variants(entry)):
        if variant not in scores[metric]:
            raise ConfigError(f"grid point {variant} has no selection runs")
        values = {key: get_dotted(params, key) for key in entry["grid"]}
        row = {"order": order, "variant": variant,
               **{k: json.dumps(x) if isinstance(x, (dict, list)) else x for k, x in values.items()}}
        for name in names:
            stats = summary([scores[name][variant][s] for s in sorted(scores[name][variant])])
            row[f"{name}_mean"], row[f"{name}_sem"] = stats["mean"], stats["sem"]
        row["n_splits"] = len(scores[metric][variant])
        rows.append(row)
    import pandas as pd

    return pd.DataFrame(rows)


def _best(values: np.ndarray, ties: np.ndarray | None, higher: bool) -> int:
    """Index of the best value (NaN never wins); among equal values the lowest tie-break, then
    the first."""
    if np.isnan(values).all():
        raise ConfigError("the selection metric is NaN at every grid point")
    key = np.where(np.isnan(values), np.inf, -values if higher else values)
    cand = np.flatnonzero(key == key.min())
    if ties is not None and cand.size > 1:
        t = np.where(np.isnan(ties[cand]), np.inf, ties[cand])
        cand = cand[t == t.min()]
    return int(cand[0])


def choose(table: pd.DataFrame, metric: str, tie_break: str | None = None) -> pd.Series:
    """The row with the best mean: the lowest error, or the highest purity / clustering accuracy;
    among equal means the lowest mean ``tie_break``, then the first in grid order. A point whose
    mean is NaN never wins."""
    means = table[f"{metric}_mean"].to_numpy(dtype=float)
    if np.isnan(means).all():
        raise ConfigError(f"selection metric {metric!r} is NaN at every grid point")
    ties = table[f"{tie_break}_mean"].to_numpy(dtype=float) if tie_break else None
    return table.iloc[_best(means, ties, metric.startswith(HIGHER_IS_BETTER))]


def choose_per_split(blocks: list[dict], entry: dict, metric: str,
                     tie_break: str | None = None) -> dict[int, str]:
    """{split: variant}: on each split the best grid point by that split's metric (ties: its
    tie-break, then the first in grid order)."""
    order = [v for v, _ in grid_variants(entry)]
    scores = _split_scores(blocks, metric)
    ties = _split_scores(blocks, tie_break, required=False) if tie_break else None
    missing = [v for v in order if v not in scores]
    if missing:
        raise ConfigError(f"grid points {', '.join(missing)} have no selection runs")
    splits = sorted(scores[order[0]])
    for v in order:
        if sorted(scores[v]) != splits:
            raise ConfigError(f"grid point {v} ran on splits {sorted(scores[v])}, the others on "
                              f"{splits}: rerun its grid jobs")
    choice = {}
    for s in splits:
        values = np.array([scores[v][s] for v in order], dtype=float)
        t = np.array([ties[v][s] for v in order], dtype=float) if ties else None
        choice[s] = order[_best(values, t, metric.startswith(HIGHER_IS_BETTER))]
    return choice


def choice_record(method_id: str, entry: dict, row: pd.Series | None = None,
                  per_split: dict[int, str] | None = None) -> dict:
    """What evaluation jobs read: only the choice (one grid point, or one per split), so an
    unchanged choice leaves the file's content (and thus its checksum) unchanged and reruns
    nothing downstream."""
    points = dict(grid_variants(entry))

    def values(variant):
        return {k: get_dotted(points[variant], k) for k in entry["grid"]}

    record = {"method": method_id, "solver": entry["solver"]}
    if per_split is not None:
        return {**record, "per_split": {str(s): {"variant": v, "values": values(v)}
                                        for s, v in sorted(per_split.items())}}
    return {**record, "variant": row["variant"], "values": values(row["variant"]),
            "params": points[row["variant"]]}


def methods_for_splits(method: dict, choice: dict, splits: list[int]) -> list[tuple[dict, list[int], dict]]:
    """(method with the chosen values applied to its own params, its splits, the values) for the
    splits of one evaluation job; one group when the choice is not per split. The values are set
    on the method's own params, so a method ``selected_as`` another keeps its own other params."""
    per_split = choice.get("per_split")
    groups: dict[str, tuple[dict, list[int], dict]] = {}
    for s in splits:
        if per_split is None:
            values = choice["values"]
        elif str(s) in per_split:
            values = per_split[str(s)]["values"]
        else:
            raise ConfigError(f"the per-split choice of {choice['method']} has no split {s} "
                              f"(it has {', '.join(per_split)})")
        key = json.dumps(values, sort_keys=True)
        if key not in groups:
            params = json.loads(json.dumps(method.get("params") or {}))
            for k, v in values.items():
                set_dotted(params, k, json.loads(json.dumps(v)))
            rest = {k: v for k, v in method.items() if k not in ("params", "grid", "selected_as")}
            groups[key] = ({**rest, "params": params}, [], values)  # e.g. class_priors kept
        groups[key][1].append(s)
    return list(groups.values())
