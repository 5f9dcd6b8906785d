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
from gssl.solvers.checks import fast_params
from gssl.solvers.registry import SOLVERS, make_solver

REPO = Path(__file__).resolve().parents[1]


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


@pytest.mark.parametrize("name", sorted(SOLVERS.names()))  # an older name is the same class
def test_every_solver_fits_a_graph_and_a_sparse_weight_matrix(name, small):
    """On a gssl Graph every solver fits; on a bare W the graph methods give the same labels
    and the kernel methods say they need features."""
    X, y, G, y_train = small
    params = fast_params(SOLVERS[name])  # the short settings the solver declares (its tags' fast)
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
    # a Graph made by hand is checked as a bare W is, at its first fit
    (lambda X, W: Graph(W=sp.triu(W).tocsr()), GraphError, r"Graph\(W=...\): W is not symmetric"),
    (lambda X, W: Graph(W=-W), GraphError, r"Graph\(W=...\): W has \d+ negative weights"),
    (lambda X, W: Graph(W=W, X=X[:10]), GraphError, r"Graph\(X=...\): the features must be a 2-D "
                                                     r"array .* with a row per node of W \(400\)"),
])
def test_bad_graph_input_says_what_to_do(make_input, error, message, small):
    X, y, G, y_train = small
    with pytest.raises(error, match=message):
        make_solver("laplace").fit(make_input(X, G.W), y_train)


def test_a_hand_made_graph_is_checked_once_and_cleaned(small):
    X, y, G, y_train = small
    H = Graph(W=G.W + sp.identity(G.n_nodes, format="csr"))  # self-loops, as a user may build
    make_solver("poisson").fit(H, y_train)
    assert H.checked and H.W.diagonal().max() == 0  # dropped, as for a bare W
    W = H.W
    make_solver("poisson").fit(H, y_train)
    assert H.W is W  # not checked again


def test_a_list_or_a_spec_without_kind_builds_the_same_graph(small):
    X, *_ = small
    G = gssl.build_graph(X, k=6)
    for H in (gssl.build_graph(X.tolist(), k=6), gssl.build_graph(X, {"k": 6})):
        assert (H.W != G.W).nnz == 0
    assert isinstance(gssl.build_graph(X.tolist(), kind="lle", k=6).X, np.ndarray)


@pytest.mark.parametrize("labels, n_classes, message", [
    (lambda y: y.astype(np.uint8), None, r"y is unsigned \(uint8\) and holds 255, which is what -1 "
                                         r"becomes"),
    (lambda y: y, "10", r"n_classes must be an integer >= 2 .* got '10'"),
    (lambda y: y, 1, r"n_classes must be an integer >= 2"),
])
def test_labels_that_would_be_misread_are_refused(labels, n_classes, message, small):
    X, y, G, y_train = small
    with pytest.raises(SolverError, match=message):
        make_solver("poisson").fit(G, labels(y_train), n_classes=n_classes)


def test_score_with_the_mask_by_position_says_pass_it_by_keyword(small):
    X, y, G, y_train = small
    est = make_solver("lap_rls").fit(G, y_train)
    with pytest.raises(SolverError, match=r"pass the mask as a keyword: score\(y_true, mask=...\)"):
        est.score(y, y_train == -1)
    assert 0.5 < est.score(y, mask=y_train == -1) <= 1.0


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


# -- the scikit-learn / GraphLearning user's API -------------------------------------------------
@pytest.fixture(scope="module")
def moons():
    from sklearn.datasets import make_moons

    X, y = make_moons(120, noise=0.1, random_state=0)
    y_train = np.full_like(y, -1)
    for c in (0, 1):
        y_train[np.flatnonzero(y == c)[:4]] = c
    return X, y, gssl.build_graph(X, k=8), y_train


def test_build_graph_with_w_uses_w_and_keeps_x(moons):
    X, y, G, y_train = moons
    H = gssl.build_graph(X, W=G.W)
    assert (H.W != G.W).nnz == 0 and H.W.shape == G.W.shape
    assert H.X is X and H.params["kind"] == "precomputed"
    # the features ride along: a kernel method fits on it as on the kNN graph it came from
    np.testing.assert_array_equal(make_solver("lap_rls").fit(H, y_train).predict(),
                                  make_solver("lap_rls").fit(G, y_train).predict())
    assert gssl.build_graph(W=G.W).X is None


@pytest.mark.parametrize("spec, keys, what", [
    ({"kind": "knn", "k": 5}, {}, "kind='knn'"),
    ({"kind": "lle"}, {}, "kind='lle'"),
    (None, {"k": 5}, r"the key\(s\) \['k'\]"),
])
def test_build_graph_refuses_w_with_a_spec_that_builds_from_x(spec, keys, what, moons):
    X, y, G, y_train = moons
    with pytest.raises(ConfigError, match=f"{what}.*would discard W: drop W="):
        gssl.build_graph(X, spec, W=G.W, **keys)
    # kind precomputed with its own keys is W itself
    H = gssl.build_graph(X, {"kind": "precomputed", "laplacian": "random_walk"}, W=G.W)
    assert (H.W != G.W).nnz == 0 and H.laplacian_kind == "random_walk"


@pytest.mark.parametrize("name", ["poisson", "laplace", "lap_rls", "label_spreading"])
def test_fit_predict_is_fit_then_predict(name, small):
    X, y, G, y_train = small
    np.testing.assert_array_equal(make_solver(name).fit_predict(G, y_train, n_classes=10),
                                  make_solver(name).fit(G, y_train, n_classes=10).predict())


@pytest.mark.parametrize("name", ["kmeans", "spectral_clustering"])
def test_clusterers_fit_predict_takes_fits_arguments(name, moons):
    X, y, G, y_train = moons
    a = make_solver(name, random_state=0).fit_predict(X, None, n_classes=2, graph={"k": 8})
    b = make_solver(name, random_state=0).fit(G, None, n_classes=2).predict()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["poisson", "laplace", "lap_rls"])
def test_predict_proba_rows_are_distributions_whose_argmax_is_predict(name, small):
    X, y, G, y_train = small
    est = make_solver(name).fit(G, y_train)
    P = est.predict_proba()
    assert P.shape == (y.size, 10) and P.min() >= 0
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(est.classes_[P.argmax(axis=1)], est.predict())
    if name == "laplace":  # harmonic functions are random-walk hitting probabilities: kept
        np.testing.assert_allclose(P, est.decision_function_, atol=1e-4)


def test_predict_proba_of_new_points(moons):
    X, y, G, y_train = moons
    est = make_solver("lap_rls").fit(G, y_train)
    P = est.predict_proba(X[:7] + 0.01)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[P.argmax(axis=1)], est.predict(X[:7] + 0.01))


def test_probability_rules():
    from gssl.solvers.fit_checks import normalized_scores

    S = np.array([[1.0, 3.0, 0.0], [-1.0, 1.0, 3.0], [0.0, 0.0, 0.0], [-2.0, -2.0, -2.0]])
    np.testing.assert_allclose(normalized_scores(S), [[0.25, 0.75, 0], [0, 2 / 6, 4 / 6],
                                                      [1 / 3] * 3, [1 / 3] * 3])
    # one-vs-all +-1 targets: f estimates 2 P - 1
    np.testing.assert_allclose(normalized_scores(np.array([[-0.5, 0.5], [-2.0, 2.0]]), "ova"),
                               [[0.25, 0.75], [0.0, 1.0]])


def test_abstained_nodes_get_uniform_rows_and_count_as_errors():
    W = sp.block_diag([sp.csr_matrix(np.ones((3, 3)) - np.eye(3))] * 2).tocsr()
    est = make_solver("laplace", unreachable="abstain").fit(W, np.array([0, 1, -1, -1, -1, -1]))
    np.testing.assert_array_equal(est.predict()[3:], -1)
    np.testing.assert_allclose(est.predict_proba()[3:], 0.5)
    y_true = np.array([0, 1, 0, 1, 1, 0])
    assert est.score(y_true) == pytest.approx(np.mean(est.predict() == y_true))


@pytest.mark.parametrize("name", ["kmeans", "spectral_clustering", "mtv"])
def test_clusterers_have_no_class_probabilities(name, moons):
    X, y, G, y_train = moons
    est = make_solver(name, random_state=0)
    if name != "mtv":  # (an MTV fit loads numba: a second; its answer is the same unfitted)
        est.fit(G, None, n_classes=2)
    with pytest.raises(SolverError, match="clustering method.*no class probabilities"):
        est.predict_proba()


def test_score_is_the_accuracy_of_the_nodes_labels(small):
    X, y, G, y_train = small
    est = make_solver("poisson").fit(G, y_train)
    pred = est.predict()
    assert est.score(y) == pytest.approx(np.mean(pred == y))
    unlabeled = y_train == -1
    assert est.score(y, mask=unlabeled) == pytest.approx(np.mean(pred[unlabeled] == y[unlabeled]))
    assert est.score(y, mask=np.flatnonzero(unlabeled)) == est.score(y, mask=unlabeled)
    partial = np.where(np.arange(y.size) % 3 == 0, -1, y)  # -1: true label unknown, not scored
    known = partial >= 0
    assert est.score(partial) == pytest.approx(np.mean(pred[known] == y[known]))
    with pytest.raises(SolverError, match="one label per graph node"):
        est.score(y[:10])


def test_score_of_new_points_is_sklearns(moons):
    from sklearn.metrics import accuracy_score

    X, y, G, y_train = moons
    est = make_solver("lap_rls").fit(G, y_train)
    X_new = X[::5] + 0.02
    assert est.score(X_new, y[::5]) == accuracy_score(y[::5], est.predict(X_new))


def test_make_solver_takes_keywords():
    assert make_solver("poisson", tol=1e-3).tol == 1e-3
    est = make_solver("poisson", {"tol": 1e-3}, max_iter=5)
    assert (est.tol, est.max_iter) == (1e-3, 5)
    assert gssl.make_solver("poisson", {"tol": 1e-3}).get_params() == \
        gssl.make_solver("poisson", tol=1e-3).get_params()
    with pytest.raises(ConfigError, match=r"\['tol'\] given both in params and as keywords"):
        make_solver("poisson", {"tol": 1e-3}, tol=1e-4)
    with pytest.raises(ConfigError, match="unknown parameters"):
        make_solver("poisson", tolerance=1e-3)
    with pytest.raises(ConfigError, match="must be a mapping"):
        make_solver("poisson", [("tol", 1e-3)])


def test_missing_features_say_how_to_fix_it(small):
    X, y, G, y_train = small
    W = sp.csr_matrix(G.W)
    with pytest.raises(SolverError, match=r"needs node features.*graph='given'"):
        make_solver("label_spreading").fit(W, y_train)
    make_solver("label_spreading", graph="given").fit(W, y_train)  # the fix it names
    with pytest.raises(SolverError, match=r"needs node features.*build_graph\(X, W=W\)"):
        make_solver("lap_rls").fit(W, y_train)
    make_solver("lap_rls").fit(gssl.build_graph(X, W=W), y_train)  # the fix it names


def test_every_compiled_kernel_is_cached_on_disk():
    """numba compiles a kernel in each fresh process unless it is cached (cache=True): the
    first MTV fit took ~35 s without the cache and ~2 s with it."""
    import re

    found = 0
    for path in (REPO / "src" / "gssl").rglob("*.py"):
        for m in re.finditer(r"@(?:numba\.)?(?:njit|jit|vectorize|guvectorize)\b(\([^)]*\))?",
                             path.read_text()):
            found += 1
            assert "cache=True" in (m.group(1) or ""), f"{path.name}: {m.group(0)}"
    assert found


def test_graphlearning_defaults_that_differ_are_documented():
    from gssl.solvers.mbo import VolumeMBO

    assert VolumeMBO().volume_constraint == 1.0
    assert "GraphLearning's default is 0.5" in VolumeMBO.__doc__


def test_the_docs_own_file_in_python_predicts_the_unlabeled_rows_by_id(monkeypatch, capsys):
    """docs/running.md's "Your file in Python" block, run as written (from the repository root)."""
    import re

    text = (REPO / "docs" / "running.md").read_text()
    block = re.search(r"Your file in Python.*?```python\n(.*?)```", text, re.S)
    monkeypatch.chdir(REPO)
    exec(compile(block.group(1), "docs/running.md", "exec"), {})
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    ids = [line.split(",")[0] for line in (REPO / "docs/examples/my_method/moons.csv").read_text().splitlines()
           if line.endswith(",")]
    assert [p for p, _ in lines] == ids and len(ids) == 20
    assert {name for _, name in lines} == {"lower", "upper"}
