"""MLflow tracking: the only gssl module that imports MLflow.

- ``default_tracking_uri(results)``: ``sqlite:///<abs>/results/mlflow.db`` unless ``MLFLOW_TRACKING_URI`` is set.
- ``init_store``: migrate the schema once and create experiments (race-safe), before parallel jobs log.
- ``log_run``: one run per solver job, started with an explicit experiment id (never the active-experiment
  global state, which misfiles runs under concurrency).
- ``summarize``: one summary run per experiment holding tables and plots; current runs become its
  children (``mlflow.parentRunId``) and every other run of the experiment is tagged superseded.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .errors import GsslError
from .hashing import canonical_json

TAG_PREFIX = "gssl."
SUMMARY_TAG = "gssl.summary"
SUPERSEDED_TAG = "gssl.superseded"
MAX_PARAM_CHARS = 6000


class TrackingError(GsslError):
    """The tracking store is unreachable or does not hold the expected experiment."""


def default_tracking_uri(results_dir="results") -> str:
    env = os.environ.get("MLFLOW_TRACKING_URI")
    if env:
        return env
    return f"sqlite:///{Path(results_dir).resolve() / 'mlflow.db'}"


def _client(uri: str):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def _artifact_root(uri: str, results_dir) -> str | None:
    """Local stores keep artifacts under results/mlflow-artifacts; servers choose their own."""
    if uri.startswith(("http://", "https://", "databricks")):
        return None
    return (Path(results_dir).resolve() / "mlflow-artifacts").as_uri()


def ensure_experiment(client, name: str, artifact_root: str | None) -> str:
    """Get or create experiment ``name``; a concurrent creator winning the race is not an error."""
    from mlflow.exceptions import MlflowException

    exp = client.get_experiment_by_name(name)
    if exp is not None:
        if exp.lifecycle_stage == "deleted":
            client.restore_experiment(exp.experiment_id)
        return exp.experiment_id
    location = f"{artifact_root}/{name}" if artifact_root else None
    try:
        return client.create_experiment(name, artifact_location=location,
                                        tags={"gssl.experiment": name})
    except MlflowException as exc:
        if "RESOURCE_ALREADY_EXISTS" not in str(exc.error_code) and "already exists" not in str(exc):
            raise
        return client.get_experiment_by_name(name).experiment_id


def init_store(uri: str, experiments: list[str], results_dir="results") -> dict[str, str]:
    """Create the store's schema and the named experiments; return name -> experiment id."""
    try:
        client = _client(uri)
        client.search_experiments(max_results=1)  # creates/migrates the schema of a new sqlite store
        root = _artifact_root(uri, results_dir)
        return {name: ensure_experiment(client, name, root) for name in experiments}
    except Exception as exc:  # noqa: BLE001 - re-raised with context
        raise TrackingError(f"cannot initialise MLflow store {uri!r}: {exc}. Check MLFLOW_TRACKING_URI "
                            f"(unset it to use the default sqlite store under results/)") from exc


def read_sentinel(path, experiment: str, uri: str) -> str:
    """Experiment id recorded by the init rule, checked against the store actually in use."""
    info = json.loads(Path(path).read_text())
    if info.get("tracking_uri") != uri:
        raise TrackingError(
            f"{path} was written for tracking store {info.get('tracking_uri')!r} but jobs now log to "
            f"{uri!r}; rerun the init rule: snakemake --forcerun mlflow_experiment")
    exp_id = info["experiment_id"]
    if info.get("experiment") != experiment:
        raise TrackingError(f"{path} names experiment {info.get('experiment')!r}, expected {experiment!r}")
    return exp_id


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
            history: list[dict] | None = None, artifacts: dict[str, dict] | None = None) -> str:
    """Log one finished solver job as one MLflow run; return its run id.

    ``metrics``: name -> float (non-finite values are skipped: MLflow rejects NaN in some stores).
    ``history``: per-iteration dicts, logged as stepped metrics and as a JSON artifact.
    ``artifacts``: file name -> JSON-able dict.
    """
    from mlflow.entities import Metric, Param, RunTag

    client = _client(uri)
    exp = client.get_experiment(experiment_id)
    if exp is None or exp.lifecycle_stage != "active":
        raise TrackingError(f"experiment id {experiment_id} is not an active experiment of {uri}")
    run = client.create_run(experiment_id, tags={k: str(v) for k, v in tags.items()}, run_name=run_name)
    run_id = run.info.run_id
    try:
        now = int(time.time() * 1000)
        ms = [Metric(k, float(v), now, 0) for k, v in metrics.items() if _finite(v)]
        for step, row in enumerate(history or []):
            ms += [Metric(f"history.{k}", float(v), now, step) for k, v in row.items() if _finite(v)]
        ps = [Param(k, v) for k, v in flatten(params).items()]
        for i in range(0, max(len(ms), len(ps), 1), 900):  # MLflow caps a batch at 1000 entries
            client.log_batch(run_id, metrics=ms[i:i + 900], params=ps[i:i + 900], tags=[])
        if history:
            client.log_dict(run_id, {"history": history}, "history.json")
        for name, payload in (artifacts or {}).items():
            client.log_dict(run_id, payload, name)
        client.set_terminated(run_id, "FINISHED")
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    return run_id


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


def summarize(uri: str, experiment_id: str, experiment: str, current_run_ids: list[str],
              files: list[str], params: dict | None = None, metrics: dict | None = None) -> str:
    """Log the summary run of an experiment and tidy the run tree; return the summary run id."""
    from mlflow.entities import RunTag

    client = _client(uri)
    run = client.create_run(experiment_id, run_name=f"summary:{experiment}",
                            tags={SUMMARY_TAG: "true", "gssl.experiment": experiment,
                                  "mlflow.note.content": f"Summary of {len(current_run_ids)} current "
                                                          f"runs of experiment {experiment}."})
    sid = run.info.run_id
    try:
        for path in files:
            client.log_artifact(sid, str(path))
        if params:
            from mlflow.entities import Param
            client.log_batch(sid, params=[Param(k, v) for k, v in flatten(params).items()])
        for k, v in (metrics or {}).items():
            if _finite(v):
                client.log_metric(sid, k, float(v))
        current = set(current_run_ids)
        for r in _all_runs(client, experiment_id):
            rid = r.info.run_id
            if rid == sid:
                continue
            if rid in current:
                client.log_batch(rid, tags=[RunTag("mlflow.parentRunId", sid),
                                            RunTag(SUPERSEDED_TAG, "false")])
            elif r.data.tags.get(SUPERSEDED_TAG) != "true":
                client.set_tag(rid, SUPERSEDED_TAG, "true")
        missing = current - {r.info.run_id for r in _all_runs(client, experiment_id)}
        if missing:
            raise TrackingError(f"{len(missing)} runs named in the job outputs are not in experiment "
                                f"{experiment} of {uri} (e.g. {sorted(missing)[0]}); the tracking store "
                                f"changed since they ran: rerun them with snakemake --forcerun solve")
        client.set_terminated(sid, "FINISHED")
    except BaseException:
        client.set_terminated(sid, "FAILED")
        raise
    return sid
