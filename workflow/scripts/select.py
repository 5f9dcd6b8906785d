"""Choose a method's parameters from its grid runs on the selection protocol (one choice, or one
per split); write the grid (table, plot) and its MLflow run to log (rule mlflow_summary logs it)."""
import json
import time
from collections import Counter

from gssl.store.h5io import atomic_path, atomic_write_text
from gssl.pipeline.jobs import job_context
from gssl.pipeline.stages import read_blocks
from gssl.pipeline.selection import choice_record, choose, choose_per_split, grid_table, plot_grid
from gssl.tracking.records import KIND_TAG, run_tree, write_pending

sm = snakemake
wc = {k: sm.wildcards[k] for k in ("experiment", "dataset", "prep", "graph", "method")}
T_START_MS = int(time.time() * 1000)  # the run's start in MLflow: this job's, not the logging job's
with job_context(sm.log[0]) as log:
    sel, entry = sm.params.selection, sm.params.method
    metric, tie_break = sel.get("metric", "error_unlabeled"), sel.get("tie_break")
    blocks = [b for p in sm.input.runs for b in read_blocks(p)]
    table = grid_table(blocks, entry, metric, tie_break)
    best = choose(table, metric, tie_break)
    if sel.get("per_split"):
        per_split = choose_per_split(blocks, entry, metric, tie_break)
        choice = choice_record(wc["method"], entry, per_split=per_split)
        wins = Counter(per_split.values())
        table["chosen_in_splits"] = [wins.get(v, 0) for v in table["variant"]]
        summary = {"per_split": {s: c["values"] for s, c in choice["per_split"].items()}}
        at = {(b["variant"], r["split"]): r["metrics"][metric] for b in blocks for r in b["splits"]}
        score = sum(at[(v, s)] for s, v in per_split.items()) / len(per_split)  # of each split's choice
        top, count = wins.most_common(1)[0]
        top_values = next(c["values"] for c in choice["per_split"].values() if c["variant"] == top)
        chosen_text = (f"per split, most often {', '.join(f'{k} = {v}' for k, v in top_values.items())} "
                       f"({count} of {len(per_split)} splits)")
    else:
        choice = choice_record(wc["method"], entry, best)
        summary = choice["values"]
        score = best[f"{metric}_mean"]
        chosen_text = ", ".join(f"{k} = {v}" for k, v in choice["values"].items())
    keys = list(entry["grid"])
    with atomic_path(sm.output.csv) as tmp:
        table.to_csv(tmp, index=False, float_format="%.6g")
    title = (f"{wc['method']} on {wc['dataset']}/{wc['prep']}/{wc['graph']}\n"
             f"selection on {sel['protocol']} ({metric}): chosen {chosen_text}")
    with atomic_path(sm.output.plot) as tmp:
        plot_grid(table, keys, metric, tmp, title)
    tags = {f"gssl.{k}": v for k, v in wc.items()}
    tags.update({KIND_TAG: "selection", "gssl.protocol": sel["protocol"], "gssl.rule": "select",
                 "gssl.scored_points": str(bool(sel.get("scored_points", False))).lower(),
                 "gssl.code_hash": sm.params.code})
    write_pending(sm.output.mlflow, [run_tree({
        "name": f"select · {wc['method']} · {wc['dataset']}/{wc['prep']}/{wc['graph']}", "tags": tags,
        "params": {"chosen": json.dumps(summary, sort_keys=True, separators=(",", ":")),
                   "grid": entry["grid"], "selection": {"metric": metric, **sel}},
        "metrics": {f"best_{metric}_mean": best[f"{metric}_mean"],
                    "selection_score_mean": score,  # what the saved view shows
                    "n_grid_points": len(table), "n_splits": best["n_splits"]},
        "files": [sm.output.csv, sm.output.plot],
        "start_time": T_START_MS, "end_time": int(time.time() * 1000)})])
    atomic_write_text(sm.output.grid, json.dumps({**wc, "selection": sel, "metric": metric,
                                                  "choice": choice,
                                                  "rows": json.loads(table.to_json(orient="records"))},
                                                 indent=1) + "\n")
    atomic_write_text(sm.output.choice, json.dumps(choice, indent=1, sort_keys=True) + "\n")
    log.info("chose %s among %d grid points (best mean %s = %.4g)", chosen_text, len(table), metric,
             best[f"{metric}_mean"])
