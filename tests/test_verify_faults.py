"""``gssl verify`` against what the next ``snakemake`` run would refuse (issue #33): a valid cache
file of another config entry or kind at a path (a k=5 graph copied over the k=8 one, a features
file in a graph's place), and a pending-runs file (``*.mlflow.json.gz``) with bytes overwritten,
its mtime kept (Snakemake sees nothing to do). Verify names each; the logging job refuses the
corrupt pending file by name. One small workflow run (module-scoped) serves every case: each case
works on a copy of it, which logs to the run's own store (outside the copy), so the copies'
ledgers name the store they use."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_helpers import SMALL, make_workspace, parse_jobs, record, smk

pytestmark = [pytest.mark.faults]

GSSL = str(Path(sys.executable).with_name("gssl"))
CONFIG = json.loads(json.dumps(SMALL))
CONFIG["graphs"]["knn5"] = dict(SMALL["graphs"]["knn8"], k=5)
CONFIG["protocols"] = {"lpc1": {"kind": "labels_per_class", "n": 1, "repeats": 2}}
CONFIG["methods"] = {"rls": SMALL["methods"]["rls"]}
CONFIG["experiments"]["e2e"].update(graphs=["knn8", "knn5"], methods=["rls"], protocols=["lpc1"])
CONFIG.pop("splits_per_job", None)  # a job per cell: 2 solve jobs
GRAPH = "results/graphs/moons/std/knn8.h5"
OTHER_GRAPH = "results/graphs/moons/std/knn5.h5"
FEATURES = "results/features/moons/std.h5"
PENDING = "results/runs/e2e/moons/std/knn8/rls/lpc1/splits0-1.mlflow.json.gz"


def test_verify_checks_each_cache_file_against_what_its_ledger_expects(tmp_path, monkeypatch):
    """Without a workflow: cache files built by the stages, a ledger's ``caches`` from the config;
    files swapped within a kind (other params) and across kinds are named, a broken ``caches``
    entry is named, and the ledger's other checks are left to the workflow tests below."""
    from gssl.analysis.verify import expected_caches, verify_results
    from gssl.pipeline.stages import build_dataset, build_features, build_graph, build_splits

    cfg = {**json.loads(json.dumps(CONFIG)), "results": "results", "seed": 0}
    cfg["protocols"]["lpc3"] = {"kind": "labels_per_class", "n": 3, "repeats": 2}
    cfg["experiments"]["e2e"]["protocols"] = ["lpc1", "lpc3"]
    monkeypatch.chdir(tmp_path)
    r = Path("results")
    build_dataset("moons", cfg["datasets"]["moons"], None, r / "data" / "moons.h5")
    build_features(r / "data" / "moons.h5", cfg["preprocessing"]["std"], r / FEATURES.removeprefix("results/"))
    for g in ("knn8", "knn5"):
        build_graph(r / FEATURES.removeprefix("results/"), cfg["graphs"][g], r / "graphs" / "moons" / "std" / f"{g}.h5")
    for pid in ("lpc1", "lpc3"):
        build_splits(r / "data" / "moons.h5", "moons", pid, cfg["protocols"][pid], r / "splits" / "moons" / f"{pid}.h5")
    ledger = r / "mlflow" / "e2e.summary.json"
    ledger.parent.mkdir()
    ledger.write_text(json.dumps({"results": "results", "caches": expected_caches(cfg, "e2e")}))

    def cache_problems():
        return [p for p in verify_results(r)[0] if not p.startswith(str(ledger))]

    assert cache_problems() == []
    shutil.copy(OTHER_GRAPH, GRAPH)
    shutil.copy("results/splits/moons/lpc1.h5", "results/splits/moons/lpc3.h5")
    shutil.copy(FEATURES, OTHER_GRAPH)
    problems = cache_problems()
    assert [p.split(":")[0] for p in problems] == [OTHER_GRAPH, GRAPH, "results/splits/moons/lpc3.h5"], problems
    assert "holds a 'features' file, expected 'graph'" in problems[0]
    assert "built with params {'k': 5," in problems[1] and "'k': 8" in problems[1]
    assert "'protocol_id': 'lpc1'}, expected {" in problems[2] and "'protocol_id': 'lpc3'" in problems[2]
    ledger.write_text(json.dumps({"results": "results", "caches": {GRAPH: 5}}))
    assert any(p.startswith(f"{ledger}: its 'caches' are not readable") for p in verify_results(r)[0])
    assert any(p.startswith(f"{OTHER_GRAPH}: holds a 'features' file") for p in verify_results(r)[0])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("verify")
    env = {"MLFLOW_TRACKING_URI": f"sqlite:///{folder / 'mlflow.db'}"}
    ws = make_workspace(folder / "ws", CONFIG)
    smk(ws, "--cores", "2", env=env)
    return ws, env


def copy_of(run, tmp_path) -> Path:
    ws, _ = run
    shutil.copytree(ws, tmp_path / "ws", symlinks=True)  # mtimes kept: nothing is recomputed
    return tmp_path / "ws"


def verify(ws: Path) -> subprocess.CompletedProcess:
    return subprocess.run([GSSL, "verify", "results"], cwd=ws, capture_output=True, text=True)


@pytest.mark.e2e
@pytest.mark.slow
def test_verify_passes_the_run_and_its_ledger_records_caches_and_pending_files(run):
    ws, _ = run
    out = verify(ws)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 job outputs" in out.stdout and "2 pending-runs files" in out.stdout
    ledger = json.loads((ws / "results" / "mlflow" / "e2e.summary.json").read_text())
    assert ledger["caches"][GRAPH] == {"kind": "graph", "params": CONFIG["graphs"]["knn8"]}
    assert ledger["caches"][FEATURES]["params"] == {"steps": ["standardize"], "seed": 0}
    assert set(ledger["pending"]) == {PENDING, PENDING.replace("knn8", "knn5")}


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("case, source, expected", [
    ("a k=5 graph copied over the k=8 one", OTHER_GRAPH, "built with params"),
    ("a features file in a graph's place", FEATURES, "holds a 'features' file, expected 'graph'"),
])
def test_verify_refuses_a_valid_cache_file_of_another_config_or_kind_as_the_next_run_does(
        run, tmp_path, case, source, expected):
    ws = copy_of(run, tmp_path)
    shutil.copy(ws / source, ws / GRAPH)  # a complete, checksummed file: only its place is wrong
    out = verify(ws)
    problems = [line for line in out.stdout.splitlines() if line.startswith(f"results/graphs/")]
    assert out.returncode == 1 and len(problems) == 1, out.stdout
    assert problems[0].startswith(f"{GRAPH}: {expected}") and f"rm {GRAPH}" in problems[0], problems[0]
    if source == OTHER_GRAPH:
        assert "'k': 5" in problems[0] and "expected {" in problems[0] and "'k': 8" in problems[0]
    # the next snakemake run: the graph is newer than the solve outputs, the solve job refuses it
    proc = smk(ws, "--cores", "1", env=run[1], check=False)
    log = (ws / "results" / "logs" / "solve" / "e2e" / "moons" / "std" / "knn8" / "rls" / "lpc1" / "splits0-1.log").read_text()
    assert proc.returncode != 0 and problems[0].split(": delete it")[0] in log
    record(f"verify: {case}", note="verify names the file, what it holds and what is expected, as the "
                              "solve job of the next run does", accepted_corrupt=0)


def _overwrite_keeping_mtime(path: Path, offset: int, data: bytes = b"\x00" * 8) -> None:
    st = path.stat()
    raw = bytearray(path.read_bytes())
    raw[offset:offset + len(data)] = data
    path.write_bytes(bytes(raw))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.e2e
@pytest.mark.slow
def test_a_corrupt_pending_file_is_named_by_verify_and_refused_by_the_logging_job(run, tmp_path):
    ws = copy_of(run, tmp_path)
    pending = ws / PENDING
    _overwrite_keeping_mtime(pending, pending.stat().st_size // 2)
    assert parse_jobs(smk(ws, "-n", "--cores", "1", env=run[1])) == []  # Snakemake sees nothing to do
    out = verify(ws)
    assert out.returncode == 1 and f"{PENDING} is not a complete pending-runs file" in out.stdout, out.stdout
    proc = smk(ws, "--cores", "1", "--forcerun", "mlflow_summary", env=run[1], check=False)
    log = (ws / "results" / "logs" / "report" / "e2e.mlflow.log").read_text()
    assert proc.returncode != 0 and f"{PENDING} is not a complete pending-runs file" in log, log[-2000:]
    assert "mlflow_summary" in {j["rule"] for j in parse_jobs(proc)}
    record("pending-runs file with 8 bytes overwritten, mtime kept", note="verify names it; the logging job "
           "(--forcerun) refuses it by name and logs nothing", accepted_corrupt=0)


@pytest.mark.e2e
@pytest.mark.slow
def test_verify_names_a_pending_file_edited_into_another_valid_one(run, tmp_path):
    """Valid gzip and JSON, its own checksum rewritten to match: only the ledger's sha256 tells."""
    from gssl.tracking.records import trees_sha256

    ws = copy_of(run, tmp_path)
    pending = ws / PENDING
    payload = json.loads(gzip.decompress(pending.read_bytes()))
    payload["trees"][0]["children"][0]["metrics"]["error_unlabeled"] = 0.0
    payload["trees_sha256"] = trees_sha256(payload["trees"])
    pending.write_bytes(gzip.compress(json.dumps(payload).encode()))
    out = verify(ws)
    assert out.returncode == 1, out.stdout
    assert f"{PENDING}: its sha256" in out.stdout and "e2e.summary.json logged" in out.stdout, out.stdout
    record("pending-runs file edited into another valid one", note="verify names it (sha256 against the "
           "ledger's)", accepted_corrupt=0)
