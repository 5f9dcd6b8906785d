"""An experiment's logging job (rule mlflow_summary): create the store's schema and the experiment
where they are missing (under a file lock: the logging jobs of several experiments may start at
once), log the runs its solve, grid and select jobs left to log (those not in the store yet), a
parent run for each cell whose splits ran in several jobs, and the summary run (tables, plots);
mark every run that is no longer current as superseded; each cell's predictions table (rule
predictions) becomes an artifact of the cell's run. Writes the run ids of every job output
(the ledger from job outputs to MLflow runs), the UI link, the sha256 of every pending-runs file it
logged, and the params each cache file the experiment read was to be built with: what
`gssl verify` checks the results folder against."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path

from ..metrics import split_statistics
from ..store.h5io import atomic_write_text
from ..tracking.client import init_store, log_files, log_pending, summarize
from ..tracking.records import KIND_TAG, run_name
from ..tracking.views import ui_link
from .plan import CELL_KEYS as KEYS  # not gssl.analysis.stats: SciPy's stats cost 1 s
from .stages import read_blocks


def run_parameters(entry: dict) -> dict:
    """An experiment entry as the summary run's params: without its ``reference:`` (the paper's
    values and the reasons beside them are display only, on the tables and the reproduction page,
    and a reason's pattern such as ``sparse_lp/*`` is no MLflow parameter name)."""
    return {k: v for k, v in entry.items() if k != "reference"}


def cell_predictions(results, name: str, key: tuple) -> list[str]:
    """The predictions table of a cell (rule predictions: each split's predicted class, or for a
    protocol of kind predict each unlabeled row's), where it was written; none for a grid point."""
    from pathlib import Path

    from . import paths

    if key[-1]:  # a selection cell's grid point: its predictions are not kept
        return []
    parts = dict(zip(KEYS, key))
    return [p for p in (paths.path(results, t, experiment=name, **parts)
                        for t in (paths.PREDICTIONS, paths.UNLABELED_PREDICTIONS)) if Path(p).is_file()]


def cell_runs(name: str, by_cell: dict, files: dict | None = None) -> list[dict]:
    """A parent run for each cell (or selection cell: a grid point's) whose splits ran in several
    jobs, over its blocks' split runs; ``by_cell``: cell key -> [(block, its run id)]; ``files``:
    cell key -> the files to log as the cell run's artifacts (its predictions)."""
    cells = []
    for key, group in by_cell.items():
        if len(group) == 1:  # the job's parent run is the cell's run
            continue
        wc, variant, first = dict(zip(KEYS, key)), key[-1], group[0][0]
        metrics = split_statistics([s["metrics"] for b, _ in group for s in b["splits"]])
        cells.append({"name": run_name(wc, variant),
                      "tags": {**{f"gssl.{k}": v for k, v in wc.items()}, "gssl.experiment": name,
                               KIND_TAG: "selection_cell" if variant else "cell",
                               "gssl.solver": first["method_params"]["solver"]},
                      "params": {"method": first["method_params"]}, "metrics": metrics,
                      "children": [rid for _, rid in group], "files": (files or {}).get(key, [])})
    return cells


def check_lineage(results, outputs: list, blocks: dict, pending: list) -> None:
    """Every job output, and the runs its pending-runs file holds, computed from the cache files
    now in its cell's place (:func:`gssl.pipeline.lineage.check_job_output`): CacheError naming
    each that is not, before anything is logged."""
    from ..errors import CacheError
    from ..tracking.records import read_pending
    from .lineage import check_job_output

    problems = []
    for i, path in enumerate(outputs):
        trees = read_pending(pending[i]) if i < len(pending) else None
        problems += check_job_output(results, path, blocks[path], trees, pending[i] if trees else None)
    if problems:
        raise CacheError(f"{len(problems)} job outputs were not computed from the files in their place; "
                         f"nothing was logged:\n  " + "\n  ".join(problems))


def logging_job(tracking_uri: str, name: str, entry: dict, headline, inputs, out, caches: dict, log,
                representations: list[dict] = (), configfiles: list[str] | None = None) -> None:
    """Log experiment ``name`` and write ``out`` (``results/mlflow/<experiment>.summary.json``):
    ``inputs`` as rule mlflow_summary names them (runs, pending, grid_runs, tables); ``entry`` its
    config entry, ``headline`` its saved view's metric, ``caches`` what the ledger records for
    ``gssl verify`` (:func:`gssl.analysis.verify.expected_caches`), ``representations`` the runs
    of the networks that learned features (:func:`gssl.pipeline.stages.representation_runs`),
    ``configfiles`` the config files Snakemake ran with (recorded: verify's advice names them)."""
    t_start = time.perf_counter()
    results = Path(out).parents[1]  # the ledger's paths start with it
    outputs = [*inputs.runs, *inputs.grid_runs]  # pending[i] belongs to outputs[i]; selections follow
    blocks = {path: read_blocks(path) for path in outputs}  # each output read once
    check_lineage(results, outputs, blocks, inputs.pending)  # before anything is logged
    exp_id = init_store(tracking_uri, [name], results_dir=results,
                        descriptions={name: entry.get("description", "")}, headlines={name: tuple(headline)})[name]
    t_init = time.perf_counter()
    digests = {}  # pending-runs file -> sha256 of the bytes logged
    logged = log_pending(tracking_uri, exp_id, inputs.pending, digests=digests)
    t_logged = time.perf_counter()
    ledger = {(outputs[i] if i < len(outputs) else path): logged[str(path)]
              for i, path in enumerate(inputs.pending)}
    current = [rid for trees in ledger.values() for t in trees for rid in (t["run"], *t["children"])]
    by_cell = defaultdict(list)  # cell -> [(block, its run id)]
    for path in outputs:
        for block, tree in zip(blocks[path], ledger[path], strict=True):
            by_cell[tuple(block[k] for k in KEYS) + (block.get("variant"),)].append((block, tree["run"]))
    files = {key: cell_predictions(results, name, key) for key in by_cell}
    sid = summarize(tracking_uri, exp_id, name, current, [*inputs.tables, *getattr(inputs, "confusion", [])],
                    params={"experiment": run_parameters(entry)}, metrics={"n_runs": len(current), "n_cells": len(by_cell)},
                    cells=cell_runs(name, by_cell, files), representations=representations)
    # a cell solved in one job: its predictions on that job's parent run (overwritten when logged again)
    log_files(tracking_uri, {group[0][1]: files[key] for key, group in by_cell.items()
                             if len(group) == 1 and files[key]})
    t_done = time.perf_counter()
    n_new = sum(1 + len(t["children"]) for trees in ledger.values() for t in trees if t["logged"])
    timings = {"init_seconds": t_init - t_start, "log_seconds": t_logged - t_init,
               "summary_seconds": t_done - t_logged, "job_seconds": t_done - t_start}
    atomic_write_text(out, json.dumps({
        "experiment": name, "experiment_id": exp_id, "summary_run_id": sid,
        "n_split_runs": sum(len(b["splits"]) for p in inputs.runs for b in blocks[p]),
        "n_cells": len(by_cell), "n_job_runs": len(current), "n_logged_now": n_new,
        "tracking_uri": tracking_uri, "ui": ui_link(exp_id), "results": str(results),
        "timings": timings, "runs": ledger, "pending": digests, "caches": caches,
        **({"configfiles": configfiles} if configfiles is not None else {})}, indent=1) + "\n")
    log.info("summary run %s over %d cells; %d runs logged now, %d current job runs; timings %s", sid,
             len(by_cell), n_new, len(current), timings)
