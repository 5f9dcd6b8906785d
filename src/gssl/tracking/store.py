"""The MLflow store: where it is, how long a call to it may take, opening and initialising it,
and naming it when it fails. With :mod:`gssl.tracking.client` (which logs the runs) the only gssl
modules that import MLflow.

- ``default_tracking_uri(results)``: ``sqlite:///<abs>/results/mlflow.db`` unless ``MLFLOW_TRACKING_URI`` is set.
- ``init_store``: create the schema and the experiments (with the saved views of
  :mod:`gssl.tracking.views`) under a file lock.
- ``http_budget``: MLflow's HTTP retry settings for a ``GSSL_MLFLOW_TIMEOUT`` (set on import);
  ``unreachable`` / ``server_named``: a server that stopped answering, reported as such.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
from pathlib import Path

from ..errors import TrackingError
from .views import EXPERIMENT_KIND, saved_views

# MLflow's telemetry stays off unless the user turns it on: a benchmark should not contact outside
# hosts, and its thread made 2 % of server-logged runs fail (issue #21)
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")


def http_budget(seconds: float) -> dict[str, str]:
    """MLflow's HTTP retry settings for a dead or silent tracking server to be reported within
    ``seconds`` per call: MLflow's defaults (7 retries with exponential backoff, 120 s timeouts)
    take about five minutes. Two retries sleep about 1 + 2 s (backoff factor 1, plus jitter up to
    1 s each); the rest is split over the three attempts' timeouts."""
    if not seconds >= 10:
        raise ValueError(f"GSSL_MLFLOW_TIMEOUT must be a number of seconds >= 10, got {seconds!r}")
    return {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
            "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "1", "MLFLOW_HTTP_REQUEST_TIMEOUT": f"{(seconds - 5) / 3:.0f}"}


def _budget_from_env() -> dict[str, str]:
    raw = os.environ.get("GSSL_MLFLOW_TIMEOUT", "30")
    try:
        return http_budget(float(raw))
    except ValueError:
        raise TrackingError(f"GSSL_MLFLOW_TIMEOUT={raw!r}: give a number of seconds >= 10 "
                            "(how long a tracking server may stay silent before a job fails)") from None


# GSSL_MLFLOW_TIMEOUT (default 30 s) bounds each MLflow call; MLFLOW_HTTP_* set by the user win.
# The names gssl set are listed in _GSSL_MLFLOW_HTTP, so a child process (a job of the Snakemake
# process that set them) derives them again from its own GSSL_MLFLOW_TIMEOUT instead of inheriting.
_OURS = "_GSSL_MLFLOW_HTTP"
_ours = set(filter(None, os.environ.get(_OURS, "").split(",")))
for _name, _value in _budget_from_env().items():
    if _name in _ours or _name not in os.environ:
        os.environ[_name] = _value
        _ours.add(_name)
os.environ[_OURS] = ",".join(sorted(_ours))


def default_tracking_uri(results_dir="results") -> str:
    env = os.environ.get("MLFLOW_TRACKING_URI")
    if env:
        return env
    return f"sqlite:///{Path(results_dir).resolve() / 'mlflow.db'}"


@functools.lru_cache(maxsize=8)
def mlflow_client(uri: str):
    """One client per store and process: the store's engine and schema check are paid once."""
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def _artifact_root(uri: str, results_dir) -> str | None:
    """Local stores keep artifacts under results/mlflow-artifacts; servers choose their own."""
    if uri.startswith(("http://", "https://", "databricks")):
        return None
    return (Path(results_dir).resolve() / "mlflow-artifacts").as_uri()


# What the experiment holds, for MLflow UIs that read it (3.17 decides its landing tab by the
# browser's "GenAI / Model training" switch or the link's workflowType=machine_learning instead).
def ensure_experiment(client, name: str, artifact_root: str | None, description: str = "",
                      headline: tuple[str, bool] = ("error_unlabeled", True)) -> str:
    """Get or create experiment ``name`` with its tags (kind, description, saved views); a
    concurrent creator winning the race is not an error."""
    from mlflow.exceptions import MlflowException

    tags = {"gssl.experiment": name, **EXPERIMENT_KIND, **saved_views(*headline)}
    if description:
        tags["mlflow.note.content"] = description  # shown as the experiment's description
    exp = client.get_experiment_by_name(name)
    if exp is None:
        location = f"{artifact_root}/{name}" if artifact_root else None
        try:
            return client.create_experiment(name, artifact_location=location, tags=tags)
        except MlflowException as exc:
            if "RESOURCE_ALREADY_EXISTS" not in str(exc.error_code) and "already exists" not in str(exc):
                raise
            exp = client.get_experiment_by_name(name)
    if exp.lifecycle_stage == "deleted":
        client.restore_experiment(exp.experiment_id)
    for key, value in tags.items():  # stores made by older versions get the tags too
        if exp.tags.get(key) != value:
            client.set_experiment_tag(exp.experiment_id, key, value)
    return exp.experiment_id


def _sqlite_file(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI (None for other stores)."""
    if not uri.startswith("sqlite:///"):
        return None
    return Path(uri[len("sqlite:///"):].split("?", 1)[0])


@contextlib.contextmanager
def _init_lock(uri: str, results_dir):
    """An exclusive file lock around store initialisation.

    MLflow creates (and migrates) a sqlite store's schema the first time a client opens it, and two
    processes doing so at once fail ("table ... already exists"). The lock sits beside a sqlite
    database (so every user of that file shares it) and under ``results_dir`` otherwise (the logging
    job, which initialises, is a local rule, so all initialisers of a workflow run on one host).
    """
    db = _sqlite_file(uri)
    lock = db.with_name(db.name + ".init.lock") if db else Path(results_dir) / "mlflow" / ".init.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def init_store(uri: str, experiments: list[str], results_dir="results",
               descriptions: dict[str, str] | None = None,
               headlines: dict[str, tuple[str, bool]] | None = None) -> dict[str, str]:
    """Create the store's schema and the named experiments; return name -> experiment id.

    Safe for any number of concurrent callers on one host: schema creation and experiment creation
    run under one file lock, and an experiment created meanwhile by another host is re-read.
    """
    try:
        with _init_lock(uri, results_dir):
            client = mlflow_client(uri)
            client.search_experiments(max_results=1)  # creates/migrates the schema of a new store
            root = _artifact_root(uri, results_dir)
            return {name: ensure_experiment(client, name, root, (descriptions or {}).get(name, ""),
                                            (headlines or {}).get(name, ("error_unlabeled", True)))
                    for name in experiments}
    except Exception as exc:  # noqa: BLE001 - re-raised with context
        raise TrackingError(f"cannot initialise MLflow store {uri!r}: {exc}. {store_hint(uri)}") from exc


def store_hint(uri: str) -> str:
    if os.environ.get("MLFLOW_TRACKING_URI"):
        return ("MLFLOW_TRACKING_URI is set: check that it names a reachable store (unset it to use "
                "the default sqlite store under results/)")
    db = _sqlite_file(uri)
    if db is not None:
        return (f"If {db} is damaged or was written by another MLflow version, move it away and "
                f"rerun (the runs' JSON outputs are kept), or run: mlflow db upgrade {uri}")
    return "Check that the tracking server is running and reachable"


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from or while handling) says that the
    tracking server did not answer: refused, reset or timed out connections. MLflow has already
    spent the call's budget (:func:`http_budget`) on it."""
    import requests
    import urllib3

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                            urllib3.exceptions.MaxRetryError, urllib3.exceptions.ProtocolError,
                            ConnectionError, TimeoutError)):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


@contextlib.contextmanager
def server_named(uri: str, what: str):
    """A tracking server that stops answering fails the caller with a TrackingError naming it."""
    try:
        yield
    except TrackingError:
        raise
    except Exception as exc:  # noqa: BLE001 - only an unreachable server is re-raised as ours
        if not unreachable(exc):
            raise
        raise TrackingError(f"the tracking server {uri} did not answer while {what} ({exc}). "
                            f"{store_hint(uri)}; once it answers, rerun snakemake: what was logged "
                            f"is kept, and what was not is logged then") from exc
