"""Model selection as a workflow stage: score every grid point of a method on the selection
protocol's splits, choose the one with the lowest mean metric (ties: the first in grid order).

Selection reads only the grid jobs' outputs, so which labels it saw is decided by the selection
protocol (a holdout set the reported protocols leave unused, see ``gssl.splits.holdout_mask``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from .config import get_dotted, grid_variants
from .errors import ConfigError
from .report import HIGHER_IS_BETTER


def grid_table(blocks: list[dict], entry: dict, metric: str) -> pd.DataFrame:
    """One row per grid point, in grid order: variant id, the grid's values, and the metric's mean,
    standard error and number of splits over the selection splits."""
    scores: dict[str, list[float]] = {}
    runs: dict[str, list[str]] = {}
    for block in blocks:
        for split in block["splits"]:
            if metric not in split["metrics"]:
                raise ConfigError(f"selection metric {metric!r} is not in the grid runs' metrics "
                                  f"(they have: {', '.join(sorted(split['metrics']))}); set "
                                  f"selection.metric to one of them")
            scores.setdefault(block["variant"], []).append(split["metrics"][metric])
        runs.setdefault(block["variant"], []).append(block["mlflow_parent_run_id"])
    rows = []
    for order, (variant, params) in enumerate(grid_variants(entry)):
        if variant not in scores:
            raise ConfigError(f"grid point {variant} has no selection runs")
        v = np.asarray(scores[variant], dtype=float)
        values = {key: get_dotted(params, key) for key in entry["grid"]}
        rows.append({"order": order, "variant": variant,
                     **{k: json.dumps(x) if isinstance(x, (dict, list)) else x for k, x in values.items()},
                     f"{metric}_mean": float(v.mean()),
                     f"{metric}_sem": float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else np.nan,
                     "n_splits": int(v.size), "mlflow_run_ids": ",".join(runs[variant])})
    return pd.DataFrame(rows)


def choose(table: pd.DataFrame, metric: str) -> pd.Series:
    """The row with the best mean: the lowest error, or the highest purity / clustering accuracy
    (the first in grid order among equal means). A point whose mean is NaN never wins."""
    means = table[f"{metric}_mean"].to_numpy(dtype=float)
    if np.isnan(means).all():
        raise ConfigError(f"selection metric {metric!r} is NaN at every grid point")
    best = np.nanargmax(means) if metric.startswith(HIGHER_IS_BETTER) else np.nanargmin(means)
    return table.iloc[int(best)]  # nanarg* return the first of equal extrema


def choice_record(method_id: str, entry: dict, row: pd.Series) -> dict:
    """What evaluation jobs read: only the choice, so an unchanged choice leaves the file's content
    (and thus its checksum) unchanged and reruns nothing downstream."""
    params = dict(grid_variants(entry))[row["variant"]]
    return {"method": method_id, "solver": entry["solver"], "variant": row["variant"],
            "values": {k: get_dotted(params, k) for k in entry["grid"]}, "params": params}


def plot_grid(table: pd.DataFrame, keys: list[str], metric: str, out, title: str) -> None:
    """Per grid parameter: the best mean metric over the other parameters at each of its values."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(keys), figsize=(max(6.0, 4.4 * len(keys)), 3.8), squeeze=False)
    higher = metric.startswith(HIGHER_IS_BETTER)
    for ax, key in zip(axes[0], keys):
        labels = table[key].map(lambda v: json.dumps(v) if not isinstance(v, str) else v)
        values = list(dict.fromkeys(labels))  # null / NaN values are groups like any other
        best, sem = [], []
        for v in values:
            sub = table.loc[labels == v]
            row = sub.iloc[int(np.nanargmax(sub[f"{metric}_mean"]) if higher
                               else np.nanargmin(sub[f"{metric}_mean"]))]
            best.append(row[f"{metric}_mean"])
            sem.append(row[f"{metric}_sem"])
        x = np.arange(len(values))
        ax.errorbar(x, best, yerr=np.nan_to_num(sem), marker="o", capsize=3)
        ax.set_xticks(x, values, rotation=30)
        ax.set_xlabel(key)
        ax.set_ylabel(f"{metric.replace('_', ' ')} (%)")
        ax.set_title("best over the other parameters", fontsize=8, color="0.35")
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100, format="png")
    plt.close(fig)
