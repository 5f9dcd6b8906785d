"""The selection stage's job: choose a method's parameters from its grid runs on the selection
protocol (one choice, or one per split), write the choice and the grid (JSON, table, plot), and
return the MLflow run it leaves to log (built by the caller's :class:`~gssl.tracking.job_runs.JobRuns`)."""

from __future__ import annotations

import json
from collections import Counter

from ..store.h5io import atomic_path, atomic_write_text
from .selection import choice_record, choose, choose_per_split, grid_table
from .stages import read_blocks


def per_split_choice(blocks: list[dict], wc: dict, entry: dict, metric: str, tie_break, table) -> tuple:
    """(choice, its summary, the mean score of each split's choice, the choice in words); adds the
    table's ``chosen_in_splits`` column."""
    per_split = choose_per_split(blocks, entry, metric, tie_break)
    choice = choice_record(wc["method"], entry, per_split=per_split)
    wins = Counter(per_split.values())
    table["chosen_in_splits"] = [wins.get(v, 0) for v in table["variant"]]
    summary = {"per_split": {s: c["values"] for s, c in choice["per_split"].items()}}
    at = {(b["variant"], r["split"]): r["metrics"][metric] for b in blocks for r in b["splits"]}
    score = sum(at[(v, s)] for s, v in per_split.items()) / len(per_split)  # of each split's choice
    top, count = wins.most_common(1)[0]
    top_values = next(c["values"] for c in choice["per_split"].values() if c["variant"] == top)
    text = (f"per split, most often {', '.join(f'{k} = {v}' for k, v in top_values.items())} "
            f"({count} of {len(per_split)} splits)")
    return choice, summary, score, text


def select_job(grid_runs: list, wc: dict, sel: dict, entry: dict, runs, out, plot_grid) -> dict:
    """Choose from the grid jobs' outputs ``grid_runs``; write ``out`` (choice, grid, csv, plot:
    drawn by ``plot_grid``, :func:`gssl.analysis.plots.plot_grid`, which the caller passes so that
    the pipeline imports no plotting); return the selection run (``runs.selection``) for
    ``out.mlflow``."""
    metric, tie_break = sel.get("metric", "error_unlabeled"), sel.get("tie_break")
    blocks = [b for p in grid_runs for b in read_blocks(p)]
    table = grid_table(blocks, entry, metric, tie_break)
    best = choose(table, metric, tie_break)
    if sel.get("per_split"):
        choice, summary, score, chosen_text = per_split_choice(blocks, wc, entry, metric, tie_break, table)
    else:
        choice = choice_record(wc["method"], entry, best)
        summary, score = choice["values"], best[f"{metric}_mean"]
        chosen_text = ", ".join(f"{k} = {v}" for k, v in choice["values"].items())
    with atomic_path(out.csv) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")
    title = (f"{wc['method']} on {wc['dataset']}/{wc['prep']}/{wc['graph']}\n"
             f"selection on {sel['protocol']} ({metric}): chosen {chosen_text}")
    with atomic_path(out.plot) as tmp:
        plot_grid(table, list(entry["grid"]), metric, tmp, title)
    run = runs.selection(sel["protocol"], sel.get("scored_points", False), params={
        "chosen": json.dumps(summary, sort_keys=True, separators=(",", ":")),
        "grid": entry["grid"], "selection": {"metric": metric, **sel}}, metrics={
        f"best_{metric}_mean": best[f"{metric}_mean"], "selection_score_mean": score,  # what the saved view shows
        "n_grid_points": len(table), "n_splits": best["n_splits"]}, files=[out.csv, out.plot])
    atomic_write_text(out.grid, json.dumps({**wc, "selection": sel, "metric": metric, "choice": choice,
                                            "rows": json.loads(table.to_json(orient="records"))}, indent=1) + "\n")
    atomic_write_text(out.choice, json.dumps(choice, indent=1, sort_keys=True) + "\n")
    return run
