"""Fault injection (issue 51), the chain test: a workflow run over two generated datasets of the
same shape and config (``moons`` and ``moons2b``: two_moons, random_state 0 and 1), then any one
cache file of ``moons`` swapped for ``moons2b``'s (a valid, checksummed file: only its place is
wrong), and a split edited with its checksum recomputed. In each case the next ``snakemake`` run
fails naming the file, ``gssl verify`` names it, and nothing reaches MLflow (the store holds the
runs it held). One run (module-scoped) serves every case; each case works on a copy of it with a
copy of its store."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_helpers import SMALL, make_workspace, mlflow_runs, record, smk

pytestmark = [pytest.mark.e2e, pytest.mark.faults, pytest.mark.slow]

GSSL = str(Path(sys.executable).with_name("gssl"))
CONFIG = json.loads(json.dumps(SMALL))
CONFIG["datasets"]["moons2b"] = {**CONFIG["datasets"]["moons"],
                                 "params": {**CONFIG["datasets"]["moons"]["params"], "random_state": 1}}
CONFIG["protocols"] = {"lpc1": {"kind": "labels_per_class", "n": 1, "repeats": 2}}
CONFIG["methods"] = {"rls": SMALL["methods"]["rls"]}
CONFIG["experiments"]["e2e"].update(datasets=["moons", "moons2b"], methods=["rls"], protocols=["lpc1"])
RUN = "results/runs/e2e/{d}/std/knn8/rls/lpc1/splits0-1"
FILES = {"data": "results/data/{d}.h5", "features": "results/features/{d}/std.h5",
         "graph": "results/graphs/{d}/std/knn8.h5", "splits": "results/splits/{d}/lpc1.h5",
         "runs": RUN + ".json", "pending runs": RUN + ".mlflow.json.gz"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lineage")
    ws = make_workspace(folder / "ws", CONFIG)
    smk(ws, "--cores", "2", env={"MLFLOW_TRACKING_URI": f"sqlite:///{ws / 'results' / 'mlflow.db'}"})
    return ws


def copy_of(run: Path, tmp_path: Path) -> tuple[Path, dict]:
    shutil.copytree(run, tmp_path / "ws", symlinks=True)  # mtimes kept: nothing is recomputed
    ws = tmp_path / "ws"
    return ws, {"MLFLOW_TRACKING_URI": f"sqlite:///{ws / 'results' / 'mlflow.db'}"}


def verify(ws: Path) -> list[str]:
    out = subprocess.run([GSSL, "verify", "results"], cwd=ws, capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return [line for line in out.stdout.splitlines() if line.startswith("results/")]


def job_logs(ws: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in (ws / "results" / "logs").rglob("*.log"))


@pytest.mark.parametrize("swapped, named, refused_by", [
    ("features", "features", "graph"), ("graph", "graph", "solve"), ("splits", "splits", "solve"),
    ("data", "data", "features|splits"), ("runs", "runs", "aggregate"),
    ("pending runs", "pending runs", "mlflow_summary")])
def test_a_cache_file_of_another_dataset_is_refused_by_the_run_named_by_verify_and_never_logged(
        run, tmp_path, swapped, named, refused_by):
    ws, env = copy_of(run, tmp_path)
    assert verify(ws) == []
    before = sorted(map(str, mlflow_runs(ws)))
    ours, theirs = (ws / FILES[swapped].format(d=d) for d in ("moons", "moons2b"))
    shutil.copy(theirs, ours)  # newer than what was built from it: the next run reruns that
    if swapped == "runs":  # the job output with its runs to log, as a pair
        shutil.copy(*(ws / FILES["pending runs"].format(d=d) for d in ("moons2b", "moons")))
    target = FILES[named].format(d="moons")
    problems = verify(ws)
    assert problems and any(p.startswith(f"{target}: ") for p in problems), problems
    proc = smk(ws, "--cores", "1", env=env, check=False)
    text = proc.stdout + proc.stderr + job_logs(ws)
    assert proc.returncode != 0, text[-3000:]
    # the first job reading the swapped file refuses it (data: features or splits, whichever runs first)
    assert any(f"Error in rule {r}" in text for r in refused_by.split("|")) and target in text, text[-3000:]
    assert sorted(map(str, mlflow_runs(ws))) == before  # nothing (right or wrong) reached MLflow
    if swapped in ("graph", "pending runs"):  # verify's advice is a command that works
        advice = next(p for p in problems if p.startswith(f"{target}: ") and "--forcerun" in p)
        command = advice[advice.index("(snakemake ") + 1:].split(")")[0].replace("--cores N", "--cores 1")
        assert command.startswith("snakemake --cores 1 --forcerun results/"), advice  # the default config
        smk(ws, *command.split()[1:], env=env)
        assert verify(ws) == []
    record(f"lineage: moons2b's {swapped} file over moons's", accepted_corrupt=0, inputs_silently_wrong=0,
           note=f"the {refused_by} job refuses {named} by name; verify names it; MLflow unchanged")


def test_a_split_edited_with_its_checksum_recomputed_is_refused_by_the_run_and_named_by_verify(run, tmp_path):
    from gssl.splits import LABELED, UNLABELED, load_splits, save_splits
    from gssl.store.h5io import read_attrs

    ws, env = copy_of(run, tmp_path)
    before = sorted(map(str, mlflow_runs(ws)))
    path = ws / FILES["splits"].format(d="moons")
    roles, attrs = load_splits(path).copy(), read_attrs(path)
    lab, unl = roles == LABELED, roles == UNLABELED
    roles[lab], roles[unl] = UNLABELED, LABELED
    save_splits(path, roles, params=attrs["params"], inputs=attrs["inputs"])
    target = FILES["splits"].format(d="moons")
    problems = verify(ws)
    assert len(problems) == 1 and problems[0].startswith(f"{target}: its splits are not those protocol"), problems
    proc = smk(ws, "--cores", "1", env=env, check=False)
    text = proc.stdout + proc.stderr + job_logs(ws)
    assert proc.returncode != 0 and "Error in rule solve" in text and "its splits are not those" in text
    assert sorted(map(str, mlflow_runs(ws))) == before
    record("lineage: labeled and unlabeled swapped in a split, checksum recomputed", accepted_corrupt=0,
           inputs_silently_wrong=0, note="drawn again and compared: the solve job and verify refuse it by name")


def test_missing_cache_pending_and_job_output_files_are_named_with_a_command_that_rebuilds_them(run, tmp_path):
    """A deleted graph, pending-runs file and solve output: verify names each (the ledger says
    they should be there) with a command; a plain rerun would find nothing to do for the last
    one when its ledger is older, so the advice forces it; after it, verify passes."""
    ws, env = copy_of(run, tmp_path)
    gone = [FILES["graph"].format(d="moons2b"), FILES["pending runs"].format(d="moons"),
            FILES["runs"].format(d="moons2b")]
    for rel in gone:
        (ws / rel).unlink()
    problems = verify(ws)
    assert any(p.startswith(f"{gone[0]}: missing") for p in problems), problems
    assert any(p.startswith(f"{gone[1]}: missing") for p in problems), problems
    listed = [p for p in problems if f"lists {gone[2]}, which does not exist" in p]
    assert listed and f"--forcerun {gone[2]}" in listed[0], problems
    command = listed[0][listed[0].index("(snakemake ") + 1:].split(")")[0].replace("--cores N", "--cores 1")
    smk(ws, *command.split()[1:], env=env)
    assert verify(ws) == []
    record("verify: a deleted graph, pending-runs file and solve output", inputs_silently_wrong=0,
           note="each named as missing with a command; that command rebuilds them and verify passes")
