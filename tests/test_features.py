"""Feature chains against scikit-learn references; the features cache."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import PCA
from sklearn.preprocessing import MinMaxScaler, StandardScaler, normalize
from sklearn.random_projection import GaussianRandomProjection, SparseRandomProjection

from gssl.errors import CacheError, ConfigError, DatasetError
from gssl.features import (STEP_CLASSES, Shape, apply_chain, chain_output, load_features, save_features,
                           step_schemas, validate_chain)
from gssl.store.h5io import write_h5


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).normal(size=(60, 12)) * np.arange(1, 13)


@pytest.fixture(scope="module")
def Xs():
    return sp.random(50, 30, density=0.2, format="csr", random_state=1, dtype=np.float64)


def test_standardize_dense_and_sparse(X, Xs):
    np.testing.assert_allclose(apply_chain(X, ["standardize"]), StandardScaler().fit_transform(X))
    out = apply_chain(Xs, ["standardize"])
    assert sp.issparse(out)  # sparse input is scaled only, never centred
    ref = StandardScaler(with_mean=False).fit_transform(Xs)
    np.testing.assert_allclose(out.toarray(), ref.toarray())
    with pytest.raises(ConfigError, match="with_mean"):
        apply_chain(Xs, [{"standardize": {"with_mean": True}}])


def test_minmax(X, Xs):
    np.testing.assert_allclose(apply_chain(X, ["minmax"]), MinMaxScaler().fit_transform(X))
    with pytest.warns(UserWarning, match="densifies"):
        out = apply_chain(Xs, [{"minmax": {"feature_range": [-1, 1]}}])
    np.testing.assert_allclose(out, MinMaxScaler((-1, 1)).fit_transform(Xs.toarray()))


def test_normalize_with_scale(X, Xs):
    out = apply_chain(X, [{"normalize": {"norm": "l2", "scale": 5.0}}])
    np.testing.assert_allclose(out, 5.0 * normalize(X))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 5.0)
    np.testing.assert_allclose(apply_chain(X, [{"normalize": "l1"}]), normalize(X, norm="l1"))
    outs = apply_chain(Xs, [{"normalize": {"scale": 2.0}}])
    assert sp.issparse(outs)
    np.testing.assert_allclose(outs.toarray(), 2.0 * normalize(Xs).toarray())


def test_pca_matches_sklearn_and_sparse_pca_is_true_pca(X, Xs):
    out = apply_chain(X, [{"pca": {"n_components": 5}}], random_state=3)
    np.testing.assert_allclose(out, PCA(5, random_state=3).fit_transform(X), atol=1e-10)
    dense_ref = PCA(4, svd_solver="full").fit_transform(Xs.toarray())
    outs = apply_chain(Xs, [{"pca": {"n_components": 4}}])
    assert isinstance(outs, np.ndarray) and outs.shape == (50, 4)
    signs = np.sign(np.sum(outs * dense_ref, axis=0))  # eigenvector signs are arbitrary
    np.testing.assert_allclose(outs * signs, dense_ref, atol=1e-8)
    with pytest.raises(ConfigError, match="maximum 12"):
        apply_chain(X, [{"pca": {"n_components": 13}}])


def test_random_projections(X, Xs):
    out = apply_chain(X, [{"random_projection": {"kind": "gaussian", "n_components": 7}}], random_state=4)
    np.testing.assert_allclose(out, GaussianRandomProjection(7, random_state=4).fit_transform(X))
    outs = apply_chain(Xs, [{"random_projection": {"kind": "sparse", "n_components": 9}}], random_state=4)
    assert sp.issparse(outs)
    ref = SparseRandomProjection(9, random_state=4).fit_transform(Xs)
    np.testing.assert_allclose(outs.toarray(), ref.toarray())


def test_chain_composes_in_order_and_is_deterministic(X):
    steps = ["standardize", {"pca": {"n_components": 6}}, {"normalize": {"norm": "l2", "scale": 3.0}}]
    ref = 3.0 * normalize(PCA(6, random_state=0).fit_transform(StandardScaler().fit_transform(X)))
    a = apply_chain(X, steps)
    np.testing.assert_allclose(a, ref, atol=1e-10)
    np.testing.assert_array_equal(a, apply_chain(X, steps))
    rp = [{"random_projection": {"kind": "gaussian", "n_components": 5}}]
    g1 = apply_chain(X, rp, random_state=np.random.default_rng(7))
    g2 = apply_chain(X, rp, random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(g1, g2)
    assert not np.allclose(apply_chain(X, rp, random_state=1), apply_chain(X, rp, random_state=2))
    assert apply_chain(X, []).dtype == np.float64


def test_nan_and_inf_rejected(X, Xs):
    Xn = X.copy()
    Xn[0, 0], Xn[3, 2] = np.nan, np.inf
    with pytest.raises(DatasetError, match="2 NaN/inf"):
        apply_chain(Xn, ["standardize"])
    Xb = Xs.copy()
    Xb.data[0] = np.nan
    with pytest.raises(DatasetError, match="1 NaN/inf"):
        apply_chain(Xb, [])


@pytest.mark.parametrize("steps, match", [
    (["whiten"], "unknown step 'whiten'.*allowed steps"),
    ([{"pca": {"n_components": 5, "foo": 1}}], r"unknown parameter\(s\) \['foo'\]"),
    ([{"pca": {}}], "needs n_components"),
    ([{"normalize": {"norm": "l3"}}], "norm must be one of"),
    ([{"random_projection": {"kind": "dense", "n_components": 3}}], "kind must be one of"),
    ([{"pca": {"n_components": 2}, "minmax": {}}], "exactly one key"),
])
def test_validate_chain_errors(steps, match):
    with pytest.raises(ConfigError, match=match):
        validate_chain(steps)


def test_features_cache_round_trip(tmp_path, X, Xs):
    y = np.arange(60) % 3
    p = tmp_path / "f.h5"
    save_features(p, X, y, {"prep": "raw"})
    X2, y2 = load_features(p, expect_params={"prep": "raw"})
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)
    ps = tmp_path / "fs.h5"
    save_features(ps, Xs, np.zeros(50, dtype=np.int64), {})
    Xs2, _ = load_features(ps)
    assert sp.issparse(Xs2) and (Xs2 != Xs).nnz == 0
    with pytest.raises(CacheError, match=str(p)):
        load_features(p, expect_params={"prep": "other"})
    other = tmp_path / "g.h5"
    write_h5(other, "graph", {"W": sp.identity(3, format="csr")}, {})
    with pytest.raises(CacheError, match="expected 'features'"):
        load_features(other)
    with pytest.raises(DatasetError):
        save_features(tmp_path / "bad.h5", X, y[:10], {})


CHAINS = [[], ["standardize"], ["minmax"], [{"normalize": "l1"}], [{"pca": {"n_components": 4}}],
          [{"random_projection": {"n_components": 5}}],
          [{"random_projection": {"kind": "sparse", "n_components": 6}}],
          ["standardize", {"pca": {"n_components": 3, "whiten": True}}, {"normalize": "l2"}]]


@pytest.mark.parametrize("steps", CHAINS)
@pytest.mark.parametrize("sparse", [False, True])
def test_the_config_checks_shape_rule_is_what_the_chain_gives(steps, sparse, X, Xs):
    """chain_output (what gssl config check knows before any job) agrees with apply_chain's
    output: its width and whether it is sparse."""
    data = Xs if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # minmax densifies
        out = apply_chain(data, steps)
    told = chain_output(steps, Shape(data.shape[0], data.shape[1], sparse))
    assert (told.n, told.d, told.sparse) == (data.shape[0], out.shape[1], sp.issparse(out))


@pytest.mark.parametrize("steps, shape", [
    ([{"pca": {"n_components": 13}}], (60, 12)),
    ([{"pca": {"n_components": 30}}], (50, 30)),   # sparse: arpack needs k < min(n, d)
    ([{"random_projection": {"n_components": 13}}], (60, 12)),
    ([{"standardize": {"with_mean": True}}], (50, 30)),
])
def test_the_config_check_refuses_in_the_jobs_words(steps, shape, X, Xs):
    data = X if shape == X.shape else Xs
    with pytest.raises(ConfigError) as job:
        apply_chain(data, steps)
    with pytest.raises(ConfigError) as check:
        chain_output(steps, Shape(*shape, sp.issparse(data)))
    assert str(check.value) == str(job.value)


def test_the_schema_and_the_docs_read_each_step_from_its_class():
    from gssl.pipeline.config import load_schema

    entries = load_schema()["$defs"]["prep_step"]["oneOf"][1]["properties"]
    assert entries == step_schemas() and list(entries) == list(STEP_CLASSES.classes)
    assert entries["normalize"]["oneOf"][1]["properties"]["scale"] == {
        "description": "Multiply the normalized points by this factor.", "type": "number",
        "exclusiveMinimum": 0, "default": 1.0}
    with pytest.raises(ConfigError, match="scale must be a positive number"):
        validate_chain([{"normalize": {"scale": 0}}])


# -- learned features: a tiny network (the defaults are Calder et al.'s 784-400-20, 100 epochs) --
TINY = {"hidden": [16], "latent": 3, "epochs": 3, "batch_size": 32}


@pytest.fixture(scope="module")
def pixels():
    rng = np.random.default_rng(3)
    centres = rng.random((3, 20))
    return np.clip(centres[np.arange(90) % 3] + 0.05 * rng.normal(size=(90, 20)), 0, 1) * 255


@pytest.mark.parametrize("step", ["vae", "autoencoder"])
def test_a_learned_step_is_seeded_and_keeps_its_network_and_losses(step, pixels):
    import torch
    np_state, torch_state = np.random.get_state()[1].copy(), torch.random.get_rng_state()
    runs = []
    for seed in (0, 0, 1):
        kept = {}
        runs.append(apply_chain(pixels, [{step: TINY}], random_state=seed, artifacts=kept))
    assert runs[0].shape == (90, 3) and np.array_equal(runs[0], runs[1])  # same seed, same bits
    assert not np.allclose(runs[0], runs[2])
    assert kept["step0.%s.losses" % step].shape == (3,)
    assert kept["step0.%s.weights.encoder.0.weight" % step].shape == (16, 20)
    assert (f"step0.{step}.weights.logvar.weight" in kept) == (step == "vae")
    # the global generators are not touched
    assert np.array_equal(np.random.get_state()[1], np_state)
    assert torch.equal(torch.random.get_rng_state(), torch_state)
    assert chain_output([{step: TINY}], Shape(90, 20, False)).d == 3


def test_a_learned_step_separates_clusters_it_was_not_told_of(pixels):
    Z = apply_chain(pixels, [{"vae": {**TINY, "epochs": 40}}])
    y = np.arange(90) % 3
    centroids = np.stack([Z[y == c].mean(axis=0) for c in range(3)])
    nearest = np.argmin(((Z[:, None] - centroids[None]) ** 2).sum(-1), axis=1)
    assert np.mean(nearest == y) >= 0.95


def test_a_learned_step_refuses_what_it_cannot_train_on(pixels, monkeypatch):
    with pytest.raises(ConfigError, match=r"bce needs features in \[0, 1\].*reconstruction: mse"):
        apply_chain(pixels - 128, [{"vae": {**TINY, "input_scale": "none"}}])
    with pytest.raises(ConfigError, match="hidden must be a list of positive integers"):
        validate_chain([{"vae": {"hidden": [0]}}])
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(ConfigError, match=r"PyTorch, which is not installed: pip install 'gssl\[learned\]'"):
        validate_chain(["vae"])


def test_a_learned_steps_cache_is_checksummed_with_its_network(tmp_path, pixels):
    import h5py

    from gssl.features import load_artifacts

    kept = {}
    Z = apply_chain(pixels, [{"vae": TINY}], artifacts=kept)
    path = tmp_path / "f.h5"
    save_features(path, Z, np.arange(90) % 3, {"steps": [{"vae": TINY}], "seed": 0}, artifacts=kept)
    back = load_artifacts(path)
    assert sorted(back) == sorted(kept) and np.array_equal(back["step0.vae.losses"], kept["step0.vae.losses"])
    with h5py.File(path, "r+") as fh:
        fh["step0.vae.weights.mean.bias"][0] += 1.0
    with pytest.raises(CacheError):
        load_features(path)
