"""MLflow tracking: logging the runs (with :mod:`gssl.tracking.store`, which opens and initialises
the store, the only gssl modules that import MLflow).

Jobs that compute (solve, grid, select) never open the store: they write the runs they want logged
to a pending-runs file beside their output (:mod:`gssl.tracking.records`), and one logging job per
experiment (the ``mlflow_summary`` rule, a local rule) logs them all in one process: imports and
the store connection are paid once per experiment (about 2 s each), compute nodes need no route to
the tracking server, and one process per experiment writes to the store (logging jobs that meet on
a locked sqlite store retry with backoff).

- ``default_tracking_uri``, ``init_store``, ``http_budget``, ``unreachable``: of
  :mod:`gssl.tracking.store`, importable from here too.
- ``log_pending``: log the pending runs the store does not hold yet (a run tree per record: a root
  run -- a cell, a block of splits, a grid point, a selection -- and a child run per split),
  started with an explicit experiment id (never the active-experiment global state, which misfiles
  runs under concurrency); a record logged before is found by its tag and not logged twice.
- ``log_cell`` / ``log_run``: log a run tree / one run directly. ``summarize``: one summary run per experiment holding tables and plots; every run that is not
  current is tagged ``gssl.superseded=true`` (and a run left RUNNING by a killed logger, KILLED).The UI shows cell runs at the top (what its table and charts compare), their split runs nested.
"""

from __future__ import annotations

import contextlib
import random
import time

from ..errors import TrackingError
from ..store.hashing import canonical_json
from .records import (INDEX_TAG, KIND_TAG, RECORD_TAG, REPRESENTATION_TAG, SUMMARY_TAG, SUPERSEDED_TAG,
                      read_pending_file)
from .store import (default_tracking_uri, http_budget, init_store,  # noqa: F401  (importable from here)
                    mlflow_client, server_named, store_hint, unreachable)

MAX_PARAM_CHARS = 6000


def flatten(d: dict, prefix: str = "") -> dict[str, str]:
    """Nested dict -> {"a.b": "value"} with JSON for lists; the form MLflow params take."""
    out: dict[str, str] = {}
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        else:
            text = value if isinstance(value, str) else canonical_json(value)
            out[name] = text[:MAX_PARAM_CHARS]
    return out


def log_run(uri: str, experiment_id: str, run_name: str, tags: dict, params: dict, metrics: dict,
            history: list[dict] | None = None, artifacts: dict[str, dict] | None = None,
            parent_run_id: str | None = None, files: list | None = None) -> str:
    """Log one finished run; return its run id.

    ``metrics``: name -> float (non-finite values are skipped: MLflow rejects NaN in some stores).
    ``history``: per-iteration dicts, logged as stepped metrics ``history.<name>``.
    ``artifacts``: file name -> JSON-able dict (one small file per run is the cheap form).
    ``files``: paths of files to upload as they are (tables, plots).
    """
    client = mlflow_client(uri)
    _check_experiment(client, uri, experiment_id)
    return _log_one(client, experiment_id, dict(name=run_name, tags=tags, params=params,
                                                metrics=metrics, history=history,
                                                artifacts=artifacts, files=files), parent_run_id)


def log_cell(uri: str, experiment_id: str, parent: dict, children: list[dict]) -> tuple[str, list[str]]:
    """Log a parent run and its child runs in one process; return (parent id, child ids).

    Each of ``parent`` and ``children`` is a dict with keys ``name``, ``tags``, ``params``,
    ``metrics`` and optionally ``history`` and ``artifacts`` (as for :func:`log_run`). A failure
    marks every run logged so far FAILED and re-raises.
    """
    client = mlflow_client(uri)
    _check_experiment(client, uri, experiment_id)
    return _log_tree(client, experiment_id, parent, children)


def _log_tree(client, experiment_id: str, root: dict, children: list[dict],
              record: str | None = None) -> tuple[str, list[str]]:
    """The root run, its children, then the root FINISHED: a FINISHED root means a whole tree."""
    if record:
        root = {**root, "tags": {**root.get("tags", {}), RECORD_TAG: record}}
    root_id = _log_one(client, experiment_id, root, finish=False)
    try:
        child_ids = [_log_one(client, experiment_id,
                              {**c, "tags": {**c.get("tags", {}), INDEX_TAG: i}}, root_id)
                     for i, c in enumerate(children)]
        client.set_terminated(root_id, "FINISHED", end_time=root.get("end_time"))
    except BaseException as exc:
        _mark_failed(client, root_id, exc)
        raise
    return root_id, child_ids


def log_pending(uri: str, experiment_id: str, paths: list,
                digests: dict | None = None) -> dict[str, list[dict]]:
    """Log the run trees of pending-runs files that the store does not hold yet; return, per file,
    ``[{"run": root run id, "children": child run ids, "logged": whether logged now}, ...]`` in the
    file's order. ``digests``, if given, gets each file's sha256 (of the bytes logged).

    Every file is read, and checked against the sha256 it was written with, before anything is
    logged: a damaged one fails the call by name and logs nothing.

    A tree is identified by its file's path and sha256 and its index there (tag ``gssl.record`` on
    the root run): a file logged before -- its root FINISHED, so every child is there -- is not logged
    again, so this can run after every change of an experiment. A root left RUNNING or FAILED (a
    killed or failed logger) does not count: its tree is logged anew and the old runs end up
    superseded (:func:`summarize`).
    """
    files = {str(path): read_pending_file(path) for path in paths}
    if digests is not None:
        digests.update({path: digest for path, (digest, _) in files.items()})
    with server_named(uri, "logging the pending runs"):
        client = mlflow_client(uri)
        _check_experiment(client, uri, experiment_id)
        roots, kids = {}, {}
        for r in _all_runs(client, experiment_id):
            tags = r.data.tags
            if RECORD_TAG in tags and r.info.status == "FINISHED":
                roots[tags[RECORD_TAG]] = r.info.run_id
            if INDEX_TAG in tags and "mlflow.parentRunId" in tags:
                kids.setdefault(tags["mlflow.parentRunId"], {})[int(tags[INDEX_TAG])] = r.info.run_id
        out = {}
        for path, (digest, trees) in files.items():
            logged = []
            for i, tree in enumerate(trees):
                record = f"{path}:{digest[:32]}:{i}"  # the job output it belongs to, its content, its place
                root = roots.get(record)
                if root is not None and len(kids.get(root, {})) == len(tree["children"]):
                    logged.append({"run": root, "children": [kids[root][j] for j in range(len(tree["children"]))],
                                   "logged": False})
                else:
                    root, children = _retry_locked(lambda t=tree, r=record: _log_tree(
                        client, experiment_id, t["run"], t["children"], r))
                    logged.append({"run": root, "children": children, "logged": True})
            out[path] = logged
    return out


def log_files(uri: str, files: dict[str, list]) -> None:
    """Log each run's files (run id -> paths) as its artifacts, under their own names: a file
    logged again replaces the earlier copy, so this can run after every change of an experiment."""
    if not files:
        return
    with server_named(uri, "logging the cells' files"):
        client = mlflow_client(uri)
        for run_id, paths in files.items():
            for path in paths:
                _retry_locked(lambda r=run_id, p=path: client.log_artifact(r, str(p)))


LOCK_RETRIES = 5  # attempts at a run tree when another process holds the sqlite store's write lock


def _retry_locked(log, attempts: int = LOCK_RETRIES, base_delay: float = 0.5):
    """``log()``, tried again with jittered exponential backoff while a sqlite store answers
    "database is locked" (another experiment's logging job is writing): a failed attempt leaves a
    FAILED root, which the summary marks superseded. Other errors, and the last one, propagate."""
    for attempt in range(attempts):
        try:
            return log()
        except Exception as exc:  # noqa: BLE001 - only the lock is retried
            if "database is locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(base_delay * 2 ** attempt * random.uniform(0.5, 1.5))


def _check_experiment(client, uri: str, experiment_id: str) -> None:
    exp = client.get_experiment(experiment_id)
    if exp is None or exp.lifecycle_stage != "active":
        raise TrackingError(f"experiment id {experiment_id} is not an active experiment of {uri}")


def _log_one(client, experiment_id: str, spec: dict, parent_run_id: str | None = None,
             finish: bool = True) -> str:
    """create_run (tags), one log_batch per 900 entries, the artifacts, set_terminated (unless
    ``finish`` is false: a root run is finished after its children)."""
    from mlflow.entities import Metric, Param

    tags = {k: str(v) for k, v in (spec.get("tags") or {}).items()}
    tags.setdefault(SUPERSEDED_TAG, "false")  # current until a summary says otherwise
    if parent_run_id:
        tags["mlflow.parentRunId"] = parent_run_id
    # start/end: when the job that computed the run ran (ms since the epoch), not when it is logged
    run_id = client.create_run(experiment_id, start_time=spec.get("start_time"), tags=tags,
                               run_name=spec["name"]).info.run_id
    try:
        now = int(time.time() * 1000)
        ms = [Metric(k, float(v), now, 0) for k, v in (spec.get("metrics") or {}).items() if _finite(v)]
        for step, row in enumerate(spec.get("history") or []):
            ms += [Metric(f"history.{k}", float(v), now, step) for k, v in row.items() if _finite(v)]
        ps = [Param(k, v) for k, v in flatten(spec.get("params") or {}).items()]
        for i in range(0, max(len(ms), len(ps), 1), 900):  # MLflow caps a batch at 1000 entries
            client.log_batch(run_id, metrics=ms[i:i + 900], params=ps[i:i + 900], tags=[])
        for name, payload in (spec.get("artifacts") or {}).items():
            client.log_dict(run_id, payload, name)
        for path in spec.get("files") or ():
            client.log_artifact(run_id, str(path))
        if finish:
            client.set_terminated(run_id, "FINISHED", end_time=spec.get("end_time"))
    except BaseException as exc:
        _mark_failed(client, run_id, exc)
        raise
    return run_id


def _mark_failed(client, run_id: str, exc: BaseException) -> None:
    """Mark a run FAILED after ``exc`` -- unless the server stopped answering: another call would
    wait out a second budget (a dead server was reported only after every FAILED mark had timed
    out too). A run so left RUNNING is marked KILLED and superseded by the next logging job
    (:func:`summarize`). A failure of the mark itself is dropped: ``exc`` is what went wrong."""
    if unreachable(exc):
        return
    with contextlib.suppress(Exception):
        client.set_terminated(run_id, "FAILED")


def _finite(v) -> bool:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return False
    return f == f and f not in (float("inf"), float("-inf"))


def _all_runs(client, experiment_id: str):
    token = None
    while True:
        page = client.search_runs([experiment_id], max_results=1000, page_token=token)
        yield from page
        token = page.token
        if not token:
            return


def store_runs(uri: str, experiment_id: str) -> dict[str, tuple[str, dict, dict]]:
    """Every run of an experiment: run id -> (status, tags, latest metrics), for ``gssl verify``."""
    try:
        client = mlflow_client(uri)
        _check_experiment(client, uri, experiment_id)
        return {r.info.run_id: (r.info.status, dict(r.data.tags), dict(r.data.metrics))
                for r in _all_runs(client, experiment_id)}
    except TrackingError:
        raise
    except Exception as exc:  # noqa: BLE001 - re-raised with the store named
        raise TrackingError(f"cannot read MLflow store {uri!r}: {exc}. {store_hint(uri)}") from exc


def summarize(uri: str, experiment_id: str, experiment: str, current_run_ids: list[str],
              files: list[str], params: dict | None = None, metrics: dict | None = None,
              cells: list[dict] = (), representations: list[dict] = ()) -> str:
    """Log the summary run of an experiment and tidy the run tree; return the summary run id.

    ``cells``: parent runs to create for cells whose splits ran in several jobs (dicts as for
    :func:`log_cell`'s parent, plus ``children``: the ids of the block runs to nest under it).
    ``representations``: runs of the networks that learned features (gssl.pipeline.stages.
    representation_runs; ``key``: the (dataset, prep) whose cells get the tag
    ``gssl.representation_run_id`` naming it).
    Every run of the experiment that is neither current, nor one of these, nor the summary is
    tagged ``gssl.superseded=true``; the current ones carry ``false``.
    """
    with server_named(uri, "logging the summary run"):
        return _retry_locked(lambda: _summarize_once(uri, experiment_id, experiment, current_run_ids,
                                                     files, params, metrics, cells, representations))


def _summarize_once(uri, experiment_id, experiment, current_run_ids, files, params, metrics,
                    cells, representations=()) -> str:
    """One attempt of :func:`summarize` (an interrupted one leaves runs the next one supersedes)."""
    client = mlflow_client(uri)
    _check_experiment(client, uri, experiment_id)
    existing = list(_all_runs(client, experiment_id))  # the runs to tag; new ones start current
    missing = set(current_run_ids) - {r.info.run_id for r in existing}
    if missing:  # checked before anything is written: a refused summary changes nothing
        raise TrackingError(f"{len(missing)} runs named in the job outputs are not in experiment "
                            f"{experiment} of {uri} (e.g. {sorted(missing)[0]}); the tracking store "
                            f"changed since they were logged: log them again with "
                            f"snakemake --forcerun mlflow_summary")
    current = set(current_run_ids)
    learned = {}  # (dataset, prep) -> the run of the network that learned its features
    for rep in representations:
        learned[tuple(rep["key"])] = rid = _log_one(client, experiment_id, rep)
        current.add(rid)
    for cell in cells:
        key = (cell["tags"].get("gssl.dataset"), cell["tags"].get("gssl.prep"))
        if key in learned:
            cell = {**cell, "tags": {**cell["tags"], REPRESENTATION_TAG: learned[key]}}
        cid = _log_one(client, experiment_id, cell)
        for child in cell["children"]:
            client.set_tag(child, "mlflow.parentRunId", cid)
        current.add(cid)
    run = client.create_run(experiment_id, run_name=f"summary:{experiment}",
                            tags={SUMMARY_TAG: "true", KIND_TAG: "summary", SUPERSEDED_TAG: "false",
                                  "gssl.experiment": experiment,
                                  "mlflow.note.content": f"Summary of experiment {experiment}: "
                                                         f"its tables and plot, over "
                                                         f"{len(current_run_ids)} current runs "
                                                         f"(cells, blocks, splits, selection)."})
    sid = run.info.run_id
    current.add(sid)
    try:
        for path in files:
            client.log_artifact(sid, str(path))
        from mlflow.entities import Metric, Param

        now = int(time.time() * 1000)
        client.log_batch(sid, params=[Param(k, v) for k, v in flatten(params or {}).items()],
                         metrics=[Metric(k, float(v), now, 0) for k, v in (metrics or {}).items()
                                  if _finite(v)])
        for r in existing:
            key = (r.data.tags.get("gssl.dataset"), r.data.tags.get("gssl.prep"))
            if key in learned and r.data.tags.get(KIND_TAG) in ("cell", "selection_cell"):
                client.set_tag(r.info.run_id, REPRESENTATION_TAG, learned[key])
            want = "false" if r.info.run_id in current else "true"
            if r.data.tags.get(SUPERSEDED_TAG) != want:
                client.set_tag(r.info.run_id, SUPERSEDED_TAG, want)
            if want == "true" and r.info.status == "RUNNING":  # left by a killed logger
                client.set_terminated(r.info.run_id, "KILLED")
        client.set_terminated(sid, "FINISHED")
    except BaseException as exc:
        _mark_failed(client, sid, exc)
        raise
    return sid
