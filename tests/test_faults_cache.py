"""Fault injection (issue #21), the caches: kills at chosen moments of the cache writes, corrupt
and foreign cache files, a read-only results folder and a full disk. Each case records its figures
(FIGURE_ROWS, printed at the session's end by conftest.py, copied by docs/reliability.md).

Kill moments are made exact by a test-only ``sitecustomize`` (put on the jobs' PYTHONPATH, never in
the package): it wraps ``gssl.store.h5io``'s writer and pauses the write of the file named by
``GSSL_TEST_PAUSE=<file name>:<moment>``, touching ``<file>.paused`` so the test knows when to kill.
The read-only folder and the small disk are bind and tmpfs mounts made in a user namespace
(``unshare``), so the suite needs no root and changes nothing outside its temporary folders.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import h5py
import pytest
from workflow_helpers import SNAKEMAKE, make_workspace, planned_jobs, record, smk

from gssl.errors import CacheError

pytestmark = [pytest.mark.e2e, pytest.mark.faults, pytest.mark.slow]

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
# the graph's write stands for every HDF5 cache (data, features, splits and graph files go through
# the one writer, gssl.store.h5io); the solve job's JSON goes through its text writer
KILLS = [("graph", moment) for moment in ("half_written", "before_rename", "after_rename")] + \
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


def _kill_at(ws: Path, stage: str, moment: str, lock: bool) -> list[str]:
    """Run the workflow, kill -9 its whole process tree when the ``stage`` file's write reaches
    ``moment``; return the cache files that were readable right after the kill. ``lock``: the run
    locks the folder as a user's does, and the stale lock is lifted as a user would
    (``snakemake --unlock``); else it runs with --nolock (the kills before the last: one unlock,
    a Snakemake process, fewer per kill)."""
    from gssl.store.h5io import read_h5

    target = ws / TARGETS[stage]
    target.unlink(missing_ok=True)  # so that this run writes it, whatever ran before
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "GSSL_DATA_MIRROR")}
    env.update(PYTHONPATH=f"{ws / 'faultpoints'}:{ws / 'src'}", GSSL_OFFLINE="1", OMP_NUM_THREADS="1",
               GSSL_TEST_PAUSE=f"{target.name}:{moment}")
    args = [SNAKEMAKE, "--cores", "1", "--rerun-incomplete", *(() if lock else ("--nolock",)), TARGETS["solve"]]
    proc = subprocess.Popen(args, cwd=ws, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
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
    if lock:
        assert any((ws / ".snakemake" / "locks").glob("*")), "the killed run left no lock to lift"
        smk(ws, "--unlock")
    return accepted


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    ws = make_workspace(tmp_path_factory.mktemp("kill") / "ref", KILL_CONFIG)
    smk(ws, "--cores", "1", TARGETS["solve"])  # the caches and the solve job (no MLflow, tables or plots)
    return _outputs(ws)


def test_kill_9_at_each_moment_of_the_cache_writes_then_rerun_gives_the_uninterrupted_outputs(
        tmp_path, uninterrupted):
    ws = make_workspace(tmp_path / "ws", KILL_CONFIG)
    (ws / "faultpoints").mkdir()
    (ws / "faultpoints" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    for i, (stage, moment) in enumerate(KILLS):
        _kill_at(ws, stage, moment, lock=i == len(KILLS) - 1)
    assert planned_jobs(ws, "--rerun-incomplete", TARGETS["solve"]), "the interrupted work is not left to do"
    smk(ws, "--cores", "1", "--rerun-incomplete", TARGETS["solve"])
    assert planned_jobs(ws, TARGETS["solve"]) == []
    assert not list((ws / "results").rglob(".*.tmp"))
    assert _outputs(ws) == uninterrupted
    record(f"kill -9 of the process tree at {len(KILLS)} moments of the graph and solve writes, reruns",
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
    text = proc.stdout + proc.stderr + "".join(p.read_text() for p in (ws / "results" / "logs").rglob("*.log"))
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
    log = ws / "results" / "logs" / "graphs" / "moons" / "std" / "knn8.log"
    text = proc.stdout + proc.stderr + (log.read_text() if log.exists() else "")
    assert proc.returncode != 0
    assert "No space left on device" in text and "knn8.h5" in text
    assert not [f for f in _after_files(proc) if f.startswith("results/graphs")]  # not even a .tmp
    smk(ws, "--cores", "1", "--rerun-incomplete", "--until", "graph")
    assert (ws / CACHE_FILES["graph"]).exists()
    record("full disk (64 KiB tmpfs) under results/graphs", accepted_corrupt=0,
           note="graph job fails with ENOSPC naming the file; no file left; rerun completes")
