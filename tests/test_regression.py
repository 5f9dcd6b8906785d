"""The before-merge regression check (issue #18): a small experiment's per-split numbers against
the committed reference ``tests/reference/e2e_small.csv``, through ``gssl compare``. It fails, with
the table of what moved, when a number moves beyond its split noise; a perturbed solver proves it.

After an intended change of numbers, regenerate the reference with
``GSSL_UPDATE_REFERENCE=1 .venv/bin/python -m pytest tests/test_regression.py`` and commit it with the
reason in the message.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_helpers import SMALL, make_workspace, parse_jobs, rules_of, smk

from gssl.analysis.compare import load_split_results, save_split_results
from gssl.solvers.registry import solver_modules

pytestmark = pytest.mark.e2e

REFERENCE = Path(__file__).with_name("reference") / "e2e_small.csv"
GSSL = str(Path(sys.executable).with_name("gssl"))
CONFIG = {**json.loads(json.dumps(SMALL)), "splits_per_job": 8}  # 4 jobs of 8 splits


def gssl_compare(*args):
    return subprocess.run([GSSL, "compare", *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    ws = make_workspace(tmp_path_factory.mktemp("regression") / "ws", CONFIG)
    smk(ws, "--cores", "2", "--until", "solve")
    if os.environ.get("GSSL_UPDATE_REFERENCE") == "1":
        save_split_results(load_split_results(ws / "results", "e2e"), REFERENCE)
    return ws


def test_the_small_experiment_matches_the_committed_reference(small):
    proc = gssl_compare(REFERENCE, small / "results", "--experiment", "e2e", "--strict")
    assert proc.returncode == 0, f"numbers moved beyond their split noise:\n{proc.stdout}{proc.stderr}"
    assert "0 changed" in proc.stdout and "only in a: 0, only in b: 0" in proc.stdout
    assert len(load_split_results(REFERENCE)) == 32  # 4 cells x 8 splits


def test_a_perturbed_solver_fails_the_check_with_the_table_of_what_moved(small, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(small, ws, symlinks=True)  # mtimes kept: only the edited solver's jobs rerun
    module = ws / "src" / "gssl" / "solvers" / "rls.py"
    text = module.read_text()
    line = 'self.dual_coef_ = solve_dense(A, Y, hint="increase gamma_A")'  # Laplacian RLS's solve
    assert text.count(line) == 1
    module.write_text(text.replace(line, line.replace("(A, Y,", "(A, -Y,")))  # a sign bug
    jobs = parse_jobs(smk(ws, "--cores", "2", "--until", "solve"))
    edited = {m for m, e in CONFIG["methods"].items() if "gssl.solvers.rls" in solver_modules(e["solver"])}
    assert "laprls" in edited and set(rules_of(jobs)) == {"solve"}, rules_of(jobs)
    assert {j["wildcards"]["method"] for j in jobs} == edited  # the jobs of the edited module's solvers
    proc = gssl_compare(REFERENCE, ws / "results", "--experiment", "e2e")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    changed = [line.split() for line in proc.stdout.splitlines() if line.rstrip().endswith(" yes")]
    assert changed and {row[3] for row in changed} == {"laprls"}, proc.stdout  # rls untouched
    print(proc.stdout)
