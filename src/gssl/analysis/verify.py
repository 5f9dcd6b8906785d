"""``gssl verify RESULTS``: check a results folder against what it records about itself.

- Every HDF5 cache file (data, features, graphs, splits) is read whole: complete, a gssl file,
  ``params_hash`` equal to the hash of ``params``, contents equal to ``content_sha256``.
- Every experiment's logging ledger (``mlflow/<experiment>.summary.json``) is checked against the
  job outputs and the MLflow store it names: each output it lists exists, and each of its runs is
  in the store, FINISHED, current (not superseded) and, for a split run, holds the very metrics of
  the output's record; the summary run is FINISHED.
- Every solve job output is listed in a ledger (else it was never logged).

Nothing is changed; the problems are returned (and printed by the CLI) with the file they concern.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..errors import CacheError, GsslError


def verify_results(results) -> tuple[list[str], dict]:
    """Return (problems, counts) for the results folder ``results`` (wherever it now lies: the
    ledgers' paths are taken relative to the results folder they were written for)."""
    results = Path(results)
    if not results.is_dir():
        raise GsslError(f"{results} is not a results folder (run the workflow first)")
    problems, counts = [], {"cache files": 0, "job outputs": 0, "MLflow runs": 0}
    for path in sorted(results.rglob("*.h5")):
        counts["cache files"] += 1
        problems += _check_cache_file(path)
    logged = set()
    for ledger in sorted((results / "mlflow").glob("*.summary.json")):
        try:
            found, outputs, n_runs = _check_ledger(ledger, results)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # unreadable or not a ledger
            found, outputs, n_runs = [f"{ledger}: not a readable logging ledger ({exc!r}): rerun its "
                                      f"logging job (snakemake --forcerun mlflow_summary)"], set(), 0
        problems += found
        logged |= outputs
        counts["MLflow runs"] += n_runs
    for path in sorted((results / "runs").rglob("*.json")):
        counts["job outputs"] += 1
        if path.resolve() not in logged and not path.name.startswith("."):
            problems.append(f"{path}: in no experiment's logging ledger: its runs were never logged "
                            f"(run the workflow to the end: snakemake --cores N)")
    return problems, counts


def _check_cache_file(path: Path) -> list[str]:
    from ..store.h5io import read_attrs, read_h5

    try:
        kind = read_attrs(path)["gssl_kind"]
        read_h5(path, kind)  # params_hash and content_sha256 recomputed
    except CacheError as exc:
        return [str(exc)]
    return []


def _metrics_differ(recorded: dict, logged: dict) -> list[str]:
    out = []
    for name, value in recorded.items():
        try:
            v = float(value)
        except (TypeError, ValueError):
            continue
        if not math.isfinite(v):
            continue  # never logged (MLflow refuses NaN in some stores)
        if name not in logged or not math.isclose(logged[name], v, rel_tol=1e-12, abs_tol=0.0):
            out.append(f"{name}: output {v!r}, MLflow {logged.get(name)!r}")
    return out


def _in_results(output: str, results: Path, recorded: str | None) -> Path:
    """A ledger path (``<results as configured>/runs/...``) inside the results folder given."""
    if recorded:
        try:
            return results / Path(output).relative_to(recorded)
        except ValueError:
            pass
    return results.resolve().parent / output  # ledgers written before they recorded the folder


def _check_ledger(ledger: Path, results: Path) -> tuple[list[str], set, int]:
    from ..pipeline.stages import read_blocks
    from ..errors import TrackingError
    from ..tracking.records import SUPERSEDED_TAG
    from ..tracking.client import store_runs

    info = json.loads(ledger.read_text())
    try:
        runs = store_runs(info["tracking_uri"], info["experiment_id"])
    except TrackingError as exc:
        return [f"{ledger}: {exc}"], set(), 0
    problems, outputs, n = [], set(), 0

    def check_run(run_id, where, recorded=None):
        nonlocal n
        n += 1
        run = runs.get(run_id)
        if run is None:
            problems.append(f"{where}: MLflow run {run_id} is not in experiment "
                            f"{info['experiment']} of {info['tracking_uri']}")
            return
        status, tags, metrics = run
        if status != "FINISHED":
            problems.append(f"{where}: MLflow run {run_id} is {status}, not FINISHED")
        if tags.get(SUPERSEDED_TAG) != "false":
            problems.append(f"{where}: MLflow run {run_id} is tagged superseded but is the current one")
        if recorded is not None:
            diff = _metrics_differ(recorded, metrics)
            if diff:
                problems.append(f"{where}: MLflow run {run_id} holds other metrics than the output "
                                f"({'; '.join(diff[:3])})")

    for output, trees in info["runs"].items():
        path = _in_results(output, results, info.get("results"))
        if not path.exists():
            problems.append(f"{ledger}: lists {path}, which does not exist (rerun the workflow)")
            continue
        outputs.add(path.resolve())
        if path.name.endswith(".mlflow.json.gz"):  # a selection's run
            for tree in trees:
                check_run(tree["run"], path)
            continue
        try:
            blocks = read_blocks(path)
        except (OSError, ValueError, KeyError) as exc:
            problems.append(f"{path}: not a readable job output ({exc!r}): delete it and rerun the "
                            f"workflow")
            continue
        if len(blocks) != len(trees):
            problems.append(f"{path}: {len(blocks)} blocks, but {ledger} logged {len(trees)} run trees")
            continue
        for block, tree in zip(blocks, trees):
            check_run(tree["run"], path)
            if tree["children"] and len(tree["children"]) != len(block["splits"]):
                problems.append(f"{path}: {len(block['splits'])} splits, {len(tree['children'])} split runs")
                continue
            for record, child in zip(block["splits"], tree["children"]):
                check_run(child, f"{path} split {record['split']}", record["metrics"])
    check_run(info["summary_run_id"], f"{ledger} (summary run)")
    return problems, outputs, n
