"""Approximate kNN backends (HNSW through faiss, NN-descent through pynndescent): recall against
exact search measured and stored, min_recall enforced, validation of the spec keys."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits

from gssl.errors import ConfigError, GraphError
from gssl.graphs import build_graph, knn_distances, knn_recall, knn_search, validate_graph_spec

SPEC = {"kind": "knn", "k": 10, "weights": "gaussian_kth", "symmetrize": "mean"}


@pytest.fixture(scope="module")
def X():
    return load_digits().data.astype(np.float64)


def edge_overlap(A, B) -> float:
    A, B = (sp.csr_matrix(M) != 0 for M in (A, B))
    return A.multiply(B).nnz / A.nnz


def test_knn_recall_is_one_for_exact_lists_and_counts_misses(X):
    _, idx = knn_distances(X, 10)
    assert knn_recall(X, idx, n_queries=300) == (1.0, 300)
    wrong = idx.copy()
    wrong[:, 5:] = (wrong[:, 5:] + 97) % len(X)  # half of every list replaced by far points
    recall, _ = knn_recall(X, wrong, n_queries=len(X))
    assert 0.49 < recall < 0.52


def test_hnsw_graph_finds_the_exact_neighbours_and_records_its_recall(X):
    exact = build_graph(X, SPEC)
    g = build_graph(X, {**SPEC, "backend": "hnsw"})
    assert g.params["knn_recall"] >= 0.99 and g.params["knn_recall_queries"] == 1000
    assert edge_overlap(exact.W, g.W) > 0.99
    dist, idx = knn_search(X, 10, "hnsw")
    d_exact, _ = knn_distances(X, 10)
    assert not np.any(idx == np.arange(len(X))[:, None])  # itself excluded
    np.testing.assert_allclose(np.sort(dist, 1)[:, 0], d_exact[:, 0], rtol=1e-4)  # float32 search


def test_an_approximate_graph_below_min_recall_fails_naming_the_fix(X):
    with pytest.raises(GraphError, match=r"below min_recall=1.0: use backend exact"):
        build_graph(X, {**SPEC, "backend": "hnsw", "min_recall": 1.0, "recall_queries": 1797})


@pytest.mark.slow
def test_nndescent_graph_is_seeded_and_close_to_exact(X):
    """pynndescent compiles its numba kernels on first use (tens of seconds): one test only."""
    exact = build_graph(X, SPEC)
    a = build_graph(X, {**SPEC, "backend": "nndescent"})
    b = build_graph(X, {**SPEC, "backend": "nndescent"})
    assert a.params["knn_recall"] >= 0.98 and edge_overlap(exact.W, a.W) > 0.98
    assert (a.W != b.W).nnz == 0  # the same graph from the same data: random_state is fixed


@pytest.mark.parametrize("spec,match", [
    ({"backend": "annoy"}, "backend='annoy' is not allowed"),
    ({"min_recall": 0.9}, "apply to an approximate backend"),
    ({"backend": "hnsw", "min_recall": 1.5}, r"min_recall must be a number in \(0, 1\]"),
    ({"backend": "hnsw", "recall_queries": 0}, "recall_queries must be an integer >= 1"),
])
def test_search_keys_are_validated(spec, match):
    with pytest.raises(ConfigError, match=match):
        validate_graph_spec({**SPEC, **spec})


def test_search_keys_stay_out_of_specs_that_do_not_name_them():
    assert "backend" not in validate_graph_spec(SPEC)  # the caches of existing configs keep their ids


def test_approximate_backends_refuse_sparse_features(X):
    with pytest.raises(GraphError, match="needs dense features"):
        knn_search(sp.csr_matrix(X), 10, "hnsw")
