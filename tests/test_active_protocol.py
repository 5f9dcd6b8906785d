"""Active learning in the workflow: the protocol's and method's ``active:`` keys, what a config
check refuses before any job (a budget beyond the unlabeled pool, a covariance acquisition on a
method without Laplacian eigenpairs, a batch of 0, an acquisition without a budget), one split
of an active protocol run as a solve job runs it, and the curves' tables and paired tests."""
import copy
import json

import numpy as np
import pandas as pd
import pytest

from gssl.active.protocol import validate_protocol_active
from gssl.analysis.active_curves import budget_markdown, budget_table, curve_summary, load_curves
from gssl.errors import ConfigError
from gssl.pipeline.config import validate_config

from test_config import SCHEMA

AL = {"kind": "labels_per_class", "n": 1, "repeats": 3, "active": {"budget": 20, "batch": 1}}


@pytest.fixture()
def al_config(default_config):
    c = copy.deepcopy(default_config)
    c["run"] = ["al"]
    c["datasets"]["digits"] = {"source": "digits"}
    c["methods"].update({"laplace_random": {"solver": "laplace", "active": {"acquisition": "random"}},
                         "laplace_vopt": {"solver": "laplace", "active": {"acquisition": "vopt"}}})
    c["protocols"]["al1"] = copy.deepcopy(AL)
    c["experiments"]["al"] = {"description": "al", "datasets": ["digits"], "preprocessing": ["raw"],
                              "graphs": [next(iter(c["graphs"]))],
                              "methods": ["laplace_random", "laplace_vopt"], "protocols": ["al1"]}
    c["preprocessing"].setdefault("raw", [])
    return c


def test_an_active_experiment_is_valid(al_config):
    validate_config(al_config, SCHEMA)


@pytest.mark.parametrize("edit, message", [
    (lambda c: c["protocols"]["al1"]["active"].update(budget=1788),
     "active.budget 1788 exceeds the 1787 unlabeled points"),
    (lambda c: c["protocols"]["al1"]["active"].update(batch=0), r"batch"),
    (lambda c: c["methods"].update(svm_vopt={"solver": "svm", "active": {"acquisition": "vopt"}})
     or c["experiments"]["al"]["methods"].append("svm_vopt"),
     "acquisition 'vopt' needs the eigenpairs of the graph Laplacian"),
    (lambda c: c["experiments"]["al"]["protocols"].append(next(
        p for p, s in c["protocols"].items() if s["kind"] == "labels_per_class" and "active" not in s)),
     "query labels \\(active:\\) but protocols"),
    (lambda c: c["methods"].update(lap={"solver": "laplace"}) or c["experiments"]["al"]["methods"].append("lap"),
     "have no acquisition"),
    (lambda c: c["methods"]["laplace_vopt"]["active"].update(params={"n_eig": 0}), "'n_eig' parameter of VOpt"),
    (lambda c: c["methods"]["laplace_vopt"]["active"].update(acquisition="vop"), "unknown acquisition 'vop'"),
])
def test_bad_active_input_is_refused_before_any_job(al_config, edit, message):
    edit(al_config)
    with pytest.raises(ConfigError, match=message):
        validate_config(al_config, SCHEMA)


def test_a_budget_that_fits_the_pool_exactly_passes(al_config):
    al_config["protocols"]["al1"]["active"]["budget"] = 1787
    validate_config(al_config, SCHEMA)


def test_protocol_active_defaults_and_refusals():
    assert validate_protocol_active({"budget": 100}) == {
        "budget": 100, "batch": 1, "policy": "max", "prop_gamma": 1.0, "report_at": [100]}
    for bad, message in [({"batch": 2}, "budget is required"), ({"budget": 5, "batch": 0}, "batch"),
                         ({"budget": 5, "report_at": [6]}, "report_at"),
                         ({"budget": 5, "policy": "min"}, "policy"), ({"budget": 5, "x": 1}, "unknown keys")]:
        with pytest.raises(ConfigError, match=message):
            validate_protocol_active(bad)


# -- one split, as a solve job runs it ---------------------------------------------------------
@pytest.fixture(scope="module")
def cell(tmp_path_factory):
    """A digits cell on disk (features, 10-NN graph, an active protocol's splits)."""
    from sklearn.datasets import load_digits

    from gssl.features import save_features
    from gssl.graphs import build_graph
    from gssl.graphs.cache import save_graph
    from gssl.pipeline.stages import Cell
    from gssl.splits import make_splits, save_splits

    d = tmp_path_factory.mktemp("cell")
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    spec = {"kind": "labels_per_class", "n": 1, "repeats": 3,
            "active": {"budget": 12, "batch": 3, "report_at": [0, 6, 12]}}
    save_features(d / "f.h5", X, y, params={"steps": [], "seed": 0})
    graph_spec = {"kind": "knn", "k": 10, "weights": "gaussian_kth", "symmetrize": "mean"}
    save_graph(d / "g.h5", build_graph(X=X, spec=graph_spec), params=graph_spec)
    save_splits(d / "s.h5", make_splits(y, spec, "digits", "al"),
                params={"protocol": spec, "dataset": "digits", "protocol_id": "al"})
    return Cell(d / "f.h5", d / "g.h5", d / "s.h5")


def test_an_active_split_records_every_round(cell):
    from gssl.pipeline.stages import run_cell
    from gssl.splits import LABELED

    method = {"solver": "poisson", "active": {"acquisition": "model_change_vopt"}}
    r0, r1 = run_cell(cell, [0, 1], method, seed=0)
    assert [h["queries"] for h in r0["history"]] == [0, 3, 6, 9, 12]
    assert [h["n_labeled"] for h in r0["history"]] == [10, 13, 16, 19, 22]
    m = r0["metrics"]
    assert m["n_queries"] == 12 and m["n_labeled"] == 22
    assert m["error_unlabeled_at12"] == pytest.approx(m["error_unlabeled"])
    assert m["error_unlabeled_at0"] == pytest.approx(100 * (1 - r0["history"][0]["accuracy"]))
    queried = r0["curve"]["queried"]
    assert len(set(queried)) == 12 and not set(queried) & set(np.flatnonzero(cell.roles[0] == LABELED))
    assert r0["curve"]["queried"] != r1["curve"]["queried"]  # another draw, another start
    again = run_cell(cell, [0], method, seed=0)[0]
    assert again["curve"] == r0["curve"]  # reruns are exact


def test_an_acquisition_without_an_active_protocol_is_refused_in_the_job(cell):
    from gssl.pipeline.stages import fit_split

    saved, cell.protocol = cell.protocol, {k: v for k, v in cell.protocol.items() if k != "active"}
    try:
        with pytest.raises(ConfigError, match="give both or neither"):
            fit_split(cell, 0, {"solver": "laplace", "active": {"acquisition": "random"}})
    finally:
        cell.protocol = saved


# -- curves and tables -------------------------------------------------------------------------
def test_budget_table_pairs_acquisitions_with_random_on_the_same_draws(tmp_path):
    methods = {"lr": {"solver": "laplace", "active": {"acquisition": "random"}},
               "lv": {"solver": "laplace", "active": {"acquisition": "vopt"}}}
    rng = np.random.default_rng(0)
    paths = []
    for m, lift in (("lr", 0.0), ("lv", 0.05)):
        splits = [{"split": s, "metrics": {}, "curve": {
            "queries": [0, 5, 10], "accuracy": [0.8 + 0.01 * s, 0.85 + 0.01 * s + lift + 0.001 * rng.random(),
                                                0.9 + lift]}} for s in range(8)]
        block = {"dataset": "d", "prep": "raw", "graph": "g", "method": m, "protocol": "al", "splits": splits}
        paths.append(tmp_path / f"{m}.json")
        paths[-1].write_text(json.dumps(block))
    curves = load_curves(paths, methods)
    assert len(curves) == 2 * 8 * 3
    summary = curve_summary(curves)
    assert summary.query("acquisition == 'vopt' and queries == 10")["mean"].item() == pytest.approx(95.0)
    table = budget_table(curves, [0, 10])
    v = table.query("acquisition == 'vopt' and queries == 10").iloc[0]
    assert v["vs_random"] == pytest.approx(5.0) and v["n_paired"] == 8
    assert v["p_value"] == pytest.approx(2 / 2 ** 8)  # every draw better: the exact test's floor
    assert table.query("acquisition == 'vopt' and queries == 0")["p_value"].item() == 1.0  # same start
    assert "+5.00▲" in budget_markdown(table)


def test_the_page_names_what_beats_random_sampling():
    from gssl.analysis.active_page import verdicts

    table = pd.DataFrame([
        {"dataset": "d", "model": "laplace", "queries": 10, "acquisition": a, "vs_random": v, "p_holm": p}
        for a, v, p in [("random", np.nan, np.nan), ("vopt", 3.0, 0.01), ("uncertainty", -2.0, 0.02),
                        ("model_change", 5.0, 0.2)]])
    assert verdicts(table) == ["- **d · laplace**: 10 queries: better vopt; worse uncertainty"]
