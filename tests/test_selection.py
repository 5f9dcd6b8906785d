"""Model selection as a stage: grid expansion, the choice rule, the honest-protocol checks, and a
selection that provably never reads the label of a point the reported protocols score."""

import copy

import numpy as np
import pandas as pd
import pytest

from gssl.pipeline.config import validate_config
from gssl.analysis.tables import tuned_on_scored_points
from gssl.pipeline.plan import grid_values, grid_variants, selection_jobs
from gssl.errors import ConfigError
from conftest import build_moons_cell
from gssl.pipeline.stages import Cell, run_cell
from gssl.pipeline.selection import choice_record, choose, choose_per_split, grid_table, methods_for_splits
from gssl.splits import LABELED, UNUSED, VALIDATION, holdout_mask

LAPRLS = {"solver": "lap_rls", "params": {"kernel": {"kind": "rbf", "sigma": 3.0}, "gamma_A": 0.01},
          "grid": {"gamma_I": [0.01, 1.0], "kernel.sigma": [1.0, 3.0]}}
HOLD = {"fraction": 0.3}


def test_grid_points_in_order_with_stable_ids():
    points = grid_variants(LAPRLS)
    assert [(p["gamma_I"], p["kernel"]["sigma"]) for _, p in points] == [
        (0.01, 1.0), (0.01, 3.0), (1.0, 1.0), (1.0, 3.0)]
    assert all(p["gamma_A"] == 0.01 and p["kernel"]["kind"] == "rbf" for _, p in points)
    # a point's id depends on its params only: adding values elsewhere keeps it
    wider = copy.deepcopy(LAPRLS)
    wider["grid"]["gamma_I"].append(10.0)
    assert dict(grid_variants(wider)).keys() >= dict(points).keys()
    assert grid_values(LAPRLS, points[1][0]) == {"gamma_I": 0.01, "kernel.sigma": 3.0}
    assert LAPRLS["params"]["kernel"]["sigma"] == 3.0  # the entry itself is not modified


def test_choice_is_the_lowest_mean_and_the_first_of_ties():
    table = pd.DataFrame({"variant": ["a", "b", "c"], "error_unlabeled_mean": [5.0, 3.0, 3.0]})
    assert choose(table, "error_unlabeled")["variant"] == "b"


def test_a_tie_break_orders_equal_means_and_only_them():
    table = pd.DataFrame({"variant": ["a", "b", "c", "d"], "error_validation_mean": [2.0, 4.0, 4.0, 2.0],
                          "sq_hinge_validation_mean": [0.9, 0.1, 0.2, 0.5]})
    assert choose(table, "error_validation", "sq_hinge_validation")["variant"] == "d"
    table["sq_hinge_validation_mean"] = [0.5, 0.1, 0.2, 0.5]  # tied again: first in grid order
    assert choose(table, "error_validation", "sq_hinge_validation")["variant"] == "a"


def _blocks(scores: dict, hinge: dict | None = None) -> list[dict]:
    """Grid blocks from {variant: [metric per split]}."""
    return [{"variant": v,
             "splits": [{"split": s, "metrics": {"error_validation": e,
                                                 "sq_hinge_validation": (hinge or {}).get(v, [0.0] * 9)[s]}}
                        for s, e in enumerate(errors)]} for v, errors in scores.items()]


def test_a_missing_tie_break_never_wins_and_ragged_splits_are_named():
    ids = [v for v, _ in grid_variants(LAPRLS)]
    blocks = _blocks({ids[0]: [1, 1], ids[1]: [1, 1], ids[2]: [2, 2], ids[3]: [2, 2]})
    for b in blocks[:1]:  # the first point has no tie-break value (a solver without class scores)
        for r in b["splits"]:
            del r["metrics"]["sq_hinge_validation"]
    assert choose_per_split(blocks, LAPRLS, "error_validation", "sq_hinge_validation") == {0: ids[1], 1: ids[1]}
    table = grid_table(blocks, LAPRLS, "error_validation", "sq_hinge_validation")
    assert choose(table, "error_validation", "sq_hinge_validation")["variant"] == ids[1]
    blocks[2]["splits"].pop()
    with pytest.raises(ConfigError, match=f"grid point {ids[2]} ran on splits \\[0\\]"):
        choose_per_split(blocks, LAPRLS, "error_validation")


def test_per_split_choice_takes_each_splits_own_best():
    ids = [v for v, _ in grid_variants(LAPRLS)]
    blocks = _blocks({ids[0]: [5, 1, 2], ids[1]: [3, 1, 2], ids[2]: [3, 0, 4], ids[3]: [9, 9, 2]},
                     hinge={ids[0]: [0, 0, 0.3], ids[1]: [0.2, 0, 0.2], ids[2]: [0.1, 0, 0.5],
                            ids[3]: [0, 0, 0.1]})
    assert choose_per_split(blocks, LAPRLS, "error_validation") == {0: ids[1], 1: ids[2], 2: ids[0]}
    assert choose_per_split(blocks, LAPRLS, "error_validation", "sq_hinge_validation") == {
        0: ids[2], 1: ids[2], 2: ids[3]}
    record = choice_record("laprls", LAPRLS, per_split={0: ids[1], 1: ids[2]})
    assert record["per_split"]["1"] == {"variant": ids[2], "values": grid_values(LAPRLS, ids[2])}


def test_chosen_values_land_on_the_methods_own_params_grouped_by_split():
    ids = [v for v, _ in grid_variants(LAPRLS)]
    record = choice_record("laprls", LAPRLS, per_split={0: ids[3], 1: ids[0], 2: ids[3]})
    groups = methods_for_splits({"solver": "lap_rls", "params": LAPRLS["params"]}, record, [0, 1, 2])
    assert [(g[1], g[0]["params"]) for g in groups] == [
        ([0, 2], dict(grid_variants(LAPRLS))[ids[3]]), ([1], dict(grid_variants(LAPRLS))[ids[0]])]
    # a method selected_as another keeps its own other params (here PCG's stopping rule)
    pcg = {"solver": "lapsvm_pcg", "params": {"kernel": {"kind": "rbf", "sigma": 3.0}, "stopping": "mixed"}}
    (method, splits, values), = methods_for_splits(pcg, choice_record("laprls", LAPRLS, choose(
        pd.DataFrame({"variant": ids, "error_unlabeled_mean": [4, 3, 2, 1]}), "error_unlabeled")), [0, 1])
    assert method == {"solver": "lapsvm_pcg", "params": {"kernel": {"kind": "rbf", "sigma": 3.0},
                                                         "stopping": "mixed", "gamma_I": 1.0}}
    assert splits == [0, 1] and values == {"gamma_I": 1.0, "kernel.sigma": 3.0}
    with pytest.raises(ConfigError, match="has no split 5"):
        methods_for_splits(pcg, record, [5])
    # the method's other keys (a class-prior correction) reach the evaluation fits too
    (method, _, _), = methods_for_splits({**pcg, "class_priors": "uniform", "selected_as": "laprls"},
                                         record, [0])
    assert method["class_priors"] == "uniform" and "selected_as" not in method


def _config(**selection):
    return {
        "datasets": {"moons": {"source": "two_moons"}},
        "preprocessing": {"std": ["standardize"]},
        "graphs": {"knn8": {"kind": "knn", "k": 8}},
        "methods": {"laprls": copy.deepcopy(LAPRLS)},
        "protocols": {"sel": {"kind": "labels_per_class", "n": 1, "repeats": 2,
                              "holdout": {**HOLD, "part": "inside"}},
                      "lpc1": {"kind": "labels_per_class", "n": 1, "repeats": 2,
                               "holdout": {**HOLD, "part": "outside"}}},
        "experiments": {"e": {"datasets": ["moons"], "preprocessing": ["std"], "graphs": ["knn8"],
                              "methods": ["laprls"], "protocols": ["lpc1"],
                              "selection": {"protocol": "sel", **selection}}},
    }


def test_an_honest_selection_config_is_accepted():
    cfg = validate_config(_config())
    assert cfg["experiments"]["e"]["selection"] == {"protocol": "sel"}  # kept as given
    # and planned: the grid of laprls on the selection protocol's splits, not the reported ones
    assert [(j["method"], j["protocol"]) for j in selection_jobs(cfg, "e")] == [("laprls", "sel")]


def _per_split_config(**selection):
    cfg = _config()
    cfg["protocols"]["cv"] = {"kind": "melacci_cv", "folds": 2, "randomizations": 1, "labeled": 10,
                              "validation": 10}
    cfg["methods"]["pcg"] = {"solver": "lapsvm_pcg", "selected_as": "laprls",
                             "params": {"kernel": {"kind": "rbf"}, "stopping": "mixed"}}
    cfg["experiments"]["e"].update(protocols=["cv"], methods=["laprls", "pcg"],
                                   selection={"protocol": "cv", "per_split": True,
                                              "metric": "error_validation", **selection})
    return cfg


def test_a_per_split_selection_on_validation_points_is_accepted():
    cfg = validate_config(_per_split_config())
    assert cfg["experiments"]["e"]["selection"] == {"protocol": "cv", "per_split": True,
                                                    "metric": "error_validation"}
    # the grid of laprls runs on the reported cv splits (pcg is selected_as laprls: no grid of its own)
    assert {(j["method"], j["protocol"]) for j in selection_jobs(cfg, "e")} == {("laprls", "cv")}
    cfg = validate_config(_per_split_config(tie_break="sq_hinge_validation"))
    assert cfg["experiments"]["e"]["selection"]["tie_break"] == "sq_hinge_validation"


@pytest.mark.parametrize("edit,message", [
    (lambda c: c["experiments"]["e"]["selection"].update(metric="error_test"),
     "per-split selection.metric 'error_test' would read labels the split scores"),
    (lambda c: c["experiments"]["e"]["selection"].update(tie_break="macro_error_unlabeled"),
     "selection.tie_break 'macro_error_unlabeled'"),
    (lambda c: c["experiments"]["e"]["selection"].pop("metric"), "metric 'error_unlabeled'"),
    (lambda c: c["experiments"]["e"]["protocols"].append("lpc1"), "must be the experiment's only protocol"),
    (lambda c: c["protocols"]["cv"].pop("validation"), "needs validation points"),
    (lambda c: c["methods"]["pcg"].update(selected_as="nope"), "selected_as 'nope', which must be"),
    (lambda c: c["methods"]["pcg"].update(grid={"gamma_A": [1.0]}), "both a grid and selected_as"),
    (lambda c: c["methods"]["pcg"]["params"].pop("kernel"), "grid point g[0-9a-f]+ .* does not fit it"),
    (lambda c: c["methods"]["pcg"]["params"].update(gamma_I=5.0), "sets gamma_I itself"),
    (lambda c: c["experiments"]["e"].update(paper_statistic={"lowest": "error_test"}), "reads labels"),
])
def test_a_per_split_selection_that_could_read_scored_labels_is_refused(edit, message):
    cfg = _per_split_config()
    edit(cfg)
    with pytest.raises(ConfigError, match=message):
        validate_config(cfg)


@pytest.mark.parametrize("edit,message", [
    (lambda c: c["protocols"]["sel"].pop("holdout"), "must draw inside a holdout set"),
    (lambda c: c["protocols"]["lpc1"].pop("holdout"), "reported protocol 'lpc1' must leave"),
    (lambda c: c["protocols"]["lpc1"]["holdout"].update(fraction=0.2), "reported protocol 'lpc1'"),
    (lambda c: c["experiments"]["e"]["selection"].update(protocol="lpc1"), "also a reported"),
    (lambda c: c["experiments"]["e"].pop("selection"), "has a grid but the experiment names no"),
    (lambda c: c["experiments"]["e"]["selection"].update(protocol="nope"), "unknown protocols id"),
    (lambda c: c["methods"]["laprls"]["grid"].update(gama_I=[1.0]), "grid point g"),
])
def test_selection_that_could_read_scored_labels_is_refused(edit, message):
    cfg = _config()
    edit(cfg)
    with pytest.raises(ConfigError, match=message):
        validate_config(cfg)


def test_scored_points_true_reproduces_a_paper_that_tuned_on_its_test_points():
    cfg = _config(scored_points=True)
    cfg["experiments"]["e"]["selection"]["protocol"] = "lpc1"
    entry = validate_config(cfg)["experiments"]["e"]
    assert entry["selection"] == {"protocol": "lpc1", "scored_points": True}
    # the grid runs on the reported splits themselves, and the tables mark the method † for it
    assert [(j["method"], j["protocol"]) for j in selection_jobs(cfg, "e")] == [("laprls", "lpc1")]
    assert tuned_on_scored_points(entry) == ["laprls"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    protocols = {k: v for k, v in _config()["protocols"].items() if k in ("sel", "lpc1")}
    return build_moons_cell(tmp_path_factory.mktemp("sel"), protocols, n_samples=160,
                            weights="heat")


def _select(cell: Cell) -> pd.DataFrame:
    blocks = []
    for variant, params in grid_variants(LAPRLS):
        results = run_cell(cell, [0, 1], {"solver": "lap_rls", "params": params})
        blocks.append({"variant": variant,
                       "splits": [{"split": r["split"], "metrics": r["metrics"]} for r in results]})
    return grid_table(blocks, LAPRLS, "error_unlabeled")


def test_selection_never_reads_a_label_of_a_scored_point(files):
    cell = Cell(files / "features.h5", files / "graph.h5", files / "sel.h5")
    clean = _select(cell)
    reported = Cell(files / "features.h5", files / "graph.h5", files / "lpc1.h5")
    scored = (reported.roles != UNUSED).any(axis=0)  # labeled or scored in some reported split
    assert not (scored & holdout_mask(cell.y, HOLD["fraction"], "moons")).any()
    # poison every label the reported protocol uses: the selection's numbers do not move
    rng = np.random.default_rng(0)
    cell.y = cell.y.copy()
    cell.y[scored] = rng.integers(0, 2, scored.sum())
    poisoned = _select(cell)
    cols = ["variant", "error_unlabeled_mean", "n_splits"]
    pd.testing.assert_frame_equal(clean[cols], poisoned[cols])
    assert choose(clean, "error_unlabeled")["variant"] == choose(poisoned, "error_unlabeled")["variant"]
    record = choice_record("laprls", LAPRLS, choose(clean, "error_unlabeled"))
    assert record["params"] == dict(grid_variants(LAPRLS))[record["variant"]]


@pytest.fixture(scope="module")
def cv_files(tmp_path_factory):
    cv = {"kind": "melacci_cv", "folds": 2, "randomizations": 2, "labeled": 10, "validation": 16}
    return build_moons_cell(tmp_path_factory.mktemp("cv"), {"cv": cv}, n_samples=160, weights="heat")


def _select_per_split(cell: Cell) -> dict:
    blocks = []
    for variant, params in grid_variants(LAPRLS):
        results = run_cell(cell, range(4), {"solver": "lap_rls", "params": params})
        blocks.append({"variant": variant,
                       "splits": [{"split": r["split"], "metrics": r["metrics"]} for r in results]})
    return choose_per_split(blocks, LAPRLS, "error_validation", "sq_hinge_validation")


def test_per_split_selection_never_reads_a_label_its_split_scores(cv_files):
    cell = Cell(cv_files / "features.h5", cv_files / "graph.h5", cv_files / "cv.h5")
    clean = _select_per_split(cell)
    # split by split, poison every label the split does not use (its scored U and T points, and
    # the unused ones): that split's choice does not move
    rng = np.random.default_rng(1)
    y = cell.y.copy()
    for s in range(4):
        seen = np.isin(cell.roles[s], (LABELED, VALIDATION))
        cell.y = np.where(seen, y, rng.integers(0, 2, y.size))
        assert _select_per_split(cell)[s] == clean[s]
    cell.y = y


@pytest.mark.parametrize("values,message", [
    ({"nope": {"lpc1": 2.0}}, "reference names method 'nope'"),
    ({"laprls": {"lpc9": 2.0}}, "names protocol \\(column\\) 'lpc9'"),
])
def test_reference_errors_name_the_method_or_column(values, message):
    cfg = _config()
    cfg["experiments"]["e"]["reference"] = {"citation": "Paper (2012), Table 1", "values": values}
    with pytest.raises(ConfigError, match=message):
        validate_config(cfg)


def test_reference_and_tuned_rows_in_the_tables():
    from gssl.analysis.report import markdown
    from gssl.analysis.tables import aggregate, with_reference

    runs = pd.DataFrame({"dataset": "moons", "prep": "std", "graph": "knn8", "method": "laprls",
                         "protocol": "lpc1", "split": [0, 1, 2], "error_unlabeled": [2.0, 4.0, 6.0]})
    entry = {"methods": ["laprls"], "protocols": ["lpc1"], "tuned_on_scored_points": ["laprls"],
             "reference": {"citation": "Paper (2012), Table 1", "values": {"laprls": {"lpc1": 3.5}}}}
    table = with_reference(aggregate(runs), entry)
    assert table["reference"].tolist() == [3.5] and table["reference_diff"].tolist() == [0.5]
    md = markdown(table, "e", entry)
    assert "| laprls † | **4.00 ± 1.63 (n=3, SE 1.15) · paper 3.50 (Δ +0.50)** |" in md  # bold: the best
    assert "Paper (2012), Table 1" in md and "tuned on the scored points" in md


def test_choice_takes_the_highest_purity_and_never_a_nan():
    table = pd.DataFrame({"variant": ["a", "b", "c"], "purity_mean": [80.0, np.nan, 91.0]})
    assert choose(table, "purity")["variant"] == "c"
    errors = pd.DataFrame({"variant": ["a", "b"], "error_unlabeled_mean": [np.nan, 7.0]})
    assert choose(errors, "error_unlabeled")["variant"] == "b"
    with pytest.raises(ConfigError, match="NaN at every grid point"):
        choose(errors.assign(error_unlabeled_mean=np.nan), "error_unlabeled")


def test_grid_plot_handles_null_values(tmp_path):
    from gssl.analysis.plots import plot_grid

    table = pd.DataFrame({"variant": ["a", "b", "c", "d"], "laplacian": [None, None, "lle", "lle"],
                          "k": [5, 10, 5, 10], "error_unlabeled_mean": [3.0, 2.0, 4.0, 1.0],
                          "error_unlabeled_sem": [0.1, 0.2, 0.3, 0.4]})
    plot_grid(table, ["laplacian", "k"], "error_unlabeled", tmp_path / "g.png", "t")
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("grid,message", [
    ({"gamma_I": [1.0, 1.0]}, "the same point twice"),
    ({"kernel": [{"kind": "rbf", "sigma": 1.0}], "kernel.sigma": [1.0, 2.0]}, "contains another grid key"),
])
def test_ambiguous_grids_are_refused(grid, message):
    cfg = _config()
    cfg["methods"]["laprls"]["grid"] = grid
    with pytest.raises(ConfigError, match=message):
        validate_config(cfg)


def test_grid_points_do_not_share_the_configs_objects():
    entry = {"solver": "lap_rls", "params": {}, "grid": {"kernel": [{"kind": "rbf", "sigma": 1.0}]}}
    (_, params), = grid_variants(entry)
    params["kernel"]["sigma"] = 9.0
    assert entry["grid"]["kernel"][0]["sigma"] == 1.0


def test_scored_points_marks_the_gridded_methods_only():
    from gssl.analysis.tables import tuned_on_scored_points

    entry = {"methods": ["a", "b"], "selection": {"protocol": "p", "scored_points": True}}
    assert tuned_on_scored_points({**entry, "gridded_methods": ["b"]}) == ["b"]
    assert tuned_on_scored_points({**entry, "tuned_on_scored_points": ["a"],
                                   "gridded_methods": ["b"]}) == ["a", "b"]


def test_a_per_split_choice_scores_each_splits_own_choice_and_counts_its_wins():
    """The select job's per-split summary: each split's own best, the mean of their scores, and the
    table's count of the splits each point won."""
    from gssl.pipeline.select_job import per_split_choice

    ids = [v for v, _ in grid_variants(LAPRLS)]
    blocks = _blocks({ids[0]: [5, 1, 2], ids[1]: [3, 1, 2], ids[2]: [3, 0, 4], ids[3]: [9, 9, 2]})
    table = grid_table(blocks, LAPRLS, "error_validation")
    wc = {"method": "laprls"}
    choice, summary, score, text = per_split_choice(blocks, wc, LAPRLS, "error_validation", None, table)
    assert {int(s): c["variant"] for s, c in choice["per_split"].items()} == {0: ids[1], 1: ids[2], 2: ids[0]}
    assert summary == {"per_split": {s: c["values"] for s, c in choice["per_split"].items()}}
    assert score == pytest.approx((3 + 0 + 2) / 3)
    assert list(table["chosen_in_splits"]) == [1, 1, 1, 0]
    assert text.startswith("per split, most often ") and text.endswith("(1 of 3 splits)")
