"""Log the experiment's summary run (tables, plots), a parent run for each cell whose splits ran in
several jobs, and mark every run that is no longer current as superseded."""
import json
from collections import defaultdict

from gssl.h5io import atomic_write_text
from gssl.jobs import job_context
from gssl.pipeline import read_blocks
from gssl.report import KEYS, split_statistics
from gssl.tracking import KIND_TAG, read_sentinel, run_name, summarize

sm = snakemake
with job_context(sm.log[0]) as log:
    name = sm.wildcards.experiment
    exp_id = read_sentinel(sm.input.experiment, name, sm.params.tracking_uri)
    blocks = [b for p in [*sm.input.runs, *sm.input.grid_runs] for b in read_blocks(p)]
    current = [s["mlflow_run_id"] for b in blocks for s in b["splits"] if s["mlflow_run_id"]]
    current += [b["mlflow_parent_run_id"] for b in blocks]
    current += [json.load(open(p))["mlflow_run_id"] for p in sm.input.selections]
    by_cell = defaultdict(list)
    for b in blocks:
        by_cell[tuple(b[k] for k in KEYS) + (b.get("variant"),)].append(b)
    cells = []
    for key, group in by_cell.items():
        if len(group) == 1:  # the job's parent run is the cell's run
            continue
        wc = dict(zip(KEYS, key))
        variant = key[-1]
        metrics = split_statistics([s["metrics"] for b in group for s in b["splits"]])
        cells.append({"name": run_name(wc, variant),
                      "tags": {**{f"gssl.{k}": v for k, v in wc.items()}, "gssl.experiment": name,
                               KIND_TAG: "selection_cell" if variant else "cell",
                               "gssl.solver": group[0]["method_params"]["solver"]},
                      "params": {"method": group[0]["method_params"]}, "metrics": metrics,
                      "children": [b["mlflow_parent_run_id"] for b in group]})
    sid = summarize(sm.params.tracking_uri, exp_id, name, current,
                    [sm.input.csv, sm.input.md, sm.input.html, sm.input.plot],
                    params={"experiment": sm.params.experiment},
                    metrics={"n_runs": len(current), "n_cells": len(by_cell)}, cells=cells)
    atomic_write_text(sm.output[0], json.dumps({"experiment": name, "experiment_id": exp_id,
                                                "summary_run_id": sid, "n_split_runs": sum(
                                                    len(b["splits"]) for b in blocks),
                                                "n_cells": len(by_cell),
                                                "tracking_uri": sm.params.tracking_uri}, indent=1) + "\n")
    log.info("summary run %s over %d cells", sid, len(by_cell))
