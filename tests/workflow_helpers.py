"""Helpers of the workflow tests (test_workflow_e2e.py, test_faults_*.py): a copy of the workflow
with its own config, Snakemake run in it, and readers of what a run left (outputs, MLflow store,
the logging jobs' ledgers)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FIGURE_ROWS: list[dict] = []  # the fault suite's figures, printed at the end of the session (conftest.py)
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))

# the small config lives in .test/config/config.yaml (the snakemake-workflows convention:
# `snakemake --directory .test` runs it); the tests run it, and variants of it, in workspaces
TEST_CONFIG = REPO / ".test" / "config" / "config.yaml"
SMALL = yaml.safe_load(TEST_CONFIG.read_text())
_E2E = SMALL["experiments"]["e2e"]  # one dataset, preprocessing and graph
N_CELLS = len(_E2E["methods"]) * len(_E2E["protocols"])  # 2 x 2
N_SPLITS = len(_E2E["methods"]) * sum(SMALL["protocols"][p]["repeats"] for p in _E2E["protocols"])  # 32
N_JOBS = N_CELLS if SMALL["splits_per_job"] is None else N_SPLITS // SMALL["splits_per_job"]  # 4: a job per cell


def record(case: str, **figures) -> None:
    """One row of the fault suite's figures (test_faults_*.py)."""
    FIGURE_ROWS.append({"case": case, **figures})


def make_workspace(path: Path, config: dict) -> Path:
    """Copy the workflow and the gssl sources; the copy's embedded config is ``config``."""
    path.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "environment.yml", path)  # the rules' conda: directive names it
    for folder in ("workflow", "src"):
        shutil.copytree(REPO / folder, path / folder, ignore=_not_copied)
    (path / "config").mkdir(exist_ok=True)
    write_config(path, config)
    return path


def ran_workspace(tmp_path_factory, name: str, config: dict, *args, env: dict | None = None) -> Path:
    """A workspace of ``config`` (under a fresh temporary folder ``name``) after one workflow run
    (``snakemake --cores 2`` and ``args``): the module-scoped run the e2e files read."""
    ws = make_workspace(tmp_path_factory.mktemp(name) / "ws", config)
    smk(ws, "--cores", "2", *args, env=env)
    return ws


@contextlib.contextmanager
def edited(module: Path, text: str = "\n# an edit\n"):
    """``module`` with ``text`` appended inside the block (its code hash changes, its behaviour
    not), restored after it."""
    original = module.read_text()
    module.write_text(original + text)
    try:
        yield module
    finally:
        module.write_text(original)


def _not_copied(folder: str, names: list[str]) -> set[str]:
    """Bytecode and build metadata stay behind. numba's on-disk kernels (__pycache__/*.nbi, *.nbc)
    come along: copytree keeps the sources' mtimes, which their index checks, so the copy's jobs
    load the kernels instead of compiling them again in every job process (volume_mbo's: 12 s of
    CPU each); those of a module that is gone stay behind."""
    skip = set(shutil.ignore_patterns("*.pyc", "*.egg-info")(folder, names))
    if Path(folder).name == "__pycache__":
        sources = {p.stem for p in Path(folder).parent.glob("*.py")}
        skip |= {n for n in names if n.endswith((".nbi", ".nbc")) and n.split(".")[0] not in sources}
    return skip


def write_config(ws: Path, config: dict) -> None:
    (ws / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def smk(ws: Path, *args, env: dict | None = None, check: bool = True, timeout: float = 600):
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("MLFLOW_TRACKING_URI", "GSSL_DATA_MIRROR")}
    # the copied sources win over the installed package, so edits in the copy are what runs
    full_env.update({"PYTHONPATH": str(ws / "src"), "GSSL_OFFLINE": "1", "OMP_NUM_THREADS": "1",
                     **(env or {})})  # env wins (a plugin's folder on PYTHONPATH beside src)
    proc = subprocess.run([SNAKEMAKE, *args], cwd=ws, env=full_env, capture_output=True,
                          text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n"
                             f"{proc.stderr[-6000:]}")
    return proc


def planned_jobs(ws: Path, *args) -> list[dict]:
    """Jobs a dry run would execute: [{'rule', 'wildcards', 'reason'}] parsed from its output."""
    return parse_jobs(smk(ws, "-n", "--cores", "1", *args))


def parse_jobs(proc) -> list[dict]:
    """The jobs a snakemake run (or dry run) printed: [{'rule', 'wildcards', 'reason'}]."""
    jobs, job = [], None
    for line in (proc.stdout + proc.stderr).splitlines():
        m = re.match(r"^(?:local)?(?:rule|checkpoint) (\w+):$", line.strip())
        if m:
            job = {"rule": m.group(1), "wildcards": {}, "reason": ""}
            jobs.append(job)
        elif job is not None and line.strip().startswith("wildcards:"):
            pairs = line.strip()[len("wildcards:"):].split(",")
            job["wildcards"] = dict(p.strip().split("=", 1) for p in pairs if "=" in p)
        elif job is not None and line.strip().startswith("reason:"):
            job["reason"] = line.strip()
    return jobs


def rules_of(jobs) -> dict[str, int]:
    out: dict[str, int] = {}
    for j in jobs:
        out[j["rule"]] = out.get(j["rule"], 0) + 1
    return out


def mlflow_runs(ws: Path, kind: str | None = None, db: Path | None = None) -> list[tuple]:
    """(experiment name, run status, method tag, superseded tag, run id, parent run id) of every run
    in the store (the workspace's sqlite file, or a server's ``db``), or of the runs whose gssl.kind
    tag is ``kind`` (cell, block, split, summary)."""
    def tag(key):
        return f"(SELECT value FROM tags t WHERE t.run_uuid = r.run_uuid AND t.key = '{key}')"

    with sqlite3.connect(db or ws / "results" / "mlflow.db") as con:
        rows = con.execute(
            f"SELECT e.name, r.status, {tag('gssl.method')}, {tag('gssl.superseded')}, r.run_uuid, "
            f"{tag('mlflow.parentRunId')}, {tag('gssl.kind')} "
            "FROM runs r JOIN experiments e ON e.experiment_id = r.experiment_id").fetchall()
    return [r[:6] for r in rows if kind is None or r[6] == kind]


def run_files(ws: Path) -> list[Path]:
    return sorted((ws / "results" / "runs").rglob("*.json"))


def ledger(ws: Path) -> dict[str, list[dict]]:
    """Job output (path relative to the workspace) -> its MLflow run trees, from the logging jobs."""
    out = {}
    for p in (ws / "results" / "mlflow").glob("*.summary.json"):
        out.update(json.loads(p.read_text())["runs"])
    return out


def split_records(ws: Path) -> list[dict]:
    """Every split's record in the solve jobs' outputs, with its cell's wildcards and, where the
    experiment's logging job ran, its MLflow run id and its parent's."""
    out, runs = [], ledger(ws)
    for p in run_files(ws):
        block = json.loads(p.read_text())
        cell = {k: block[k] for k in ("dataset", "prep", "graph", "method", "protocol")}
        cell["experiment"] = p.relative_to(ws / "results" / "runs").parts[0]
        tree = runs.get(str(p.relative_to(ws)), [{"run": None, "children": [None] * len(block["splits"])}])[0]
        out += [{**cell, **rec, "method_params": block["method_params"], "mlflow_run_id": rid,
                 "parent": tree["run"]} for rec, rid in zip(block["splits"], tree["children"], strict=True)]
    return out


def store_figures(ws: Path, db: Path | None = None) -> dict:
    """What a run left in the store against the job outputs: split runs expected (one per split
    record), FINISHED and current, misfiled (in another experiment than the output's), lost (an
    output's run missing), twice (current split runs beyond one per record), and runs left RUNNING."""
    runs = mlflow_runs(ws, db=db)
    by_id = {r[4]: r for r in runs}
    records = split_records(ws)
    found = [by_id.get(rec["mlflow_run_id"]) for rec in records]
    current_splits = [r for r in mlflow_runs(ws, "split", db=db) if r[3] == "false"]
    return {"splits": len(records),
            "finished": sum(r is not None and r[1] == "FINISHED" and r[3] == "false" for r in found),
            "misfiled": sum(r is not None and r[0] != rec["experiment"] for r, rec in zip(found, records)),
            "lost": sum(r is None for r in found),
            "twice": len(current_splits) - len(records),
            "running": sum(r[1] == "RUNNING" for r in runs),
            "runs": len(runs)}
