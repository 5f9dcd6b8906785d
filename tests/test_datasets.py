"""Dataset registry, parsers (against the real data mirror), generators, views and the dataset file."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import norm

from gssl.datasets import (Dataset, fetch, fetch_and_save, get_spec, list_datasets, load, load_dataset,
                           save_dataset, select)
from gssl.errors import CacheError, ConfigError, DatasetError
from gssl.store.hashing import array_fingerprint

# name -> (n, d, class counts (None: check only C), dtype, n_train)
EXPECTED = {
    "usps": (9298, 256, [1553, 1269, 929, 824, 852, 716, 834, 792, 708, 821], np.float64, 7291),
    "uspst": (2007, 256, [327, 273, 206, 178, 196, 140, 174, 173, 160, 180], np.float64, None),
    "g50c_sindhwani": (550, 50, [275, 275], np.float64, None),
    "pcmac": (1946, 7511, [961, 985], np.float64, None),
    "coil20": (1440, 1024, [72] * 20, np.float64, None),
    "optdigits": (5620, 64, [554, 571, 557, 572, 568, 558, 558, 566, 554, 562], np.float64, 3823),
    "pendigits": (10992, 16, [1143, 1143, 1144, 1055, 1144, 1055, 1056, 1142, 1055, 1055], np.float64, 7494),
    "mnist_test": (10000, 784, [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009], np.float32, None),
    "fashion_mnist": (70000, 784, [7000] * 10, np.float32, 60000),
    "yaleb32": (2414, 1024, None, np.float64, None),
    "20news": (19934, None, None, None, None),
}


def test_registry_lists_every_dataset():
    mirror_names = {n for n in list_datasets() if get_spec(n).kind == "mirror"}
    assert mirror_names == set(EXPECTED)
    assert {"digits", "g50c", "two_moons", "four_moons"} <= set(list_datasets())


def test_unknown_dataset_lists_known_names():
    with pytest.raises(ConfigError, match="unknown dataset 'nope'.*usps.*yaleb32"):
        get_spec("nope")
    with pytest.raises(ConfigError, match="known datasets"):
        load("nope")


@pytest.mark.realdata
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_mirror_dataset_parses(name, mirror):
    n, d, counts, dtype, n_train = EXPECTED[name]
    ds = load(name, mirror=mirror)  # reads the mirror in place; load() checks the fingerprint
    spec = get_spec(name)
    assert ds.name == name and ds.fingerprint == spec.fingerprint
    assert ds.y.dtype == np.int64 and ds.y.shape == (n,)
    assert ds.n_classes == spec.n_classes and ds.y.min() == 0 and ds.y.max() == ds.n_classes - 1
    if counts is not None:
        assert ds.class_counts().tolist() == counts
    assert ds.meta.get("n_train") == n_train
    if d is not None:
        assert ds.X.shape == (n, d) and ds.X.dtype == dtype


@pytest.mark.realdata
def test_class_names_and_label_conventions(mirror):
    g = load("g50c_sindhwani", mirror=mirror)
    assert g.classes.tolist() == ["-1", "1"]
    coil = load("coil20", mirror=mirror)
    assert coil.classes.tolist() == [str(i) for i in range(1, 21)]  # 1-based object ids, y = id - 1
    yale = load("yaleb32", mirror=mirror)
    counts = dict(zip(yale.classes, yale.class_counts()))
    assert counts["11"] == 60 and counts["12"] == 59 and counts["1"] == 64 and yale.X.max() == 255
    assert load("uspst", mirror=mirror).classes.tolist() == [str(i) for i in range(10)]


@pytest.mark.realdata
def test_pcmac_sparse_and_20news_graph(mirror):
    pc = load("pcmac", mirror=mirror)
    assert sp.isspmatrix_csr(pc.X) and pc.X.nnz == 106221
    np.testing.assert_allclose(sp.linalg.norm(pc.X, axis=1), 1.0, atol=1e-6)
    news = load("20news", mirror=mirror)
    assert news.X is None and sp.isspmatrix_csr(news.W) and news.W.nnz == 144632
    assert abs(news.W - news.W.T).nnz == 0 and news.W.diagonal().sum() == 0


@pytest.mark.realdata
def test_usps_matches_zip_form_and_optdigits_test_is_sklearn_digits(mirror):
    import gzip

    usps = load("usps", mirror=mirror)
    with gzip.open(mirror / "usps" / "zip.test.gz") as fh:
        z = np.loadtxt(fh)
    np.testing.assert_array_equal(usps.y[7291:], z[:, 0].astype(int))
    np.testing.assert_allclose(usps.X[7291:], (z[:, 1:] + 1) / 2, atol=1e-6)
    opt, dig = load("optdigits", mirror=mirror), load("digits")
    np.testing.assert_array_equal(opt.X[3823:], dig.X)
    np.testing.assert_array_equal(opt.y[3823:], dig.y)


@pytest.mark.realdata
def test_fingerprint_mismatch_is_dataset_error(mirror):
    spec = dataclasses.replace(get_spec("g50c_sindhwani"), fingerprint="0" * 64)
    with pytest.raises(DatasetError, match="fingerprint"):
        load("g50c_sindhwani", mirror=mirror, spec=spec)


@pytest.mark.realdata
def test_load_fetches_into_raw_dir(tmp_path, mirror):
    paths = fetch("optdigits", tmp_path / "raw", mirror=mirror, public=False)
    assert sorted(paths) == ["optdigits.tes", "optdigits.tra"]
    assert all(p.parent == tmp_path / "raw" for p in paths.values())
    assert load("optdigits", tmp_path / "raw", mirror=mirror).X.shape == (5620, 64)
    assert fetch("digits", tmp_path / "x") == {} and fetch("g50c", tmp_path / "x") == {}


def test_load_without_raw_dir_or_mirror_explains(monkeypatch):
    monkeypatch.delenv("GSSL_DATA_MIRROR", raising=False)
    with pytest.raises(DatasetError, match="raw_dir"):
        load("uspst")


# --- generators ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["g50c", "two_moons", "four_moons"])
def test_generators_are_deterministic(name):
    a, b = load(name, random_state=3), load(name, params={"random_state": 3})
    c = load(name, random_state=4)
    assert a.fingerprint == b.fingerprint != c.fingerprint
    g = load(name, random_state=np.random.default_rng(3))
    assert g.X.shape == a.X.shape and g.X.dtype == np.float64


def test_generator_params_and_errors():
    ds = load("two_moons", params={"n_samples": 101, "n_features": 7, "noise": 0.0})
    assert ds.X.shape == (101, 7) and sorted(ds.class_counts()) == [50, 51]
    with pytest.raises(ConfigError, match="unknown params.*allowed"):
        load("two_moons", params={"n_sample": 10})
    with pytest.raises(ConfigError, match="takes no params"):
        load("usps", params={"n": 1})  # refused before any file is looked for


def test_g50c_bayes_error_is_five_percent():
    ds = load("g50c")
    assert ds.X.shape == (550, 50) and ds.class_counts().tolist() == [275, 275]
    big = load("g50c", params={"n_samples": 40000}, random_state=1)
    e = np.ones(50) / np.sqrt(50)
    pred = (big.X @ e > 0).astype(int)  # Bayes rule for equal priors, unit covariance, means ±mu e
    assert abs(np.mean(pred != big.y) - 0.05) < 0.006
    gap = big.X[big.y == 1].mean(0) - big.X[big.y == 0].mean(0)
    np.testing.assert_allclose(gap, 2 * norm.ppf(0.95) * e, atol=0.05)


def _circumradius(P):
    a = np.linalg.norm(P[:, 1] - P[:, 2], axis=1)
    b = np.linalg.norm(P[:, 0] - P[:, 2], axis=1)
    c = np.linalg.norm(P[:, 0] - P[:, 1], axis=1)
    s = (a + b + c) / 2
    return a * b * c / (4 * np.sqrt(s * (s - a) * (s - b) * (s - c)))


@pytest.mark.parametrize("n_moons", [2, 4])
def test_moons_are_unit_half_circles_in_a_rotated_plane(n_moons):
    name = "two_moons" if n_moons == 2 else "four_moons"
    ds = load(name, params={"n_samples": 400, "n_features": 30, "noise": 0.0}, random_state=0)
    assert ds.n_classes == n_moons and ds.class_counts().tolist() == [400 // n_moons] * n_moons
    s = np.linalg.svd(ds.X, compute_uv=False)
    assert s[2] < 1e-9 * s[0] and s[1] > 0.1 * s[0]  # all points in one 2-D plane through 0
    for k in range(n_moons):
        P = ds.X[ds.y == k][:30].reshape(10, 3, -1)
        np.testing.assert_allclose(_circumradius(P), 1.0, rtol=1e-6)
    noisy = load(name, params={"n_samples": 400, "n_features": 30, "noise": 0.1}, random_state=0)
    resid = noisy.X - ds.X
    assert abs(resid.std() - 0.1) < 0.01


# --- views --------------------------------------------------------------------------------------

def _toy():
    y = np.array([0, 1, 2, 3, 2, 1, 0, 3])
    X = np.arange(16.0).reshape(8, 2)
    W = sp.csr_matrix(np.ones((8, 8)) - np.eye(8)) * sp.diags(np.arange(8.0))
    return Dataset("toy", X, y, np.array(["a", "b", "c", "d"]), W=sp.csr_matrix(W), meta={"n_train": 5})


def test_select_classes_relabels_in_given_order():
    ds = _toy()
    v = select(ds, classes=[3, "b"])
    np.testing.assert_array_equal(v.y, [1, 0, 1, 0])  # points 1, 3, 5, 7 in order
    np.testing.assert_array_equal(v.X, ds.X[[1, 3, 5, 7]])
    np.testing.assert_array_equal(v.W.toarray(), ds.W.toarray()[np.ix_([1, 3, 5, 7], [1, 3, 5, 7])])
    assert v.classes.tolist() == ["d", "b"] and v.meta["view"] == {"classes": [3, 1]}
    assert "n_train" not in v.meta and v.meta["parent_n_samples"] == 8


def test_select_groups_merges():
    v = select(_toy(), groups=[[0, 2], [1]])
    np.testing.assert_array_equal(v.y, [0, 1, 0, 0, 1, 0])
    assert v.classes.tolist() == ["a+c", "b"]


@pytest.mark.realdata
def test_select_groups_usps_b(mirror):
    usps = load("uspst", mirror=mirror)
    b = select(usps, groups=[list(range(5)), list(range(5, 10))])
    assert b.n_samples == 2007 and b.class_counts().tolist() == [1180, 827]
    np.testing.assert_array_equal(b.y, (usps.y >= 5).astype(int))


@pytest.mark.parametrize("kw", [{}, {"classes": [0], "groups": [[1]]}, {"classes": [0, 0]},
                                {"classes": [7]}, {"classes": ["z"]}, {"groups": [[0], []]}])
def test_select_rejects_bad_views(kw):
    with pytest.raises(ConfigError):
        select(_toy(), **kw)


# --- dataset file -------------------------------------------------------------------------------

@pytest.mark.realdata
@pytest.mark.parametrize("name", ["pcmac", "20news", "coil20"])
def test_save_load_roundtrip(tmp_path, name, mirror):
    ds = load(name, mirror=mirror)
    save_dataset(tmp_path / "d.h5", ds, {"dataset": name})
    back = load_dataset(tmp_path / "d.h5", expect_params={"dataset": name})
    assert back.name == name and back.fingerprint == ds.fingerprint
    assert back.classes.tolist() == ds.classes.tolist() and back.meta == ds.meta
    assert (back.X is None) == (ds.X is None) and sp.issparse(back.X) == sp.issparse(ds.X)
    with pytest.raises(CacheError):
        load_dataset(tmp_path / "d.h5", expect_params={"dataset": "other"})


def test_fetch_and_save_with_view(tmp_path):
    params = {"n_samples": 80, "n_features": 5, "random_state": 2}
    ds = fetch_and_save("four_moons", None, tmp_path / "m.h5", params=params,
                        view={"classes": [1, 3]})
    expect = {"dataset": "four_moons", "params": params, "view": {"classes": [1, 3]}}
    back = load_dataset(tmp_path / "m.h5", expect_params=expect)
    assert back.X.shape == (40, 5) and back.classes.tolist() == ["1", "3"]
    assert back.fingerprint == ds.fingerprint == array_fingerprint(ds.X, ds.y, None)


def test_generators_refuse_a_seed_that_is_not_a_non_negative_integer_and_a_size_beyond_memory():
    """Refused with the parameter's name before anything is drawn or allocated (a ValueError or
    MemoryError traceback before)."""
    from gssl.datasets.synthetic import g50c, physical_memory, two_moons
    from gssl.errors import ConfigError

    for bad in ("zero", 1.5, -1, True):
        with pytest.raises(ConfigError, match=r"two_moons: random_state must be an integer >= 0 \(a seed"):
            two_moons(n_samples=20, random_state=bad)
    assert two_moons(n_samples=20, random_state=np.random.default_rng(3)).X.shape == (20, 100)
    with pytest.raises(ConfigError, match=r"g50c: n_samples=1000000000000 x n_features=50 needs about "
                                          r"1,200 TB of memory to generate \(float64\), more than the "
                                          r".* this machine has; lower n_samples or n_features"):
        g50c(n_samples=10**12)
    assert physical_memory() > 10**8
