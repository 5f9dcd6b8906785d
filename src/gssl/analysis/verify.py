"""``gssl verify RESULTS``: check a results folder against what it records about itself.

- Every HDF5 cache file (data, features, graphs, splits) is read whole, by the reader a job reads it
  with: complete, a gssl file of the kind its folder holds, ``params_hash`` equal to the hash of
  ``params``, contents equal to ``content_sha256``; and built with the params the config of its
  experiment's last logged run expects at that path (the ledger's ``caches``, from the config
  the logging job ran with), as the next ``snakemake`` run's jobs would check: a valid file of
  another config entry (a k=5 graph copied over the k=10 one) is refused by name.
- Every pending-runs file (``*.mlflow.json.gz``) is read and checked against the sha256 it was
  written with, and against the sha256 the ledger recorded when its runs were logged.
- Every experiment's logging ledger (``mlflow/<experiment>.summary.json``) is checked against the
  job outputs and the MLflow store it names: each output it lists exists, and each of its runs is
  in the store, FINISHED, current (not superseded) and, for a split run, holds the very metrics of
  the output's record; the summary run is FINISHED.
- Every solve job output is listed in a ledger, else it was never logged; or, when the store
  holds its runs (tagged superseded), it is orphaned: logged once, then dropped from the config
  (a method or protocol taken out, a split block renamed). Orphans are not problems: they are
  listed as notes, to delete.

Nothing is changed; the problems are returned (and printed by the CLI) with the file they concern.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ..errors import CacheError, GsslError
from ..pipeline.lineage import cache_links, cell_files, check_cache_link, check_job_output, job_cell
from ..pipeline.stages import read_blocks


def verify_results(results) -> tuple[list[str], dict, list[str]]:
    """Return (problems, counts, notes) for the results folder ``results`` (wherever it now lies:
    the ledgers' paths are taken relative to the results folder they were written for). The notes
    name the orphaned job outputs, which no config produces any more."""
    results = Path(results)
    if not results.is_dir():
        raise GsslError(f"{results} is not a results folder (run the workflow first)")
    problems, counts = [], {"cache files": 0, "job outputs": 0, "MLflow runs": 0,
                            "pending-runs files": 0}
    ledgers, infos = sorted((results / "mlflow").glob("*.summary.json")), {}
    for ledger in ledgers:
        try:
            infos[ledger] = json.loads(ledger.read_text())
        except (OSError, ValueError) as exc:
            problems.append(f"{ledger}: not a readable logging ledger ({exc!r}): rerun its logging "
                            f"job (snakemake --configfile <the config you ran> --cores N --forcerun mlflow_summary)")
    expected = _expected_by_path(infos, results, problems)
    broken = set()  # cache files (resolved) with a problem: what is computed from them is not judged
    for path in sorted(results.rglob("*.h5"), key=lambda p: _chain_order(p, results)):
        if path.name.startswith("."):
            continue
        counts["cache files"] += 1
        found = _check_cache_file(path, results, expected.get(path.resolve(), {}))
        if not found and not _upstream_broken(results, path, broken):  # the first link that breaks
            found = check_cache_link(results, path) or _check_splits_drawn(results, path)
        if found:
            broken.add(path.resolve())
        problems += found
    missing = sorted(p for p in expected if not p.exists())
    problems += [f"{_shown(p, results)}: missing (a cache file its experiment's jobs read): rebuild it "
                 f"({RERUN})" for p in missing]
    counts["missing cache files"] = len(missing)
    logged, pending, stored = set(), {}, set()
    for ledger, info in infos.items():
        try:
            found, outputs, n_runs = _check_ledger(ledger, info, results, stored)
            pending.update({_in_results(p, results, info.get("results")).resolve(): (sha, ledger)
                            for p, sha in (info.get("pending") or {}).items()})
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:  # not a ledger
            found, outputs, n_runs = [f"{ledger}: not a readable logging ledger ({exc!r}): rerun its "
                                      f"logging job (snakemake --configfile <the config you ran> --cores N --forcerun mlflow_summary)"], set(), 0
        problems += found
        logged |= outputs
        counts["MLflow runs"] += n_runs
    # ledgers written before they recorded the pending files' sha256 list none of them
    listed = bool(infos) and all(isinstance(i, dict) and "pending" in i for i in infos.values())
    notes, shas = [], {}  # shas: pending-runs file (resolved) -> its sha256, each read once
    for path in sorted(results.rglob("*.mlflow.json.gz")):
        if path.name.startswith("."):
            continue
        counts["pending-runs files"] += 1
        found, shas[path.resolve()] = _check_pending(path, *pending.get(path.resolve(), (None, None)))
        if not found and listed and path.resolve() not in pending and not _orphan(path, shas, stored):
            found = [f"{path}: in no experiment's logging ledger: its runs were never logged (run the "
                     f"workflow to the end: snakemake --cores N)"]
        problems += found
    gone = sorted(p for p in pending if not p.exists())
    problems += [f"{_shown(p, results)}: missing (the runs its job left to log; its ledger "
                 f"{pending[p][1].name} logged them): rebuild it with its job's output "
                 f"({RERUN.replace('<path>', str(_shown(p, results)))})" for p in gone]
    for folder in ("runs", "selection"):
        for path in sorted((results / folder).rglob("*.json")):
            if path.name.startswith("."):
                continue
            cell = job_cell(results, path)
            if cell is None or any(Path(f).resolve() in broken for f in cell_files(results, cell).values()):
                continue  # named above: the cache file it was computed from
            try:
                blocks = read_blocks(path)
            except (OSError, ValueError, KeyError, TypeError):
                continue  # named by the ledgers' check, or as never logged
            twin = path.with_name(path.name[:-len(".json")] + ".mlflow.json.gz")
            problems += check_job_output(results, path, blocks, trees=_trees(twin), pending=twin)
    for path in sorted((results / "runs").rglob("*.json")):
        counts["job outputs"] += 1
        if path.resolve() in logged or path.name.startswith("."):
            continue
        if _orphan(path.with_name(path.name[:-len(".json")] + ".mlflow.json.gz"), shas, stored):
            notes.append(f"{path}: orphaned: no experiment's config produces it any more (its MLflow "
                         f"runs are superseded); delete it with its .mlflow.json.gz")
        else:
            problems.append(f"{path}: in no experiment's logging ledger: its runs were never logged "
                            f"(run the workflow to the end: snakemake --cores N)")
    counts["orphaned job outputs"] = len(notes)
    if not infos:
        notes.append(f"no logging ledger in {results / 'mlflow'} (no experiment logged yet): checked each cache "
                     f"file (checksums, lineage, splits drawn again) and each job output against the cache "
                     f"files it was computed from; could not check what each experiment's config expects of "
                     f"its cache files, which files are missing, nor anything in MLflow: that needs a "
                     f"logging job to have run (snakemake --cores N, to the end)")
    command = _configfile_option(infos)
    if command is not None:
        problems = [p.replace(f"--configfile {PLACEHOLDER} ", command) for p in problems]
    return problems, counts, notes


PLACEHOLDER = "<the config you ran>"


def _configfile_option(infos: dict) -> str | None:
    """``--configfile A B `` (or nothing, for the default config) as the ledgers recorded the
    config files their logging jobs ran with; None where they do not agree or record none."""
    recorded = [i.get("configfiles") if isinstance(i, dict) else None for i in infos.values()]
    if not recorded or not all(isinstance(r, list) for r in recorded):
        return None
    found = {tuple(r) for r in recorded}
    if len(found) != 1:
        return None
    files = [f for f in next(iter(found)) if Path(f).as_posix() != "config/config.yaml"]
    return f"--configfile {' '.join(files)} " if files else ""


RERUN = "snakemake --configfile <the config you ran> --cores N --forcerun <path>"


def _trees(pending: Path) -> list | None:
    """The run trees of a pending-runs file, or None where it is missing or unreadable (named by
    the pending files' own check)."""
    from ..tracking.records import read_pending

    try:
        return read_pending(pending) if pending.exists() else None
    except GsslError:
        return None


def _shown(path: Path, results: Path) -> Path:
    """``path`` as under the results folder given (the ledgers' paths are resolved)."""
    try:
        return results / path.relative_to(results.resolve())
    except ValueError:
        return path


def _chain_order(path: Path, results: Path) -> tuple:
    """data, features, graphs, splits, then the rest: upstream before what is built from it."""
    try:
        top = path.relative_to(results).parts[0]
    except ValueError:
        top = ""
    order = {"data": 0, "features": 1, "graphs": 2, "splits": 3}
    return order.get(top, 4), str(path)


def _upstream_broken(results: Path, path: Path, broken: set) -> bool:
    found = cache_links(results, path)
    return found is not None and any(Path(p).resolve() in broken for p in found[1].values())


def _check_splits_drawn(results: Path, path: Path) -> list[str]:
    """A splits file drawn again from its dataset's labels and its recorded protocol."""
    found = cache_links(results, path)
    if found is None or found[0] != "splits" or not Path(found[1]["data"]).exists():
        return []
    from ..datasets.store import load_dataset
    from ..splits import check_rederived, load_splits
    from ..store.h5io import read_attrs

    try:
        attrs = read_attrs(path)
        drawn = attrs["params"]
        if not {"protocol", "dataset", "protocol_id"} <= set(drawn):
            return [f"{path}: its params do not record how its splits were drawn: rebuild it "
                    f"({RERUN.replace('<path>', str(path))})"]
        y = load_dataset(found[1]["data"], rule="dataset").y
        check_rederived(path, load_splits(path, rule="splits"), y, drawn, test_from=attrs.get("test_from"))
    except CacheError as exc:
        return [str(exc)]
    return []


def _orphan(pending: Path, shas: dict, stored: set) -> bool:
    """Whether an MLflow store a ledger names holds the run trees of this very pending-runs file
    (its path and sha256, as read by the pending files' check; the root runs' ``gssl.record``
    tag), FINISHED and superseded."""
    sha = shas.get(pending.resolve())
    return sha is not None and (pending.resolve(), sha[:32]) in stored


# the cache folders of a results folder: the kind of file each holds, its rule and its reader
FOLDERS = {"data": ("dataset", "dataset", "gssl.datasets.store", "load_dataset"),
           "features": ("features", "features", "gssl.features", "load_features"),
           "graphs": ("graph", "graph", "gssl.graphs.cache", "load_graph"),
           "splits": ("splits", "splits", "gssl.splits", "load_splits")}


def expected_caches(config: dict, experiment: str) -> dict[str, dict]:
    """The cache files one experiment's jobs read, as the config expects them: path (under the
    results folder as configured) -> ``{"kind", "params"}``, the params each is built with (those
    :func:`gssl.pipeline.stages.expected_params` gives the solve jobs, and a dataset's config
    entry). The logging job records them in its ledger, and :func:`verify_results` checks them."""
    from ..pipeline import paths
    from ..pipeline.stages import expected_params

    results, e = config["results"], config["experiments"][experiment]
    protocols = list(e["protocols"])
    if e.get("selection") and e["selection"]["protocol"] not in protocols:
        protocols.append(e["selection"]["protocol"])
    seed = config["seed"]
    out = {}
    for ds in e["datasets"]:
        out[paths.path(results, paths.DATA, dataset=ds)] = {"kind": "dataset", "params": config["datasets"][ds]}
        for prep in e["preprocessing"]:
            for graph in e["graphs"]:
                for proto in protocols:  # the params of a cell's three inputs, as its solve jobs expect them
                    want = expected_params(config["preprocessing"][prep], seed, config["graphs"][graph],
                                           config["protocols"][proto], ds, proto)
                    cell = {"dataset": ds, "prep": prep, "graph": graph, "protocol": proto}
                    for kind, template in (("features", paths.FEATURES), ("graph", paths.GRAPH),
                                           ("splits", paths.SPLITS)):
                        out[paths.path(results, template, **cell)] = {"kind": kind, "params": want[kind]}
    return out


def _expected_by_path(infos: dict, results: Path, problems: list) -> dict[Path, dict]:
    """Resolved cache path -> {params_hash: (params, ledger)} of what the ledgers expect there."""
    from ..store.hashing import params_hash

    out: dict[Path, dict] = {}
    for ledger, info in infos.items():
        caches = info.get("caches") if isinstance(info, dict) else None
        if caches is None:  # written before ledgers recorded them
            continue
        try:
            found = [(_in_results(rel, results, info.get("results")).resolve(), want["params"])
                     for rel, want in caches.items()]
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"{ledger}: its 'caches' are not readable ({exc!r}): rerun its logging job "
                            f"(snakemake --configfile <the config you ran> --cores N --forcerun mlflow_summary)")
            continue
        for path, params in found:
            out.setdefault(path, {})[params_hash(params)] = (params, ledger)
    return out


def _check_cache_file(path: Path, results: Path, expected: dict) -> list[str]:
    """The file read by the reader its folder's jobs use, checked against each params a ledger
    expects at its path (several only where experiments were logged with different configs)."""
    import importlib

    from ..store.h5io import read_attrs, read_h5

    try:
        rel = path.relative_to(results)
    except ValueError:
        rel = path
    folder = FOLDERS.get(rel.parts[0]) if len(rel.parts) > 1 else None
    try:
        if folder is None:  # not a cache folder: any gssl file, read whole
            read_h5(path, read_attrs(path)["gssl_kind"])
            return []
        kind, rule, module, reader = folder
        load = getattr(importlib.import_module(module), reader)
        if not expected:
            load(path, rule=rule)  # of the kind its folder holds, checksums recomputed
        for params, ledger in expected.values():
            try:
                load(path, expect_params=params, rule=rule)
            except CacheError as exc:
                if len(expected) == 1:
                    raise
                raise CacheError(f"{exc} (as {ledger} expects)") from None
    except CacheError as exc:
        return [str(exc)]
    return []


def _check_pending(path: Path, logged_sha: str | None,
                   ledger: Path | None) -> tuple[list[str], str | None]:
    """A pending-runs file: readable and matching the sha256 written in it, and the very bytes its
    logging job logged (the sha256 its ledger recorded). Returns (problems, its sha256: None when
    unreadable)."""
    from ..errors import TrackingError
    from ..tracking.records import read_pending_file

    try:
        sha, _ = read_pending_file(path)
    except TrackingError as exc:
        return [str(exc)], None
    if logged_sha is not None and sha != logged_sha:
        return [f"{path}: its sha256 {sha[:12]}... is not the {logged_sha[:12]}... {ledger} logged: the "
                f"file changed after its runs were logged (an edit, or its job ran again since): run "
                f"the workflow to the end (snakemake --cores N) to log it, or delete it and its job's "
                f"output and rerun"], sha
    return [], sha


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


def _check_ledger(ledger: Path, info: dict, results: Path, stored: set) -> tuple[list[str], set, int]:
    """The ledger's outputs and runs against its store (problems, the outputs it lists, the runs
    checked); ``stored`` gets (pending file, sha256[:32]) of every FINISHED run tree in the store
    that a later logging job tagged superseded."""
    from ..pipeline.stages import read_blocks
    from ..errors import TrackingError
    from ..tracking.records import RECORD_TAG, SUPERSEDED_TAG
    from ..tracking.client import store_runs

    try:
        runs = store_runs(info["tracking_uri"], info["experiment_id"])
    except TrackingError as exc:
        return [f"{ledger}: {exc}"], set(), 0
    for status, tags, _ in runs.values():
        path, _, digest = tags.get(RECORD_TAG, "").rpartition(":")[0].rpartition(":")
        if status == "FINISHED" and path and tags.get(SUPERSEDED_TAG) == "true":
            stored.add((_in_results(path, results, info.get("results")).resolve(), digest))
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
            problems.append(f"{ledger}: lists {path}, which does not exist: rebuild it "
                            f"({RERUN.replace('<path>', str(path))})")
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
