"""`make server` (python -m gssl.tracking.server): the small workflow logs to it, exactly.

PostgreSQL backend where its binaries are installed (.ci/run installs Debian's postgresql), else
the same server on sqlite (the test says which in its name's parameter and in the figures table).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from gssl.tracking.server import Postgres, ServerError, find_pg_bin, prepare_postgres, wait_healthy
from workflow_helpers import FIGURE_ROWS, SMALL, make_workspace, smk, split_records

pytestmark = [pytest.mark.server, pytest.mark.e2e, pytest.mark.slow]

BACKEND = "postgresql" if find_pg_bin() is not None else "sqlite"


def free_ports(n: int) -> list[int]:
    """n distinct free ports (all sockets held open until every port is chosen)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def stop(proc: subprocess.Popen) -> str:
    """SIGTERM the launcher (it stops MLflow, then PostgreSQL), SIGKILL if it hangs; its output."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        return proc.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.communicate()[0]


def start_server(folder: Path, port: int, pg_port: int, backend: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "gssl.tracking.server", "--dir", str(folder), "--port",
                             str(port), "--pg-port", str(pg_port), "--backend", backend],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:  # the launcher's own readiness check
        wait_healthy(f"http://127.0.0.1:{port}", proc, timeout=180)
    except ServerError as exc:
        raise AssertionError(f"gssl.tracking.server did not start ({exc}):\n{stop(proc)[-3000:]}") from None
    return proc


def port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_the_workflow_logs_exactly_to_the_server(tmp_path):
    """The small config (two experiments' worth of runs is the faults suite's job) through
    `make server`: every split run FINISHED in its experiment, artifacts proxied, runs in PostgreSQL."""
    port, pg_port = free_ports(2)
    folder = tmp_path / "server"
    if BACKEND == "postgresql" and os.geteuid() == 0:  # PostgreSQL's own account must pass through
        folder = Path(tempfile.mkdtemp(prefix="gssl-server-test-"))
    t0 = time.monotonic()
    server = None
    try:
        server = start_server(folder, port, pg_port, BACKEND)
        started = time.monotonic() - t0
        # the small config, one job per cell: the default config (or one job per split) costs
        # minutes more and tests nothing more here
        config = {**json.loads(json.dumps(SMALL)), "splits_per_job": 8}
        ws = make_workspace(tmp_path / "ws", config)
        uri = f"http://127.0.0.1:{port}"
        t0 = time.monotonic()
        smk(ws, "--cores", "2", env={"MLFLOW_TRACKING_URI": uri})
        wall = time.monotonic() - t0
        assert not (ws / "results" / "mlflow.db").exists()  # nothing went to the local default

        from mlflow import MlflowClient

        client = MlflowClient(uri)
        records = split_records(ws)
        assert records and all(r["mlflow_run_id"] for r in records)
        for rec in records:  # each split record's run, FINISHED, in its own experiment
            run = client.get_run(rec["mlflow_run_id"])
            assert run.info.status == "FINISHED"
            assert client.get_experiment(run.info.experiment_id).name == rec["experiment"]
        n_runs = 0
        for exp in config["experiments"]:
            e = client.get_experiment_by_name(exp)
            runs = client.search_runs([e.experiment_id], max_results=5000)
            n_runs += len(runs)
            splits = [r for r in runs if r.data.tags.get("gssl.kind") == "split"
                      and r.data.tags.get("gssl.superseded") == "false"]
            assert len(splits) == sum(r["experiment"] == exp for r in records)  # none twice
            summary = [r for r in runs if r.data.tags.get("gssl.kind") == "summary"]
            assert len(summary) == 1
            # artifacts go through the server (proxied): the summary run's table downloads
            names = [a.path for a in client.list_artifacts(summary[0].info.run_id)]
            assert names, "the summary run has no artifacts"
            local = client.download_artifacts(summary[0].info.run_id, names[0], str(tmp_path / exp))
            assert Path(local).exists()
        assert (folder / "artifacts").is_dir()
        if BACKEND == "postgresql":  # the runs are in PostgreSQL itself
            import psycopg

            pg = Postgres(folder=folder.resolve() / "postgres", port=pg_port, bin_dir=find_pg_bin())
            with psycopg.connect(host="127.0.0.1", port=pg_port, user="gssl", dbname="mlflow",
                                 passfile=str(pg.pgpass)) as con:
                assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == n_runs
            assert oct((pg.pgpass).stat().st_mode & 0o777) == "0o600"
        assert oct(folder.stat().st_mode & 0o777) in ("0o700", "0o711")  # the user's alone
    finally:
        out = stop(server) if server is not None else ""
        shutil.rmtree(folder, ignore_errors=True)
    assert server.returncode in (0, 143, -15), out
    assert not port_open(port) and not port_open(pg_port), "server or PostgreSQL left running"
    FIGURE_ROWS.append({"case": f"small workflow logged to `make server` ({BACKEND} backend)",
                        "splits": len(records), "finished": len(records), "misfiled": 0, "lost": 0,
                        "twice": 0, "runs": n_runs,
                        "note": f"server up in {started:.0f} s, workflow {wall:.0f} s"})


def test_a_missing_postgres_is_named_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setattr("gssl.tracking.server.find_pg_bin", lambda: None)
    with pytest.raises(ServerError, match="apt-get install postgresql.*--backend sqlite"):
        prepare_postgres(tmp_path, free_ports(1)[0])
