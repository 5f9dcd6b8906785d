"""Graph cache: round trip and rejection of foreign, truncated, wrong-kind and invalid files."""

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

from gssl.errors import CacheError
from gssl.features import save_features
from gssl.graphs import build_graph, load_graph, save_graph
from gssl.store.h5io import write_h5


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(3).normal(size=(50, 4))


@pytest.mark.parametrize("spec", [
    {"kind": "knn", "k": 5, "laplacian": "random_walk", "power": 2},
    {"kind": "lle", "k": 6},
])
def test_round_trip(tmp_path, X, spec):
    g = build_graph(X, spec)
    p = tmp_path / "g.h5"
    params = {"graph": spec, "dataset": "toy"}
    save_graph(p, g, params, inputs={"features": "abc"})
    h = load_graph(p, expect_params=params)
    assert (h.W != g.W).nnz == 0 and h.W.dtype == np.float64
    assert (g.V is None and h.V is None) or (h.V != g.V).nnz == 0
    assert h.laplacian_kind == g.laplacian_kind and h.laplacian_power == g.laplacian_power
    assert h.params == g.params and h.X is None
    np.testing.assert_allclose(h.laplacian().toarray(), g.laplacian().toarray())
    with h5py.File(p, "r") as fh:
        assert fh.attrs["n_nodes"] == 50 and fh.attrs["nnz"] == g.W.nnz
        np.testing.assert_allclose(fh["degrees"][()], g.degrees())


def test_params_mismatch_names_file_and_fix(tmp_path, X):
    p = tmp_path / "g.h5"
    save_graph(p, build_graph(X, {"kind": "knn", "k": 3}), {"k": 3})
    with pytest.raises(CacheError, match=rf"{p}.*forcerun graph"):
        load_graph(p, expect_params={"k": 4}, rule="graph")


def test_foreign_hdf5_rejected(tmp_path):
    p = tmp_path / "foreign.h5"
    with h5py.File(p, "w") as fh:
        fh["W"] = np.random.default_rng(0).normal(size=(4, 4))
    with pytest.raises(CacheError, match=rf"{p}.*not written by gssl.*rm {p}"):
        load_graph(p)


def test_truncated_file_rejected(tmp_path, X):
    p = tmp_path / "g.h5"
    save_graph(p, build_graph(X, {"kind": "knn", "k": 4}), {})
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(CacheError, match=rf"{p}.*(truncated|cannot read).*rm {p}"):
        load_graph(p)


def test_wrong_kind_rejected(tmp_path, X):
    p = tmp_path / "f.h5"
    save_features(p, X, np.zeros(50, dtype=np.int64), {})
    with pytest.raises(CacheError, match=rf"{p}.*'features' file, expected 'graph'"):
        load_graph(p)


def _raw_graph_file(path, W, **attrs):
    W = sp.csr_matrix(W)
    extra = {"laplacian_kind": "normalized", "laplacian_power": 1, **attrs}
    write_h5(path, "graph", {"W": W, "degrees": np.asarray(W.sum(1)).ravel()}, {}, extra_attrs=extra)


def test_asymmetric_or_non_square_w_rejected(tmp_path):
    p = tmp_path / "asym.h5"
    _raw_graph_file(p, np.array([[0, 1.0], [0, 0]]))
    with pytest.raises(CacheError, match=rf"{p}: W is not symmetric.*rm {p}"):
        load_graph(p)
    q = tmp_path / "rect.h5"
    _raw_graph_file(q, np.ones((2, 3)))
    with pytest.raises(CacheError, match=rf"{q}: W is not a square"):
        load_graph(q)
    r = tmp_path / "kind.h5"
    _raw_graph_file(r, np.array([[0, 1.0], [1, 0]]), laplacian_kind="lle")
    with pytest.raises(CacheError, match="invalid laplacian_kind 'lle'"):
        load_graph(r)


def test_missing_file(tmp_path):
    with pytest.raises(CacheError, match="does not exist"):
        load_graph(tmp_path / "nope.h5")
