"""gssl.pipeline.stages: a cell's splits fitted in one process give what one process per split gives."""

import numpy as np
import pytest

from gssl.optim.kernels import kernel_matrix, shared_kernels
from conftest import build_moons_cell
from gssl.errors import ConfigError
from gssl.metrics import error_rate
from gssl.pipeline.stages import Cell, fit_split, run_cell, run_solver
from gssl.solvers.registry import make_solver

RBF = {"kind": "rbf", "sigma": 2.0}
METHODS = {
    "rls": {"solver": "rls", "params": {"kernel": RBF, "gamma_A": 0.01}},
    "svm": {"solver": "svm", "params": {"kernel": RBF, "C": 10.0}},
    "lap_rls": {"solver": "lap_rls", "params": {"kernel": RBF, "gamma_A": 0.01, "gamma_I": 0.1}},
    "lapsvm_dual": {"solver": "lapsvm_dual", "params": {"kernel": RBF, "gamma_A": 0.01, "gamma_I": 0.1}},
    "lapsvm_pcg": {"solver": "lapsvm_pcg", "params": {"kernel": RBF, "gamma_A": 0.01, "gamma_I": 0.1}},
    "lapsvm_newton": {"solver": "lapsvm_newton", "params": {"kernel": RBF, "gamma_A": 0.01, "gamma_I": 0.1}},
    "laprlsc": {"solver": "laprlsc", "params": {"kernel": RBF, "gamma_A": 0.01, "gamma_I": 0.1}},
    "tv_rls": {"solver": "tv_rls", "params": {"kernel": RBF}},
    "tv_svm": {"solver": "tv_svm", "params": {"kernel": RBF}},
    "cheeger_svm": {"solver": "cheeger_svm", "params": {"kernel": RBF}},
    "lap_rls_simplex": {"solver": "lap_rls_simplex", "params": {"kernel": RBF}},
    "lap_svm_mc": {"solver": "lap_svm_mc", "params": {"kernel": RBF}},
    "label_spreading": {"solver": "label_spreading", "params": {}},
    "laplace": {"solver": "laplace", "params": {"reweighting": "wnll"}},
    "laplace_shared": {"solver": "laplace", "params": {}},  # on the cell's shared operators
    "poisson": {"solver": "poisson", "params": {}},
    "poisson_mbo": {"solver": "poisson_mbo", "params": {"n_outer": 3}},
    "plaplace": {"solver": "plaplace", "params": {"p": 5}},
    "lap_rls_priors": {"solver": "lap_rls", "params": {"kernel": RBF, "gamma_A": 0.01, "gamma_I": 0.1},
                       "class_priors": [0.8, 0.2]},
}


@pytest.fixture(scope="module")
def cell_files(tmp_path_factory):
    folder = build_moons_cell(tmp_path_factory.mktemp("cell"),
                              {"splits": {"kind": "labels_per_class", "n": 2, "repeats": 4}})
    return folder / "features.h5", folder / "graph.h5", folder / "splits.h5"


@pytest.mark.parametrize("name", sorted(METHODS))
def test_batched_splits_equal_one_process_per_split(cell_files, name):
    method = METHODS[name]
    batched = run_cell(Cell(*cell_files), [0, 1, 2, 3], method, seed=3)
    for result in batched:
        alone = run_solver(*cell_files, result["split"], method, seed=3)
        assert result["predictions"] == alone["predictions"]
        timing = {"fit_seconds", "load_seconds"}
        assert ({k: v for k, v in result["metrics"].items() if k not in timing}
                == {k: v for k, v in alone["metrics"].items() if k not in timing})
        assert result["history"] == alone["history"]


@pytest.mark.parametrize("name", ["laplace_shared", "poisson"])
def test_a_cell_builds_its_graph_operators_once(cell_files, name, monkeypatch):
    """The normalized W (and its renumbering) and the components are built once for the splits
    of a cell, not once per split."""
    import gssl.optim.graph_learning as kernels

    builds = []
    build = kernels._normalized_graph
    monkeypatch.setattr(kernels, "_normalized_graph", lambda *a: builds.append(1) or build(*a))
    run_cell(Cell(*cell_files), [0, 1, 2, 3], METHODS[name])
    assert len(builds) == 1
    run_solver(*cell_files, 0, METHODS[name])  # a lone split builds its own
    assert len(builds) == 2


def test_method_level_class_priors_correct_any_classifier(cell_files):
    """class_priors on a method without the option: labels from the scores, projected onto the
    given class fractions (here far from the data's 50/50, so the labels must move)."""
    plain = fit_split(Cell(*cell_files), 0, METHODS["lap_rls"])
    skewed = fit_split(Cell(*cell_files), 0, METHODS["lap_rls_priors"])
    frac = np.bincount(skewed["predictions"], minlength=2) / len(skewed["predictions"])
    assert abs(frac[0] - 0.8) <= 0.01 and skewed["metrics"]["solver_volume_misfit"] <= 1e-3
    assert abs(np.mean(plain["predictions"]) - 0.5) < 0.1   # the uncorrected labels are balanced


def test_a_cell_refuses_a_file_built_for_other_params(cell_files):
    """A foreign graph copied over the expected one (e.g. k = 5 where the config says k = 10) is
    refused by the solve job, which passes the params each input must have been built with."""
    from gssl.errors import CacheError
    from gssl.store.h5io import read_attrs

    built = read_attrs(cell_files[1])["params"]
    Cell(*cell_files, expect={"graph": built})  # the right params: accepted
    with pytest.raises(CacheError, match=r"graph.h5: built with params .*expected .*'k': 50"):
        Cell(*cell_files, expect={"graph": {**built, "k": 50}})


def test_a_split_out_of_range_names_the_file(cell_files):
    with pytest.raises(Exception, match="split 9 out of range.*splits.h5 holds 4"):
        fit_split(Cell(*cell_files), 9, METHODS["rls"])


def test_shared_kernels_computes_each_kernel_once_and_read_only():
    X = np.random.default_rng(0).normal(size=(20, 3))
    other = X.copy()
    with shared_kernels(X):
        K = kernel_matrix(X, None, RBF)
        assert kernel_matrix(X, None, RBF) is K and not K.flags.writeable
        assert kernel_matrix(X, None, {"kind": "rbf", "sigma": 1.0}) is not K
        assert kernel_matrix(other, None, RBF) is not K  # another array: computed, not shared
        assert kernel_matrix(X, X[:5], RBF).flags.writeable  # cross kernels are never shared
    assert kernel_matrix(X, None, RBF) is not K
    np.testing.assert_array_equal(kernel_matrix(X, None, RBF), K)
    with shared_kernels(X):  # a nested scope for the same X shares the outer one's matrix
        K = kernel_matrix(X, None, RBF)
        with shared_kernels(X):
            assert kernel_matrix(X, None, RBF) is K
        assert kernel_matrix(X, None, RBF) is K
        K1 = kernel_matrix(X, None, {"kind": "rbf", "sigma": 1.0})  # one matrix kept at a time
        assert kernel_matrix(X, None, RBF) is not K and kernel_matrix(X, None, RBF) is not K1


def test_a_grid_in_one_scope_matches_each_point_alone(tmp_path):
    """run_grid (a grid job) gives every point the metrics of its own run_cell, bit for bit."""
    from gssl.pipeline.stages import run_grid

    files = build_moons_cell(tmp_path, {"lpc1": {"kind": "labels_per_class", "n": 1, "repeats": 3}})
    cell = Cell(files / "features.h5", files / "graph.h5", files / "lpc1.h5")
    points = [(f"p{i}", {"solver": "lap_rls", "params": {"kernel": {"kind": "rbf", "sigma": s},
                                                          "gamma_A": 0.01, "gamma_I": g}})
              for i, (s, g) in enumerate([(1.0, 0.1), (1.0, 1.0), (3.0, 0.1)])]
    for (variant, method, results), (v, m) in zip(run_grid(cell, [0, 1, 2], points), points):
        alone = run_cell(cell, [0, 1, 2], m)
        assert variant == v and method is m
        for r, a in zip(results, alone):
            assert {k: x for k, x in r["metrics"].items() if k != "fit_seconds"} == \
                {k: x for k, x in a["metrics"].items() if k != "fit_seconds"}
            assert r["predictions"] is None and r["history"] == []


def test_an_alternative_decision_rule_is_scored_beside(tmp_path):
    """A multiclass TV fit reports the error of the papers' rule (arg-max of f) beside its own."""
    from sklearn.datasets import make_blobs

    from gssl.features import save_features
    from gssl.graphs import build_graph
    from gssl.graphs.cache import save_graph
    from gssl.splits import make_splits, save_splits

    X, y = make_blobs(90, centers=3, n_features=4, random_state=0)
    spec = {"kind": "knn", "k": 8, "weights": "binary", "laplacian": "normalized"}
    proto = {"kind": "labels_per_class", "n": 1, "repeats": 1}
    save_features(tmp_path / "f.h5", X, y, params={})
    save_graph(tmp_path / "g.h5", build_graph(X, spec), params=spec)
    save_splits(tmp_path / "s.h5", make_splits(y, proto, "b", "p"), params={"protocol": proto})
    cell = Cell(tmp_path / "f.h5", tmp_path / "g.h5", tmp_path / "s.h5")
    method = {"solver": "tv_rls", "params": {"kernel": RBF, "radius": "sqrt_n"}}
    m = fit_split(cell, 0, method)["metrics"]
    est = make_solver("tv_rls", method["params"])
    role = cell.roles[0]
    est.fit(cell.graph, np.where(role == 0, y, -1), n_classes=3)
    unl = role == 1
    assert m["error_unlabeled_argmax_f"] == error_rate(y[unl], est.alternative_labels_["argmax_f"][unl])
    assert m["error_unlabeled"] == error_rate(y[unl], est.transduction_[unl])
    # the batched path (read-only shared kernel) gives the multiclass fit unchanged
    batched = run_cell(cell, [0], method)[0]["metrics"]
    assert {k: v for k, v in batched.items() if k != "fit_seconds"} == {
        k: v for k, v in m.items() if k != "fit_seconds"}


@pytest.fixture(scope="module")
def three_class_cell(tmp_path_factory):
    from sklearn.datasets import make_blobs

    from gssl.features import save_features
    from gssl.graphs import build_graph
    from gssl.graphs.cache import save_graph
    from gssl.splits import make_splits, save_splits

    folder = tmp_path_factory.mktemp("three")
    X, y = make_blobs(90, centers=3, n_features=4, cluster_std=2.5, random_state=3)
    spec = {"kind": "knn", "k": 8, "weights": "binary", "laplacian": "normalized"}
    proto = {"kind": "labels_per_class", "n": 1, "repeats": 3}
    save_features(folder / "f.h5", X, y, params={})
    save_graph(folder / "g.h5", build_graph(X, spec), params=spec)
    save_splits(folder / "s.h5", make_splits(y, proto, "b", "p"), params={"protocol": proto})
    return folder / "f.h5", folder / "g.h5", folder / "s.h5"


@pytest.mark.parametrize("name,extra", [
    ("tv_rls", {"radius": "sqrt_n", "init": "diffusion_fiedler"}), ("tv_svm", {"radius": "sqrt_n"}),
    ("cheeger_rls", {}), ("cheeger_svm", {}), ("lap_rls_simplex", {}), ("lap_svm_mc", {})])
def test_multiclass_batched_splits_equal_one_process_per_split(three_class_cell, name, extra):
    method = {"solver": name, "params": {"kernel": RBF, "max_iter": 30, **extra}}
    for result in run_cell(Cell(*three_class_cell), [0, 1, 2], method):
        alone = run_solver(*three_class_cell, result["split"], method)
        assert result["predictions"] == alone["predictions"]
        assert ({k: v for k, v in result["metrics"].items() if k not in ("fit_seconds", "load_seconds")}
                == {k: v for k, v in alone["metrics"].items() if k not in ("fit_seconds", "load_seconds")})


def test_a_graph_only_dataset_runs_through_every_stage(tmp_path):
    """Like the 20NEWS graph: no features, a precomputed W; the features file keeps the labels and
    an n x 0 X that reads back as None, and a graph method fits on W alone."""
    import scipy.sparse as sp
    from sklearn.datasets import make_blobs
    from sklearn.neighbors import kneighbors_graph

    from gssl.datasets.dataset import Dataset
    from gssl.datasets.store import save_dataset
    from gssl.features import load_features
    from gssl.pipeline.stages import build_features, build_graph, build_splits

    X, y = make_blobs(120, centers=3, n_features=4, random_state=0)
    A = kneighbors_graph(X, 8, include_self=False)
    W = sp.csr_matrix(A.maximum(A.T))
    save_dataset(tmp_path / "data.h5", Dataset(name="g", X=None, y=y.astype(np.int64),
                                               classes=np.array(["a", "b", "c"]), W=W), params={})
    build_features(tmp_path / "data.h5", [], tmp_path / "features.h5")
    assert load_features(tmp_path / "features.h5")[0] is None
    build_graph(tmp_path / "features.h5", {"kind": "precomputed", "laplacian": "unnormalized"},
                tmp_path / "graph.h5", data_path=tmp_path / "data.h5")
    build_splits(tmp_path / "data.h5", "g", "lpc1", {"kind": "labels_per_class", "n": 1, "repeats": 2},
                 tmp_path / "lpc1.h5")
    cell = Cell(tmp_path / "features.h5", tmp_path / "graph.h5", tmp_path / "lpc1.h5")
    assert cell.X is None and cell.graph.n_nodes == 120
    res = fit_split(cell, 1, {"solver": "mtv", "params": {"max_iter": 300}})
    assert res["metrics"]["purity"] > 90 and "solver_discrete_energy" in res["metrics"]


def test_config_class_views_name_classes_and_indices_say_so(tmp_path):
    """classes: / groups: hold class names (a number is its name: COIL20's objects are "1".."20"),
    class_indices: / group_indices: label indices; a name the dataset lacks is a named error."""
    from gssl.datasets import load_dataset
    from gssl.datasets.views import class_view
    from gssl.pipeline.stages import build_dataset

    assert class_view({"classes": [1, 2]}) == {"classes": ["1", "2"]}
    assert class_view({"groups": [[0, 1], ["2"]]}) == {"groups": [["0", "1"], ["2"]]}
    assert class_view({"class_indices": [1, 2]}) == {"classes": [1, 2]}
    assert class_view({"group_indices": [[0], [1, 2]]}) == {"groups": [[0], [1, 2]]}
    assert class_view({"source": "digits"}) == {}
    out = tmp_path / "d.h5"
    build_dataset("d", {"source": "four_moons", "classes": [3, 1]}, tmp_path, out)
    by_name = load_dataset(out)
    build_dataset("d", {"source": "four_moons", "class_indices": [3, 1]}, tmp_path, out)
    by_index = load_dataset(out)  # four_moons' classes are "0".."3": names and indices agree
    assert by_name.classes.tolist() == by_index.classes.tolist() == ["3", "1"]
    np.testing.assert_array_equal(by_name.X, by_index.X)
    with pytest.raises(ConfigError, match=r"no class named '4'; its classes: \['0', '1', '2', '3'\].*class_indices"):
        build_dataset("d", {"source": "four_moons", "classes": [4, 1]}, tmp_path, out)


class _Named(dict):
    """A rule's input or params as a job sees them (Snakemake's named lists): by attribute, or get."""
    __getattr__ = dict.__getitem__


def test_a_solve_job_writes_its_block_and_returns_its_runs(tmp_path):
    """gssl.pipeline.solve_job: the evaluation of a method on a block of splits writes one block
    (its splits, timings) and returns the JobRuns tree of those results; a grid, one per point."""
    import json
    import logging

    from gssl.pipeline.solve_job import input_tags, solve_job
    from gssl.tracking.job_runs import JobRuns

    proto = {"kind": "labels_per_class", "n": 1, "repeats": 3}
    files = build_moons_cell(tmp_path, {"lpc1": proto})
    inputs = _Named(features=str(files / "features.h5"), graph=str(files / "graph.h5"), splits=str(files / "lpc1.h5"))
    method = {"solver": "lap_rls", "params": {"kernel": {"kind": "rbf", "sigma": 1.0}, "gamma_A": 0.01}}
    params = _Named(method=method, seed=0, prep_steps=["standardize"], protocol_spec=proto, code="abc",
                    graph_spec={"kind": "knn", "k": 8, "weights": "binary", "laplacian": "normalized"})
    wc = {"experiment": "e", "dataset": "moons", "prep": "std", "graph": "knn8", "method": "laprls",
          "protocol": "lpc1"}
    tags = input_tags(inputs.features, inputs.graph, inputs.splits, {"gssl.data_files": "[]"})
    assert {"gssl.features_hash", "gssl.graph_hash", "gssl.splits_hash", "gssl.data_files"} <= set(tags)
    runs = JobRuns(wc, [1, 2], False, "solve", "evaluation", "abc", "out.json", tags,
                   {"graph": params.graph_spec, "preprocessing": {}, "protocol": proto, "seed": 0})
    log = logging.getLogger("test")
    trees = solve_job(inputs, params, wc, [1, 2], runs, tmp_path / "out.json", log)
    block = json.loads((tmp_path / "out.json").read_text())
    assert [s["split"] for s in block["splits"]] == [1, 2] and block["method_params"] == method
    assert len(trees) == 1 and len(trees[0]["children"]) == 2
    assert trees[0]["run"]["metrics"]["n_splits"] == 2
    grid = [["p0", method], ["p1", {**method, "params": {**method["params"], "gamma_A": 1.0}}]]
    trees = solve_job(inputs, _Named(params, grid=grid), wc, [1, 2], runs, tmp_path / "grid.json", log)
    assert [b["variant"] for b in json.loads((tmp_path / "grid.json").read_text())["blocks"]] == ["p0", "p1"]
    assert [t["run"]["tags"]["gssl.variant"] for t in trees] == ["p0", "p1"]
