"""Fault injection (issue #21): concurrency on fresh stores, a tracking server that dies, kills at
chosen moments of the cache writes, corrupt and foreign cache files, a read-only results folder, a
full disk, and bad config inputs. Each case is a test; each records its figures (FIGURE_ROWS),
which the session prints as one table at its end (conftest.py) and docs/reliability.md copies.

Kill moments are made exact by a test-only ``sitecustomize`` (put on the jobs' PYTHONPATH, never in
the package): it wraps ``gssl.store.h5io``'s writer and pauses the write of the file named by
``GSSL_TEST_PAUSE=<file name>:<moment>``, touching ``<file>.paused`` so the test knows when to kill.
The read-only folder and the small disk are bind and tmpfs mounts made in a user namespace
(``unshare``), so the suite needs no root and changes nothing outside its temporary folders.
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

import h5py
import pytest
import yaml
from workflow_helpers import (FIGURE_ROWS, N_JOBS, N_SPLITS, SMALL, SNAKEMAKE, make_workspace, parse_jobs,
                              planned_jobs, rules_of, smk, store_figures)

from gssl.errors import CacheError

pytestmark = [pytest.mark.e2e, pytest.mark.faults, pytest.mark.slow]

MLFLOW = str(Path(sys.executable).with_name("mlflow"))
TWO_EXPERIMENTS = json.loads(json.dumps(SMALL))
TWO_EXPERIMENTS["experiments"]["e2e_b"] = {**SMALL["experiments"]["e2e"], "description": "the twin"}


def record(case: str, **figures) -> None:
    FIGURE_ROWS.append({"case": case, **figures})


def assert_store_exact(ws: Path, db: Path | None = None) -> dict:
    fig = store_figures(ws, db)
    assert fig["finished"] == fig["splits"], fig
    assert fig["misfiled"] == fig["lost"] == fig["twice"] == fig["running"] == 0, fig
    return fig


# ----------------------------------------------------------------------------- concurrency
@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """Two experiments' solve jobs (64 splits in 16 jobs) run at --cores 32, not logged yet. Compute
    jobs never open the store, so the contention is between the two experiments' logging jobs (how
    many solve jobs fed them does not matter): each case below logs these outputs anew, into its
    own fresh store."""
    ws = make_workspace(tmp_path_factory.mktemp("solved") / "ws", TWO_EXPERIMENTS)
    proc = smk(ws, "--cores", "32", "--until", "solve")
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
    assert "solve" not in rules_of(parse_jobs(proc))
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
    logs = "".join(p.read_text() for p in (ws / "logs").rglob("*.log") if "mlflow" in p.name or "summary" in p.name)
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


# ----------------------------------------------------------------------------- kills mid-write
SITECUSTOMIZE = '''
import os, time
from pathlib import Path

_where = os.environ.get("GSSL_TEST_PAUSE", "")
if _where:
    import contextlib
    import gssl.store.h5io as _h5io

    _name, _moment = _where.rsplit(":", 1)
    _atomic, _write_array = _h5io.atomic_path, _h5io._write_array

    def _pause(path):
        Path(str(path) + ".paused").touch()
        time.sleep(120)

    @contextlib.contextmanager
    def atomic_path(path, suffix=""):
        with _atomic(path, suffix) as tmp:
            _h5io._current = (Path(path).name, tmp)
            yield tmp
            if Path(path).name == _name and _moment == "before_rename":
                _pause(path)
        if Path(path).name == _name and _moment == "after_rename":
            _pause(path)

    def _write_array_then_pause(group, name, value):
        _write_array(group, name, value)
        target, _ = getattr(_h5io, "_current", ("", None))
        if target == _name and _moment == "half_written":
            group.file.flush()
            _pause(Path(group.file.filename).with_name(target))

    _h5io.atomic_path, _h5io._write_array = atomic_path, _write_array_then_pause
'''

KILL_CONFIG = {
    "datasets": {"moons": {"source": "two_moons",
                           "params": {"n_samples": 3000, "n_features": 20, "noise": 0.1, "random_state": 0}}},
    "preprocessing": {"std": ["standardize"]},
    "graphs": {"knn8": {"kind": "knn", "k": 8, "weights": "heat", "laplacian": "normalized"}},
    "methods": {"poisson": {"solver": "poisson"}},
    "protocols": {"lpc2": {"kind": "labels_per_class", "n": 2, "repeats": 4}},
    "experiments": {"kill": {"description": "kills mid-write", "datasets": ["moons"], "preprocessing": ["std"],
                             "graphs": ["knn8"], "methods": ["poisson"], "protocols": ["lpc2"]}},
    "splits_per_job": 4,
}
CACHE_FILES = {"data": "results/data/moons.h5", "features": "results/features/moons/std.h5",
               "graph": "results/graphs/moons/std/knn8.h5", "splits": "results/splits/moons/lpc2.h5"}
TARGETS = {**CACHE_FILES, "solve": "results/runs/kill/moons/std/knn8/poisson/lpc2/splits0-3.json"}
KILLS = [(stage, moment) for stage in ("features", "graph")
         for moment in ("half_written", "before_rename", "after_rename")] + \
        [("solve", "before_rename"), ("solve", "after_rename")]


def _outputs(ws: Path) -> dict:
    """The cache files' checksums and the solve job's metrics (its timings aside)."""
    out = {}
    for kind, rel in CACHE_FILES.items():
        with h5py.File(ws / rel, "r") as fh:
            out[kind] = fh.attrs["content_sha256"]
    for p in sorted((ws / "results" / "runs").rglob("*.json")):
        out[p.name] = [{k: v for k, v in s["metrics"].items() if not k.endswith("_seconds")}
                       for s in json.loads(p.read_text())["splits"]]
    return out


def _kill_at(ws: Path, stage: str, moment: str) -> list[str]:
    """Run the workflow, kill -9 its whole process tree when the ``stage`` file's write reaches
    ``moment``; return the cache files that were readable right after the kill."""
    from gssl.store.h5io import read_h5

    target = ws / TARGETS[stage]
    target.unlink(missing_ok=True)  # so that this run writes it, whatever ran before
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "GSSL_DATA_MIRROR")}
    env.update(PYTHONPATH=f"{ws / 'faultpoints'}:{ws / 'src'}", GSSL_OFFLINE="1", OMP_NUM_THREADS="1",
               GSSL_TEST_PAUSE=f"{target.name}:{moment}")
    proc = subprocess.Popen([SNAKEMAKE, "--cores", "1", "--rerun-incomplete"], cwd=ws, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    marker = Path(str(target) + ".paused")
    deadline = time.time() + 120
    while not marker.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    assert marker.exists(), f"the {stage} write never reached {moment}"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    marker.unlink()
    accepted = []
    for kind, rel in CACHE_FILES.items():  # a reader takes only complete files, whatever is left
        try:
            read_h5(ws / rel, "dataset" if kind == "data" else kind)
            accepted.append(kind)
        except CacheError:
            pass
    if moment != "after_rename":  # a file killed before its rename is never in place
        assert stage not in accepted and not (stage == "solve" and target.exists()), \
            f"a {stage} file killed at {moment} was accepted"
    smk(ws, "--unlock")
    return accepted


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    ws = make_workspace(tmp_path_factory.mktemp("kill") / "ref", KILL_CONFIG)
    smk(ws, "--cores", "1")
    return _outputs(ws)


def test_kill_9_at_each_moment_of_the_cache_writes_then_rerun_gives_the_uninterrupted_outputs(
        tmp_path, uninterrupted):
    ws = make_workspace(tmp_path / "ws", KILL_CONFIG)
    (ws / "faultpoints").mkdir()
    (ws / "faultpoints" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    for stage, moment in KILLS:
        _kill_at(ws, stage, moment)
    assert planned_jobs(ws, "--rerun-incomplete"), "the interrupted work is not left to do"
    smk(ws, "--cores", "1", "--rerun-incomplete")
    assert planned_jobs(ws) == []
    assert not list((ws / "results").rglob(".*.tmp"))
    assert _outputs(ws) == uninterrupted
    record("kill -9 of the process tree at 8 moments of features, graph and solve writes, reruns",
           jobs=len(KILLS), note="outputs identical to an uninterrupted run; 0 half-written files accepted")


# ----------------------------------------------------------------------------- corrupt cache files
@pytest.fixture(scope="module")
def cell(tmp_path_factory):
    from conftest import build_moons_cell

    folder = build_moons_cell(tmp_path_factory.mktemp("cell"), {"lpc1": {"kind": "labels_per_class", "n": 1,
                                                                          "repeats": 3}}, n_samples=3000)
    return folder


READERS = {"data": ("data.h5", "gssl.datasets.store", "load_dataset"),
           "features": ("features.h5", "gssl.features", "load_features"),
           "graph": ("graph.h5", "gssl.graphs.cache", "load_graph"),
           "splits": ("lpc1.h5", "gssl.splits", "load_splits")}


def _flip_array_bytes(path: Path) -> None:
    """Flip 8 bytes in the middle of the largest array's stored bytes (compressed or not)."""
    with h5py.File(path, "r") as fh:
        dsets = []
        fh.visititems(lambda name, obj: dsets.append(obj) if isinstance(obj, h5py.Dataset) else None)
        d = max(dsets, key=lambda d: d.id.get_storage_size())
        if d.chunks:
            info = d.id.get_chunk_info(0)
            offset, size = info.byte_offset, info.size
        else:
            offset, size = d.id.get_offset(), d.id.get_storage_size()
    with open(path, "r+b") as fh:
        fh.seek(offset + size // 2)
        chunk = fh.read(8)
        fh.seek(offset + size // 2)
        fh.write(bytes(b ^ 0xFF for b in chunk))


def _set_attr(key, value):
    def edit(path):
        with h5py.File(path, "r+") as fh:
            if value is None:
                del fh.attrs[key]
            else:
                fh.attrs[key] = value(fh.attrs) if callable(value) else value
    return edit


def _lie_about_params(path):
    from gssl.store.hashing import params_hash

    with h5py.File(path, "r+") as fh:
        params = json.loads(fh.attrs["params"])
        params["claimed"] = 50
        fh.attrs["params"] = json.dumps(params)
        fh.attrs["params_hash"] = params_hash(params)


def _rewrite_with_other_params(src: Path, path: Path) -> None:
    """A complete, checksummed file of the same kind built with other params (another config's)."""
    from gssl.store.h5io import read_h5, write_h5

    with h5py.File(src, "r") as fh:
        kind = fh.attrs["gssl_kind"]
        extra = {k: v for k, v in fh.attrs.items() if k in ("n_samples", "n_features")}
    arrays, attrs = read_h5(src, kind)
    write_h5(path, kind, arrays, {**attrs["params"], "claimed": 50}, inputs=attrs["inputs"], extra_attrs=extra)


CORRUPTIONS = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "bit flips in an array": _flip_array_bytes,
    "params attribute edited": _set_attr("params", lambda a: a["params"].replace("}", ', "k": 50}', 1)),
    "params and params_hash rewritten": _lie_about_params,
    "checksum attribute removed": _set_attr("content_sha256", None),
    "complete flag removed": _set_attr("complete", None),
    "another kind's file": None,  # filled per kind below
    "a valid file of other params": None,
}


@pytest.mark.parametrize("kind", list(READERS))
def test_every_corruption_of_every_cache_kind_is_refused_naming_the_file(cell, tmp_path, kind):
    import importlib

    name, module, reader = READERS[kind]
    load = getattr(importlib.import_module(module), reader)
    expected = json.loads(h5py.File(cell / name, "r").attrs["params"])
    load(cell / name, expect_params=expected)  # the intact file reads
    accepted = []
    for fault, corrupt in CORRUPTIONS.items():
        path = tmp_path / fault.replace(" ", "_") / name
        path.parent.mkdir()
        if fault == "another kind's file":
            shutil.copy(cell / ("graph.h5" if kind != "graph" else "features.h5"), path)
        elif fault == "a valid file of other params":
            _rewrite_with_other_params(cell / name, path)
        else:
            shutil.copy(cell / name, path)
            corrupt(path)
        try:
            load(path, expect_params=expected, rule=kind)
            accepted.append(fault)
        except CacheError as exc:
            assert str(path) in str(exc) and ("rm " in str(exc) or "--forcerun" in str(exc)), str(exc)
    record(f"{len(CORRUPTIONS)} corruptions of a {kind} file", accepted_corrupt=len(accepted),
           note=", ".join(accepted) or "all refused, file and fix named")
    assert accepted == []


# ----------------------------------------------------------------------------- read-only folder, full disk
def _in_namespace(ws: Path, mounts: str, *smk_args) -> subprocess.CompletedProcess:
    """Snakemake in a user + mount namespace after ``mounts`` (shell); prints the results tree after."""
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "GSSL_DATA_MIRROR")}
    env.update(PYTHONPATH=str(ws / "src"), GSSL_OFFLINE="1", OMP_NUM_THREADS="1")
    script = (f"set -e; {mounts}; set +e; {SNAKEMAKE} {' '.join(smk_args)}; rc=$?; "
              "echo '== files'; find results -type f; exit $rc")
    return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                          cwd=ws, env=env, capture_output=True, text=True, timeout=600)


def _after_files(proc) -> list[str]:
    return proc.stdout.split("== files", 1)[1].split()


def test_a_read_only_results_folder_fails_clearly_and_accepts_nothing(tmp_path):
    ws = make_workspace(tmp_path / "ws", KILL_CONFIG)
    smk(ws, "--cores", "1", CACHE_FILES["features"])
    (ws / "results" / "graphs").mkdir()
    proc = _in_namespace(ws, "mount --bind results/graphs results/graphs; "
                             "mount -o remount,bind,ro results/graphs", "--cores", "1")
    text = proc.stdout + proc.stderr + "".join(p.read_text() for p in (ws / "logs").rglob("*.log"))
    assert proc.returncode != 0
    assert "Read-only file system" in text and "results/graphs" in text
    assert not [f for f in _after_files(proc) if f.startswith("results/graphs")]
    smk(ws, "--cores", "1", "--rerun-incomplete", "--until", "graph")  # writable again: it completes
    assert (ws / CACHE_FILES["graph"]).exists()
    record("read-only results/graphs", accepted_corrupt=0, note="job fails naming the folder; rerun completes")


def test_a_full_disk_fails_the_writer_clearly_and_leaves_no_file(tmp_path):
    ws = make_workspace(tmp_path / "ws", KILL_CONFIG)
    smk(ws, "--cores", "1", CACHE_FILES["features"])
    (ws / "results" / "graphs").mkdir()
    proc = _in_namespace(ws, "mount -t tmpfs -o size=64k tmpfs results/graphs", "--cores", "1")
    log = ws / "logs" / "graph" / "moons" / "std" / "knn8.log"
    text = proc.stdout + proc.stderr + (log.read_text() if log.exists() else "")
    assert proc.returncode != 0
    assert "No space left on device" in text and "knn8.h5" in text
    assert not [f for f in _after_files(proc) if f.startswith("results/graphs")]  # not even a .tmp
    smk(ws, "--cores", "1", "--rerun-incomplete", "--until", "graph")
    assert (ws / CACHE_FILES["graph"]).exists()
    record("full disk (64 KiB tmpfs) under results/graphs", accepted_corrupt=0,
           note="graph job fails with ENOSPC naming the file; no file left; rerun completes")


# ----------------------------------------------------------------------------- bad inputs
def _with(section_edit):
    cfg = json.loads(json.dumps(SMALL))
    section_edit(cfg)
    return cfg


BAD_INPUTS = {
    "a key given twice": ("graphs:\n  knn8:\n    kind: knn\n    k: 10\n    k: 30\n",
                          "key 'k' is given twice in one mapping"),
    # Snakemake parses these itself, before the workflow's own checks: its messages, not ours
    "YAML syntax error": ("graphs: {knn8: [\n", ("line 2", "not valid JSON or YAML")),
    "a list at the top level": ("- graphs\n- methods\n", ("must be a mapping", "keys at top level")),
    "an empty file": ("", ("is empty", "keys at top level")),
    "an unknown protocol key": (yaml.safe_dump(_with(lambda c: c["protocols"]["lpc1"].update(shots=2))),
                                "unknown keys ['shots']"),
    "label_fraction fraction 1.0": (yaml.safe_dump(_with(lambda c: c["protocols"].update(
        lpc1={"kind": "label_fraction", "fraction": 1.0, "repeats": 2}))), "protocols.lpc1.fraction"),
    "noise: .nan": ("datasets:\n  moons:\n    source: two_moons\n    params: {noise: .nan}\n",
                    "datasets.moons.params.noise' is NaN"),
    "results: naming a file": ("results: afile\n", "'afile' is a file"),
    "a 1e-06 read as text": ("methods:\n  rls:\n    solver: rls\n    params: {gamma_A: 1e-06}\n",
                             "write it with a dot"),
    # known before any job (issue #33): each with the message its job would give (test_config.py
    # compares them with the jobs' own)
    "k >= n": ("graphs:\n  knn8: {kind: knn, k: 160}\n",
               "k=160 neighbours requested but the data has only 160 points; the maximum allowed k is 159"),
    "a class name that does not exist": ("datasets:\n  moons: {source: two_moons, classes: ['0', 'two']}\n",
                                         "dataset 'two_moons' has no class named 'two'"),
    "class indices out of range": ("datasets:\n  moons: {source: two_moons, class_indices: [0, 2]}\n",
                                   "dataset 'two_moons': class 2 is neither a label index in 0..1"),
    "overlapping groups": ("datasets:\n  moons: {source: two_moons, groups: [['0', '1'], ['1']]}\n",
                           "select: groups must be non-empty and disjoint, got [[0, 1], [1]]"),
    "pca with more components than features": (
        "preprocessing:\n  std: [{pca: {n_components: 20}}]\n",
        "pca n_components=20 exceeds the maximum 10 for features of shape (160, 10)"),
    "random_projection with more components than features": (
        "preprocessing:\n  std: [{random_projection: {n_components: 50}}]\n",
        "random_projection n_components=50 exceeds the 10 features it projects"),
    "n_samples: 0": ("datasets:\n  moons: {source: two_moons, params: {n_samples: 0}}\n",
                     "two_moons: n_samples must be an integer >= 2, got 0"),
    "n_samples: many": ("datasets:\n  moons: {source: two_moons, params: {n_samples: many}}\n",
                        "two_moons: n_samples must be an integer >= 2, got 'many'"),
    "noise: -1": ("datasets:\n  moons: {source: two_moons, params: {noise: -1}}\n",
                  "two_moons: noise must be a number >= 0, got -1"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_each_bad_input_is_refused_before_any_job_by_snakemake_and_gssl_config_check(tmp_path, case):
    text, expected = BAD_INPUTS[case]
    by_check, by_snakemake = expected if isinstance(expected, tuple) else (expected, expected)
    ws = make_workspace(tmp_path / "ws", SMALL)
    (ws / "afile").write_text("not a folder")
    (ws / "bad.yaml").write_text(text)
    proc = smk(ws, "-n", "--configfile", "bad.yaml", check=False)
    check = subprocess.run([str(Path(sys.executable).with_name("gssl")), "config", "check",
                            "config/config.yaml", "bad.yaml"], cwd=ws, capture_output=True, text=True)
    for out, expected in ((proc, by_snakemake), (check, by_check)):
        assert out.returncode != 0, f"accepted: {case}"
        assert expected in out.stdout + out.stderr, (case, (out.stdout + out.stderr)[-2000:])
        assert "Traceback" not in out.stderr
    assert not (ws / "results").exists()
    record(f"bad input: {case}", inputs_silently_wrong=0, note="refused by both, before any job")


def test_gssl_mlflow_timeout_bounds_a_silent_server(solved, tmp_path):
    """A server that accepts connections and never answers: the logging job fails naming it within
    GSSL_MLFLOW_TIMEOUT (here 12 s; default 30 s) plus the job's own start-up."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)  # accepts into the backlog, never reads
    uri = f"http://127.0.0.1:{silent.getsockname()[1]}"
    try:
        ws = copy_of(solved, tmp_path)
        smk(ws, "--cores", "2", "--omit-from", "mlflow_experiment")  # left: the MLflow jobs only
        t0 = time.time()
        proc = smk(ws, "--cores", "1", check=False,
                   env={"MLFLOW_TRACKING_URI": uri, "GSSL_MLFLOW_TIMEOUT": "12"})
        elapsed = time.time() - t0
    finally:
        silent.close()
    logs = "".join(p.read_text() for p in (ws / "logs").rglob("*.log"))
    assert proc.returncode != 0 and uri in logs + proc.stdout + proc.stderr
    assert elapsed < 12 + 20, f"{elapsed:.0f} s"
    record("silent tracking server (accepts, never answers)", note=f"failed naming the URI after {elapsed:.0f} s "
           "(GSSL_MLFLOW_TIMEOUT=12)")
