"""Fault injection (issue #21), the tracking store: two experiments' logging jobs at once on a
fresh sqlite store and on a loopback MLflow server, a server killed while the jobs log and while
one process logs, and a server that never answers. Each case records its figures (FIGURE_ROWS),
which the session prints as one table at its end (conftest.py) and docs/reliability.md copies.
The kills of cache writes, corrupt caches and full disks are in test_faults_cache.py; bad config
inputs in test_faults_input.py (three files, so that make test's two processes share them out).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from workflow_helpers import (N_JOBS, N_SPLITS, SMALL, SNAKEMAKE, make_workspace, parse_jobs, record,
                              rules_of, smk, store_figures)

pytestmark = [pytest.mark.e2e, pytest.mark.faults, pytest.mark.slow]

MLFLOW = str(Path(sys.executable).with_name("mlflow"))
TWO_EXPERIMENTS = json.loads(json.dumps(SMALL))
TWO_EXPERIMENTS["experiments"]["e2e_b"] = {**SMALL["experiments"]["e2e"], "description": "the twin"}


def assert_store_exact(ws: Path, db: Path | None = None) -> dict:
    fig = store_figures(ws, db)
    assert fig["finished"] == fig["splits"], fig
    assert fig["misfiled"] == fig["lost"] == fig["twice"] == fig["running"] == 0, fig
    return fig


# ----------------------------------------------------------------------------- concurrency
@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """Two experiments run at --cores 32 up to their tables, not logged yet. Compute jobs never open
    the store, so the contention is between the two experiments' logging jobs (how many solve jobs
    fed them does not matter): each case below logs these outputs anew, into its own fresh store,
    and runs nothing else."""
    ws = make_workspace(tmp_path_factory.mktemp("solved") / "ws", TWO_EXPERIMENTS)
    proc = smk(ws, "--cores", "32", "--omit-from", "mlflow_summary")
    assert rules_of(parse_jobs(proc))["solve"] == 2 * N_JOBS
    return ws


def copy_of(solved: Path, folder: Path) -> Path:
    shutil.copytree(solved, folder / "ws", symlinks=True)  # mtimes kept: nothing is recomputed
    return folder / "ws"


def test_two_experiments_at_32_cores_two_loggers_on_a_fresh_sqlite_store(solved, tmp_path):
    """The two logging jobs, writing to one new sqlite file at once, each file exactly their runs.
    Once: the race of two initialisers on a fresh store is repeated where it costs seconds
    (test_tracking's concurrent initialisers), not a workflow run per repeat."""
    ws = copy_of(solved, tmp_path)
    proc = smk(ws, "--cores", "32")
    assert set(rules_of(parse_jobs(proc))) == {"mlflow_summary", "all"}
    fig = assert_store_exact(ws)
    assert fig["splits"] == 2 * N_SPLITS
    record(f"{2 * N_SPLITS} splits, --cores 32, fresh sqlite store", jobs=2 * N_JOBS, **fig)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def mlflow_server(folder: Path, port: int):
    """``mlflow server`` on 127.0.0.1:port, sqlite backend and a proxied artifact folder in
    ``folder``; stopped (its whole process group) on exit unless the test killed it already."""
    folder.mkdir(parents=True, exist_ok=True)
    # no telemetry, and no job runner (MLflow 3's huey workers: GenAI jobs a tracking store never runs)
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    with open(folder / "server.log", "ab") as log:
        proc = subprocess.Popen([MLFLOW, "server", "--backend-store-uri", f"sqlite:///{folder / 'server.db'}",
                                 "--artifacts-destination", str(folder / "artifacts"), "--host", "127.0.0.1",
                                 "--port", str(port), "--workers", "1"],
                                stdout=log, stderr=log, env=env, start_new_session=True)
    deadline = time.time() + 90
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            raise AssertionError(f"mlflow server did not start:\n{(folder / 'server.log').read_text()[-3000:]}")
        time.sleep(0.3)
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_two_experiments_at_32_cores_log_exactly_to_a_loopback_mlflow_server(solved, tmp_path):
    """With the server-killed case below, 2 x 138 runs logged through a server."""
    port = free_port()
    with mlflow_server(tmp_path / "server", port):
        ws = copy_of(solved, tmp_path)
        smk(ws, "--cores", "32", env={"MLFLOW_TRACKING_URI": f"http://127.0.0.1:{port}"})
        fig = assert_store_exact(ws, tmp_path / "server" / "server.db")
    assert fig["splits"] == 2 * N_SPLITS
    record(f"{2 * N_SPLITS} splits, --cores 32, loopback mlflow server", jobs=2 * N_JOBS, **fig)


def _count_runs(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as con:
            return con.execute("SELECT count(*) FROM runs").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_server_killed_while_logging_fails_in_bounded_time_and_a_rerun_after_restart_is_exact(
        solved, tmp_path):
    port, folder = free_port(), tmp_path / "server"
    uri = f"http://127.0.0.1:{port}"
    ws = copy_of(solved, tmp_path)  # the jobs' outputs exist: the logging is what is hit
    env = {k: v for k, v in os.environ.items() if k != "GSSL_DATA_MIRROR"}
    env.update(PYTHONPATH=str(ws / "src"), GSSL_OFFLINE="1", MLFLOW_TRACKING_URI=uri)
    with mlflow_server(folder, port) as server:
        proc = subprocess.Popen([SNAKEMAKE, "--cores", "32"], cwd=ws, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        deadline = time.time() + 300
        while _count_runs(folder / "server.db") < 10 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
        os.killpg(server.pid, signal.SIGKILL)  # the server dies mid-logging
        killed = time.time()
        out, _ = proc.communicate(timeout=300)
        waited = time.time() - killed
    logged_before = _count_runs(folder / "server.db")
    assert proc.returncode != 0, "the logging finished before the server was killed: nothing was tested"
    logs = "".join(p.read_text() for p in (ws / "results" / "logs").rglob("*.log") if "mlflow" in p.name or "summary" in p.name)
    assert f"127.0.0.1:{port}" in logs + out
    assert waited < DEAD_SERVER_BOUND, (f"the jobs took {waited:.0f} s to fail after the server died "
                                        f"(bound: {DEAD_SERVER_BOUND} s, GSSL_MLFLOW_TIMEOUT's default)")
    with mlflow_server(folder, port):  # same store, same address: the rerun completes the logging
        smk(ws, "--cores", "32", "--rerun-incomplete", env={"MLFLOW_TRACKING_URI": uri})
        fig = assert_store_exact(ws, folder / "server.db")
    record("loopback server killed while logging, restarted, rerun", jobs=2 * N_JOBS,
           **{**fig, "note": f"{logged_before} runs before the kill; failed {waited:.1f} s after it"})


DEAD_SERVER_BOUND = 30  # s: GSSL_MLFLOW_TIMEOUT's default, what docs/reliability.md states


def test_a_server_killed_mid_logging_is_reported_within_one_calls_budget(tmp_path):
    """A logging process (log_pending, 40 run trees) against a loopback server that is killed once
    it holds 10 runs: the process fails naming the server within GSSL_MLFLOW_TIMEOUT (30 s) of the
    kill -- the call in flight, and no further call to mark runs FAILED (each waited out a budget
    of its own). The workflow-level case (two logging jobs under Snakemake) is the test above."""
    from gssl.tracking.client import init_store
    from gssl.tracking.records import run_tree, write_pending

    port, folder = free_port(), tmp_path / "server"
    uri = f"http://127.0.0.1:{port}"
    paths = []
    for i in range(40):
        spec = {"name": f"cell {i}", "tags": {"gssl.kind": "cell"}, "params": {"i": i}, "metrics": {"m": i}}
        paths.append(str(tmp_path / f"p{i}.mlflow.json.gz"))
        write_pending(paths[-1], [run_tree(spec, [{**spec, "name": f"split {j}"} for j in range(8)])])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_HTTP", "_GSSL_MLFLOW", "GSSL_MLFLOW"))}
    with mlflow_server(folder, port) as server:
        eid = init_store(uri, ["dead"], results_dir=tmp_path)["dead"]
        probe = f"from gssl.tracking.client import log_pending\nlog_pending({uri!r}, {eid!r}, {paths!r})\n"
        proc = subprocess.Popen([sys.executable, "-c", probe], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + 120
        while _count_runs(folder / "server.db") < 10 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
        os.killpg(server.pid, signal.SIGKILL)
        killed = time.time()
        out, _ = proc.communicate(timeout=300)
        waited = time.time() - killed
    assert proc.returncode != 0, "the logging finished before the server was killed: nothing was tested"
    assert f"the tracking server {uri} did not answer while logging the pending runs" in out, out[-3000:]
    assert waited < DEAD_SERVER_BOUND, f"reported {waited:.1f} s after the kill (bound {DEAD_SERVER_BOUND} s)"
    record("loopback server killed while one process logs", note=f"failed naming the server {waited:.1f} s "
           f"after the kill (bound {DEAD_SERVER_BOUND} s, GSSL_MLFLOW_TIMEOUT's default)")




def test_gssl_mlflow_timeout_bounds_a_silent_server(solved, tmp_path):
    """A server that accepts connections and never answers: the logging job fails naming it within
    GSSL_MLFLOW_TIMEOUT (here 12 s; default 30 s) plus the job's own start-up."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)  # accepts into the backlog, never reads
    uri = f"http://127.0.0.1:{silent.getsockname()[1]}"
    try:
        ws = copy_of(solved, tmp_path)  # left to run: the MLflow jobs only
        t0 = time.time()
        proc = smk(ws, "--cores", "1", check=False,
                   env={"MLFLOW_TRACKING_URI": uri, "GSSL_MLFLOW_TIMEOUT": "12"})
        elapsed = time.time() - t0
    finally:
        silent.close()
    logs = "".join(p.read_text() for p in (ws / "results" / "logs").rglob("*.log"))
    assert proc.returncode != 0 and uri in logs + proc.stdout + proc.stderr
    assert elapsed < 12 + 20, f"{elapsed:.0f} s"
    record("silent tracking server (accepts, never answers)", note=f"failed naming the URI after {elapsed:.0f} s "
           "(GSSL_MLFLOW_TIMEOUT=12)")
