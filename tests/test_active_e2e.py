"""An active-learning experiment through the workflow (issue 49), in a copy of the repository:
digits, Laplace learning with random sampling and VOpt, 2 draws of 1 label per class, 6 queries.
One run per (acquisition, draw) in MLflow with the accuracy after every query as its metric
history; the curves and the budget table; a changed acquisition parameter reruns that method's
jobs only."""

from __future__ import annotations

import sqlite3

import pytest

from workflow_helpers import mlflow_runs, planned_jobs, ran_workspace, write_config

pytestmark = pytest.mark.e2e

CONFIG = {
    "run": ["al"],
    "datasets": {"digits": {"source": "digits"}},
    "preprocessing": {"raw": []},
    "graphs": {"knn10": {"kind": "knn", "k": 10, "weights": "gaussian_kth", "symmetrize": "mean"}},
    "methods": {"laplace_random": {"solver": "laplace", "active": {"acquisition": "random"}},
                "laplace_vopt": {"solver": "laplace", "active": {"acquisition": "vopt",
                                                                  "params": {"n_eig": 20}}}},
    "protocols": {"al1": {"kind": "labels_per_class", "n": 1, "repeats": 2,
                          "active": {"budget": 6, "batch": 1, "report_at": [3, 6]}}},
    "experiments": {"al": {"description": "active learning, small", "datasets": ["digits"],
                           "preprocessing": ["raw"], "graphs": ["knn10"],
                           "methods": ["laplace_random", "laplace_vopt"], "protocols": ["al1"]}},
}


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    return ran_workspace(tmp_path_factory, "active", CONFIG)


def test_one_run_per_acquisition_and_draw_with_the_accuracy_history(done):
    runs = mlflow_runs(done, kind="split")
    assert sorted(r[2] for r in runs) == ["laplace_random"] * 2 + ["laplace_vopt"] * 2
    with sqlite3.connect(done / "results" / "mlflow.db") as con:
        steps = con.execute("SELECT run_uuid, COUNT(*), MAX(step) FROM metrics WHERE key = "
                            "'history.accuracy' GROUP BY run_uuid").fetchall()
    assert {r[4] for r in runs} == {s[0] for s in steps}
    assert all(n == 7 and last == 6 for _, n, last in steps)  # the start set, then 6 queries


def test_curves_and_budget_table(done):
    plot = done / "results" / "plots" / "al" / "active.png"
    assert plot.stat().st_size > 10_000
    table = (done / "results" / "tables" / "al.active_budgets.md").read_text()
    assert "| vopt(n_eig=20) |" in table and "| random |" in table and "3 queries" in table


def test_a_changed_acquisition_parameter_reruns_that_methods_jobs_only(done):
    config = {**CONFIG, "methods": {**CONFIG["methods"], "laplace_vopt": {
        "solver": "laplace", "active": {"acquisition": "vopt", "params": {"n_eig": 25}}}}}
    write_config(done, config)
    try:
        solves = [j for j in planned_jobs(done) if j["rule"] == "solve"]
        assert [j["wildcards"]["method"] for j in solves] == ["laplace_vopt"]
    finally:
        write_config(done, CONFIG)
