"""gssl as a Python library: fit on a Graph, a weight matrix or features with graph=, clear
errors for bad input, and the docs/examples scripts (the README's "Use from Python")."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits

import gssl
from gssl.errors import ConfigError, GraphError, SolverError
from gssl.graphs import Graph
from gssl.solvers.registry import SOLVERS, make_solver

REPO = Path(__file__).resolve().parents[1]
FAST = {  # keep the parametrised fits short; every other solver runs with its defaults
    "mtv": {"max_iter": 50, "n_trials": 1}, "ssdl_ga": {"n_atoms": 20, "max_iter": 2},
    "sc_svm": {"n_atoms": 20, "max_iter": 2}, "tv_svm": {"max_iter": 20},
    "cheeger_svm": {"max_iter": 20}, "tv_rls": {"max_iter": 20}, "cheeger_rls": {"max_iter": 20},
}


@pytest.fixture(scope="module")
def small():
    X, y = load_digits(return_X_y=True)
    X, y = X[:400] / 16.0, y[:400]
    G = gssl.build_graph(X, k=10)
    y_train = np.full_like(y, -1)
    for c in range(10):
        y_train[np.flatnonzero(y == c)[:3]] = c
    return X, y, G, y_train


def test_build_graph_takes_the_config_keys_as_keywords(small):
    X, *_ = small
    a = gssl.build_graph(X, k=6, weights="gaussian_kth", symmetrize="mean")
    b = gssl.build_graph(X, {"kind": "knn", "k": 6, "weights": "gaussian_kth", "symmetrize": "mean"})
    assert (a.W != b.W).nnz == 0 and a.params == b.params
    with pytest.raises(ConfigError, match="unknown key"):
        gssl.build_graph(X, k=6, neighbours=3)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_every_solver_fits_a_graph_and_a_sparse_weight_matrix(name, small):
    """On a gssl Graph every solver fits; on a bare W the graph methods give the same labels
    and the kernel methods say they need features."""
    X, y, G, y_train = small
    names = SOLVERS[name]._get_param_names()
    params = {k: v for k, v in FAST.get(name, {}).items() if k in names}
    params.update({"random_state": 0} if "random_state" in names else {})
    on_graph = make_solver(name, params).fit(G, y_train, n_classes=10).predict()
    assert on_graph.shape == y.shape
    try:
        on_w = make_solver(name, params).fit(sp.csr_matrix(G.W), y_train, n_classes=10).predict()
    except SolverError as exc:
        assert "features" in str(exc)
        return
    np.testing.assert_array_equal(on_w, make_solver(name, params).fit(
        Graph(W=G.W), y_train, n_classes=10).predict())


def test_features_with_a_graph_spec_and_dense_w(small):
    X, y, G, y_train = small
    est = make_solver("poisson")
    a = est.fit(X, y_train, graph={"k": 10}).predict()
    b = make_solver("poisson").fit(G, y_train).predict()
    c = make_solver("poisson").fit(G.W.toarray(), y_train).predict()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(b, c)


@pytest.mark.parametrize("make_input, error, message", [
    (lambda X, W: X, ConfigError, "pass graph="),                         # features, no spec
    (lambda X, W: sp.triu(W).tocsr(), GraphError, "not symmetric"),
    (lambda X, W: -W, GraphError, "negative weights"),
    (lambda X, W: W[:, :-1], GraphError, "square"),
])
def test_bad_graph_input_says_what_to_do(make_input, error, message, small):
    X, y, G, y_train = small
    with pytest.raises(error, match=message):
        make_solver("laplace").fit(make_input(X, G.W), y_train)


def test_nan_labels_say_use_minus_one(small):
    X, y, G, y_train = small
    y_nan = y_train.astype(float)
    y_nan[y_train == -1] = np.nan
    with pytest.raises(SolverError, match="mark unlabeled nodes with -1"):
        make_solver("poisson").fit(G, y_nan)


def test_a_component_without_labels_is_refused():
    W = sp.block_diag([sp.csr_matrix(np.ones((3, 3)) - np.eye(3))] * 2).tocsr()
    with pytest.raises(SolverError, match="hold no labeled node"):
        make_solver("laplace").fit(W, np.array([0, 1, -1, -1, -1, -1]))


@pytest.mark.parametrize("script, floors", [
    ("digits_comparison.py", {"laplace": 85, "poisson": 88, "poisson_mbo": 90}),
    ("own_weight_matrix.py", {"laplace": 80, "poisson": 80}),
])
def test_examples_run_and_reach_their_accuracy(script, floors):
    out = subprocess.run([sys.executable, str(REPO / "docs" / "examples" / script)], check=True,
                         capture_output=True, text=True, cwd=REPO).stdout
    acc = {}
    for line in out.splitlines():
        acc.setdefault(line.split()[0], float(line.split()[-2]))
    for name, floor in floors.items():
        assert acc[name] >= floor, out


def test_shared_graph_operators_build_once_for_many_draws(small, monkeypatch):
    """The README's loop over label draws: inside the block the normalized operator is built
    once, and every fit gives what it gives alone."""
    import gssl.optim.graph_learning as kernels

    X, y, G, y_train = small
    draws = [np.where(np.isin(np.arange(y.size), np.flatnonzero(y_train >= 0)[i::2]), y, -1)
             for i in range(2)]
    alone = [gssl.make_solver("poisson").fit(G, d).predict() for d in draws]
    builds = []
    build = kernels._normalized_graph
    monkeypatch.setattr(kernels, "_normalized_graph", lambda *a: builds.append(1) or build(*a))
    with gssl.shared_graph_operators(G.W):
        shared = [gssl.make_solver(name).fit(G, d).predict() for d in draws
                  for name in ("poisson", "laplace")]
    assert len(builds) == 1
    np.testing.assert_array_equal(shared[0], alone[0])
    np.testing.assert_array_equal(shared[2], alone[1])
