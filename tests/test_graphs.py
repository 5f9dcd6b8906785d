"""kNN search, weights, symmetrization, LLE weights, Laplacians and build_graph."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import laplacian as scipy_laplacian
from sklearn.manifold._locally_linear import barycenter_kneighbors_graph
from sklearn.neighbors import kneighbors_graph

from gssl.errors import ConfigError, DatasetError, GraphError
from gssl.graphs import (Graph, binary, build_graph, gaussian_kth, heat, knn_distances, laplacian, lle_laplacian,
                         lle_weights, matrix_power, self_tuning, symmetrize, validate_graph_spec)


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).normal(size=(80, 5))


# ---------------------------------------------------------------- kNN and weights

def test_knn_matches_sklearn_kneighbors_graph(X):
    dist, idx = knn_distances(X, 6)
    assert dist.shape == idx.shape == (80, 6)
    assert not np.any(idx == np.arange(80)[:, None])
    ref = kneighbors_graph(X, 6, mode="distance", include_self=False)
    mine = sp.csr_matrix((dist.ravel(), idx.ravel(), np.arange(0, 80 * 6 + 1, 6)), shape=(80, 80))
    np.testing.assert_allclose(mine.toarray(), ref.toarray(), atol=1e-12)
    conn = kneighbors_graph(X, 6, mode="connectivity", include_self=False)
    np.testing.assert_array_equal(binary(dist, idx).toarray(), conn.toarray())
    g = build_graph(X, {"kind": "knn", "k": 6, "weights": "binary"})
    np.testing.assert_array_equal(g.W.toarray(), conn.maximum(conn.T).toarray())


def test_knn_excludes_self_with_duplicates():
    X = np.array([[0.0], [0.0], [0.0], [1.0], [5.0]])
    dist, idx = knn_distances(X, 2)
    assert not np.any(idx == np.arange(5)[:, None])
    np.testing.assert_array_equal(np.sort(idx[:3], axis=1), [[1, 2], [0, 2], [0, 1]])
    np.testing.assert_array_equal(dist[:3], 0.0)


def test_heat_closed_form():
    X = np.array([[0.0], [1.0], [3.0]])  # 1-NN: 0->1 (1), 1->0 (1), 2->1 (2)
    dist, idx = knn_distances(X, 1)
    sigma = 4.0 / 3.0  # mean kNN distance, before symmetrization
    e = lambda d, s: np.exp(-d * d / (2 * s * s))
    expected = np.array([[0, e(1, sigma), 0], [e(1, sigma), 0, 0], [0, e(2, sigma), 0]])
    np.testing.assert_allclose(heat(dist, idx).toarray(), expected)
    np.testing.assert_allclose(heat(dist, idx, 0.5).toarray(), np.where(expected > 0, e(np.array(
        [[0, 1, 0], [1, 0, 0], [0, 2, 0]]), 0.5), 0))
    g = build_graph(X, {"kind": "knn", "k": 1})
    assert g.params["sigma_value"] == pytest.approx(sigma)
    np.testing.assert_allclose(g.W.toarray(), np.maximum(expected, expected.T))


def test_self_tuning_closed_form():
    X = np.array([[0.0], [1.0], [3.0], [7.0]])
    dist, idx = knn_distances(X, 2)
    s = np.array([3.0, 2.0, 3.0, 6.0])  # distance to the 2nd neighbour
    W = self_tuning(dist, idx, k_st=2, k=1).toarray()
    # 1-NN edges: 0->1, 1->0, 2->1, 3->2
    exp = np.zeros((4, 4))
    for i, j, d in [(0, 1, 1), (1, 0, 1), (2, 1, 2), (3, 2, 4)]:
        exp[i, j] = np.exp(-d * d / (s[i] * s[j]))
    np.testing.assert_allclose(W, exp)
    g = build_graph(X, {"kind": "knn", "k": 1, "weights": "self_tuning", "k_st": 2})
    np.testing.assert_allclose(g.W.toarray(), np.maximum(exp, exp.T))
    with pytest.raises(GraphError, match="maximum allowed k_st is 3"):
        build_graph(X, {"kind": "knn", "k": 1, "weights": "self_tuning"})  # default k_st = 7


def test_gaussian_kth_closed_form():
    X = np.array([[0.0], [1.0], [3.0], [7.0]])
    dist, idx = knn_distances(X, 2)
    dk = np.array([3.0, 2.0, 3.0, 6.0])  # distance to the 2nd (= k-th) neighbour
    W = gaussian_kth(dist, idx).toarray()
    exp = np.zeros((4, 4))
    for i, j, d in [(0, 1, 1), (0, 2, 3), (1, 0, 1), (1, 2, 2), (2, 1, 2), (2, 0, 3), (3, 2, 4),
                    (3, 1, 6)]:
        exp[i, j] = np.exp(-4 * d * d / dk[i] ** 2)
    np.testing.assert_allclose(W, exp)
    g = build_graph(X, {"kind": "knn", "k": 2, "weights": "gaussian_kth", "symmetrize": "mean"})
    np.testing.assert_allclose(g.W.toarray(), (exp + exp.T) / 2)
    with pytest.raises(ConfigError, match="unknown key"):
        validate_graph_spec({"kind": "knn", "weights": "gaussian_kth", "sigma": 1.0})


def test_symmetrizations_on_hand_made_matrix():
    W = sp.csr_matrix(np.array([[0, 2, 0, 4], [1, 0, 3, 0], [0, 0, 0, 0], [4, 0, 0, 0]], float))
    np.testing.assert_array_equal(symmetrize(W, "max").toarray(),
                                  [[0, 2, 0, 4], [2, 0, 3, 0], [0, 3, 0, 0], [4, 0, 0, 0]])
    np.testing.assert_array_equal(symmetrize(W, "mean").toarray(),
                                  [[0, 1.5, 0, 4], [1.5, 0, 1.5, 0], [0, 1.5, 0, 0], [4, 0, 0, 0]])
    M = symmetrize(W, "mutual")
    np.testing.assert_array_equal(M.toarray(), [[0, 1, 0, 4], [1, 0, 0, 0], [0, 0, 0, 0], [4, 0, 0, 0]])
    assert M.nnz == 4  # no stored zeros
    with pytest.raises(ConfigError, match="max"):
        symmetrize(W, "min")


# ---------------------------------------------------------------- Laplacians

@pytest.fixture(scope="module")
def W(X):
    return build_graph(X, {"kind": "knn", "k": 5}).W


def test_unnormalized_laplacian(W):
    L = laplacian(W, "unnormalized")
    np.testing.assert_allclose(L @ np.ones(W.shape[0]), 0, atol=1e-12)
    np.testing.assert_allclose(L.toarray(), scipy_laplacian(W.toarray()), atol=1e-14)
    assert abs(L - L.T).max() < 1e-14


def test_normalized_laplacian(W):
    L = laplacian(W, "normalized")
    np.testing.assert_allclose(L.toarray(), scipy_laplacian(W.toarray(), normed=True), atol=1e-12)
    ev = np.linalg.eigvalsh(L.toarray())
    assert ev.min() > -1e-10 and ev.max() < 2 + 1e-10
    d = np.asarray(W.sum(1)).ravel()
    np.testing.assert_allclose(L @ np.sqrt(d), 0, atol=1e-12)


def test_random_walk_laplacian(W):
    L = laplacian(W, "random_walk").toarray()
    np.testing.assert_allclose(L.sum(axis=1), 0, atol=1e-12)
    d = np.asarray(W.sum(1)).ravel()
    np.testing.assert_allclose(L, np.eye(len(d)) - W.toarray() / d[:, None], atol=1e-14)


def test_isolated_node_gives_no_nan():
    W = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], float))
    for kind in ("unnormalized", "normalized", "random_walk"):
        L = laplacian(W, kind).toarray()
        assert np.all(np.isfinite(L)), kind
    np.testing.assert_allclose(laplacian(W, "normalized").toarray(),
                               [[1, -1, 0], [-1, 1, 0], [0, 0, 1]])


@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_matrix_power_equals_dense(W, p):
    L = laplacian(W, "normalized")
    np.testing.assert_allclose(matrix_power(L, p).toarray(), np.linalg.matrix_power(L.toarray(), p),
                               atol=1e-12)
    g = Graph(W=W, laplacian_kind="unnormalized", laplacian_power=p)
    np.testing.assert_allclose(g.laplacian().toarray(),
                               np.linalg.matrix_power(laplacian(W, "unnormalized").toarray(), p),
                               rtol=1e-12, atol=1e-9)


def test_matrix_power_rejects_bad_exponent(W):
    for p in (0, 1.5, True):
        with pytest.raises(ConfigError, match="power"):
            matrix_power(W, p)


# ---------------------------------------------------------------- LLE

def test_lle_rows_sum_to_one_and_match_sklearn(X):
    V = lle_weights(X, 6, reg=1e-3)
    np.testing.assert_allclose(np.asarray(V.sum(1)).ravel(), 1.0)
    assert np.all(np.diff(V.indptr) == 6) and V.diagonal().sum() == 0
    ref = barycenter_kneighbors_graph(X, 6, reg=1e-3)
    np.testing.assert_allclose(V.toarray(), ref.toarray(), atol=1e-10)
    Vs = lle_weights(sp.csr_matrix(X), 6, reg=1e-3)
    np.testing.assert_allclose(Vs.toarray(), V.toarray(), atol=1e-12)


@pytest.mark.parametrize("k", [3, 5])
def test_lle_reconstructs_points_on_a_plane(k):
    rng = np.random.default_rng(1)
    uv = rng.uniform(-1, 1, size=(40, 2))
    X = np.array([1.0, 2.0, -1.0]) + uv @ np.array([[1.0, 0.5, 0.2], [-0.3, 1.0, 0.7]])
    V = lle_weights(X, k, reg=1e-12)
    np.testing.assert_allclose(V @ X, X, atol=1e-6)
    np.testing.assert_allclose(np.asarray(V.sum(1)).ravel(), 1.0)


def test_lle_laplacian(X):
    V = lle_weights(X, 5)
    I = np.eye(X.shape[0])
    ref = (I - V.toarray()).T @ (I - V.toarray())
    L = lle_laplacian(V)
    np.testing.assert_allclose(L.toarray(), ref, atol=1e-12)
    np.testing.assert_allclose(L @ np.ones(X.shape[0]), 0, atol=1e-10)
    g = build_graph(X, {"kind": "lle", "k": 5})
    assert g.laplacian_kind == "lle"
    np.testing.assert_allclose(g.laplacian().toarray(), ref, atol=1e-12)
    conn = kneighbors_graph(X, 5, include_self=False)
    np.testing.assert_array_equal(g.W.toarray(), conn.maximum(conn.T).toarray())


# ---------------------------------------------------------------- build_graph and specs

def test_k_too_large_is_rejected(X):
    with pytest.raises(GraphError, match="maximum allowed k is 79"):
        build_graph(X, {"kind": "knn", "k": 80})
    with pytest.raises(GraphError, match="maximum allowed k is 79"):
        build_graph(X, {"kind": "lle", "k": 100})


def test_nan_features_rejected(X):
    Xn = X.copy()
    Xn[2, 1] = np.nan
    with pytest.raises(DatasetError, match="NaN"):
        build_graph(Xn, {"kind": "knn", "k": 3})


@pytest.mark.parametrize("spec, match", [
    ({"kind": "kmeans"}, r"kind='kmeans'.*allowed values: \['knn', 'lle', 'precomputed'\]"),
    ({"kind": "knn", "weights": "gauss"}, r"weights='gauss'.*\['binary', 'heat', 'self_tuning', 'gaussian_kth'\]"),
    ({"kind": "knn", "symmetrize": "min"}, r"symmetrize='min'.*\['max', 'mean', 'mutual'\]"),
    ({"kind": "knn", "laplacian": "lle"}, r"laplacian='lle'.*'random_walk'"),
    ({"kind": "knn", "sigma": -1.0}, "sigma=-1.0"),
    ({"kind": "knn", "weights": "binary", "sigma": 1.0}, r"unknown key\(s\) \['sigma'\]"),
    ({"kind": "knn", "k": 0}, "k must be an integer >= 1"),
    ({"kind": "knn", "power": 1.5}, "laplacian_power must be an integer >= 1"),
    ({"kind": "knn", "laplacian_power": 0}, "laplacian_power must be an integer >= 1"),
    ({"kind": "knn", "power": 2, "laplacian_power": 2}, "give laplacian_power only"),
    ({"kind": "lle", "reg": -1}, "reg must be"),
])
def test_validate_graph_spec_errors(spec, match):
    with pytest.raises(ConfigError, match=match):
        validate_graph_spec(spec)


def test_validate_graph_spec_defaults():
    assert validate_graph_spec({"kind": "knn"}) == {
        "kind": "knn", "k": 10, "weights": "heat", "sigma": "mean_knn_distance",
        "symmetrize": "max", "laplacian": "normalized", "laplacian_power": 1}
    assert validate_graph_spec({"kind": "knn", "weights": "self_tuning"})["k_st"] == 7
    assert validate_graph_spec({"kind": "lle"})["laplacian"] == "lle"
    # the solvers' name for L^p; power is accepted as its old name
    assert validate_graph_spec({"kind": "knn", "power": 3})["laplacian_power"] == 3
    assert "power" not in validate_graph_spec({"kind": "knn", "power": 3})


def test_precomputed_symmetrizes_and_drops_diagonal():
    A = sp.csr_matrix(np.array([[5, 1, 0], [0, 0, 2], [0, 0, 1]], float))
    g = build_graph(spec={"kind": "precomputed", "laplacian": "unnormalized", "laplacian_power": 2}, W=A)
    np.testing.assert_array_equal(g.W.toarray(), [[0, 1, 0], [1, 0, 2], [0, 2, 0]])
    assert g.laplacian_power == 2 and g.X is None
    with pytest.raises(ConfigError, match="needs an adjacency"):
        build_graph(spec={"kind": "precomputed"})
    with pytest.raises(GraphError, match="square"):
        build_graph(spec={"kind": "precomputed"}, W=sp.csr_matrix((2, 3)))
    with pytest.raises(GraphError, match="non-negative"):
        build_graph(spec={"kind": "precomputed"}, W=-A)


def test_graph_is_symmetric_and_deterministic(X):
    for sym in ("max", "mean", "mutual"):
        g = build_graph(X, {"kind": "knn", "k": 7, "symmetrize": sym})
        assert abs(g.W - g.W.T).max() == 0 and g.W.diagonal().sum() == 0
        g2 = build_graph(X, {"kind": "knn", "k": 7, "symmetrize": sym})
        assert (g.W != g2.W).nnz == 0


def test_vectorized_build_scales(X):
    """10-NN heat graph on 10,000 x 64 points: structure checks only (runs in about a second)."""
    Xb = np.random.default_rng(2).normal(size=(10_000, 64))
    g = build_graph(Xb, {"kind": "knn", "k": 10})
    assert g.n_nodes == 10_000
    assert np.all(np.diff(g.W.indptr) >= 10)
    assert 10 * 10_000 <= g.W.nnz <= 20 * 10_000
    assert abs(g.W - g.W.T).max() == 0


def test_schema_graph_bounds_are_the_declared_ones():
    """gssl.graphs.spec declares each graph key's bounds once; the schema's copies (which give the
    config check's key-path messages) must say the same and hold no defaults."""
    import yaml

    from gssl.graphs.spec import BOUNDS
    from gssl.pipeline.config import schema_text

    props = yaml.safe_load(schema_text())["properties"]["graphs"]["additionalProperties"]["properties"]
    words = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
    for key, node in props.items():
        node = next((alt for alt in node.get("oneOf", []) if "type" in alt), node)  # sigma: number or rule
        assert "default" not in props[key], key
        if key in BOUNDS:
            assert {w: node[w] for w in words if w in node} == BOUNDS[key].schema(), key
    assert set(BOUNDS) <= set(props)
