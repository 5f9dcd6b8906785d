"""End-to-end runs of their own: the default config as `make run` runs it, and the selection
stage (a changed grid, per-split selection). Beside test_workflow_e2e.py's shared run, in a file
of their own so that make test's two processes (pytest-xdist, one file per process) share them out.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from workflow_helpers import SMALL, make_workspace, mlflow_runs, parse_jobs, rules_of, smk, write_config

pytestmark = pytest.mark.e2e


def test_default_config_runs_as_make_run_does(tmp_path, default_config):
    """The embedded default (two experiments, so two store initialisers at once) on a new
    workspace, with the commands `make run` uses."""
    default = default_config
    assert len(default["experiments"]) >= 2
    ws = make_workspace(tmp_path / "ws", default)
    smk(ws, "--cores", "2", "--rerun-incomplete")
    smk(ws, "--cores", "1", "--report", "results/report.html")
    for exp in default["experiments"]:
        assert (ws / "results" / "tables" / f"{exp}.md").exists()
    runs = mlflow_runs(ws)
    assert {r[0] for r in runs} == set(default["experiments"])
    assert {r[1] for r in runs} == {"FINISHED"} and {r[3] for r in runs} == {"false"}
    assert len(mlflow_runs(ws, "summary")) == len(default["experiments"])
    with sqlite3.connect(ws / "results" / "mlflow.db") as db:
        kinds = db.execute("SELECT e.name, t.value FROM experiment_tags t JOIN experiments e "
                           "ON e.experiment_id = t.experiment_id "
                           "WHERE t.key = 'mlflow.experimentKind'").fetchall()
    assert sorted(kinds) == sorted((e, "custom_model_development") for e in default["experiments"])


SELECTION = json.loads(json.dumps(SMALL))
SELECTION.pop("splits_per_job")
SELECTION["methods"]["laprls"]["grid"] = {"gamma_I": [0.01, 1.0], "kernel.sigma": [1.0, 3.0]}
SELECTION["protocols"] = {
    "sel": {"kind": "labels_per_class", "n": 1, "repeats": 3, "holdout": {"fraction": 0.3, "part": "inside"}},
    "lpc1": {"kind": "labels_per_class", "n": 1, "repeats": 3, "holdout": {"fraction": 0.3, "part": "outside"}},
    "lpc3": {"kind": "labels_per_class", "n": 3, "repeats": 3, "holdout": {"fraction": 0.3, "part": "outside"}}}
SELECTION["experiments"]["e2e"]["selection"] = {"protocol": "sel"}
SELECTION["experiments"]["e2e"]["reference"] = {"citation": "A paper, Table 1",
                                                "values": {"laprls": {"lpc1": 10.0}}}


def test_a_changed_grid_reruns_selection_and_only_the_cells_whose_choice_changed(tmp_path):
    ws = make_workspace(tmp_path / "ws", SELECTION)
    smk(ws, "--cores", "2")
    choice_file = ws / "results" / "selected" / "e2e" / "moons" / "std" / "knn8" / "laprls.json"
    chosen = json.loads(choice_file.read_text())["values"]
    md = (ws / "results" / "tables" / "e2e.md").read_text()
    assert "paper 10.00 (Δ" in md and "A paper, Table 1" in md
    assert len(mlflow_runs(ws, "selection")) == 1 and len(mlflow_runs(ws, "selection_cell")) == 4

    def rerun(grid):
        cfg = json.loads(json.dumps(SELECTION))
        cfg["methods"]["laprls"]["grid"] = grid
        write_config(ws, cfg)
        return parse_jobs(smk(ws, "--cores", "2", "--until", "solve"))  # what is asked of the DAG: no tables, no MLflow

    # a new grid value that does not win: the new points and the selection run, no evaluation cell
    other = [v for v in (0.01, 1.0) if v != chosen["gamma_I"]][0]
    grid = {"gamma_I": [0.01, 1.0, 1e-4 if other == 0.01 else 1e4],
            "kernel.sigma": [1.0, 3.0]}
    jobs = rerun(grid)
    assert rules_of(jobs).get("solve_grid") == 1 and rules_of(jobs).get("select") == 1  # one job: the grid
    assert "solve" not in rules_of(jobs)
    assert json.loads(choice_file.read_text())["values"] == chosen
    # dropping the chosen value changes the choice: laprls's two cells rerun, rls's do not
    grid = {"gamma_I": [other], "kernel.sigma": [1.0, 3.0]}
    jobs = rerun(grid)
    solves = [j for j in jobs if j["rule"] == "solve"]
    assert {j["wildcards"]["method"] for j in solves} == {"laprls"} and len(solves) == 2
    assert json.loads(choice_file.read_text())["values"]["gamma_I"] == other


PER_SPLIT = json.loads(json.dumps(SELECTION))
PER_SPLIT["protocols"] = {"cv": {"kind": "melacci_cv", "folds": 2, "randomizations": 1, "labeled": 10,
                                 "validation": 16}}
PER_SPLIT["methods"]["pcg"] = {"solver": "lapsvm_pcg", "selected_as": "laprls",
                               "params": {"kernel": {"kind": "rbf"}, "stopping": "mixed"}}
PER_SPLIT["experiments"]["e2e"].update(
    methods=["rls", "laprls", "pcg"], protocols=["cv"],
    selection={"protocol": "cv", "per_split": True, "metric": "error_validation",
               "tie_break": "sq_hinge_validation"})
PER_SPLIT["experiments"]["e2e"]["reference"]["values"] = {"laprls": {"cv": 10.0}}


def test_per_split_selection_refits_each_splits_choice_and_shares_it(tmp_path):
    ws = make_workspace(tmp_path / "ws", PER_SPLIT)
    smk(ws, "--cores", "2")
    res = ws / "results"
    choice = json.loads((res / "selected/e2e/moons/std/knn8/laprls.json").read_text())["per_split"]
    grid, = (res / "selection/e2e/moons/std/knn8/laprls/cv").glob("*.json")
    by_point = {b["variant"]: {s["split"]: s["metrics"] for s in b["splits"]}
                for b in json.loads(grid.read_text())["blocks"]}
    assert len(by_point) == 4 and sorted(choice) == ["0", "1"]
    for method in ("laprls", "pcg"):
        run, = (res / f"runs/e2e/moons/std/knn8/{method}/cv").glob("*.json")
        for rec in json.loads(run.read_text())["splits"]:
            chosen = choice[str(rec["split"])]
            assert rec["chosen"] == chosen["values"]
            if method == "laprls":  # the evaluation fit is the grid's fit at the chosen point
                assert rec["metrics"]["error_test"] == by_point[chosen["variant"]][rec["split"]]["error_test"]
    # one MLflow run per grid point, no split runs under it
    points = mlflow_runs(ws, "selection_cell")
    assert len(points) == 4 and not any(r[5] in {p[4] for p in points} for r in mlflow_runs(ws))
