"""Multiclass total variation clustering (issue #5): theorems of the paper, Algorithm 1's
invariants, the estimator and its clustering peers."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, spsolve
from sklearn.base import clone, is_clusterer
from sklearn.datasets import make_blobs
from sklearn.neighbors import kneighbors_graph

from gssl.errors import ConfigError, SolverError
from gssl.graphs.base import Graph
from gssl.metrics import purity
from gssl.optim.graph_ops import diffuse, gradient_norm_bound, gradient_operator
from gssl.optim.simplex import project_simplex
from gssl.optim.mtv_step import (balance, balance_subgradient, discrete_energy, lambda_median,
                                 mtv_energy, mtv_minimize, operator_norm)
from gssl.solvers import make_solver, solver_modules
from gssl.solvers.clustering import KMeansClustering, SpectralGraphClustering
from gssl.solvers.mtv import MTVClustering

from graph_helpers import knn_graph


def random_graph(n, density=0.3, seed=0, weighted=True):
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=density, random_state=seed, format="csr")
    if not weighted:
        A.data[:] = 1.0
    else:
        A.data = rng.uniform(0.1, 2.0, A.nnz)
    W = sp.triu(A, 1)
    return sp.csr_matrix(W + W.T)


def cliques(sizes, bridge=0.0):
    blocks = [np.ones((s, s)) - np.eye(s) for s in sizes]
    W = sp.lil_matrix(sp.block_diag(blocks))
    if bridge:  # one weak edge between consecutive cliques
        start = np.cumsum([0] + list(sizes))
        for a, b in zip(start[:-2], start[1:-1]):
            W[a, b] = W[b, a] = bridge
    return sp.csr_matrix(W)


def on_simplex(F, atol=1e-10):
    return bool(np.all(F >= -atol) and np.allclose(F.sum(axis=1), 1.0, atol=1e-9))


# -- definitions and theorems -----------------------------------------------------------------
def test_lambda_median_is_the_k_plus_1_st_largest():
    rng = np.random.default_rng(0)
    for n, lam in [(10, 1.0), (11, 2.0), (37, 9.0), (5, 4.0)]:
        f = rng.normal(size=n)
        k = int(np.floor(n / (lam + 1)))
        assert lambda_median(f, lam) == np.sort(f)[::-1][k]
        F = rng.normal(size=(n, 3))
        np.testing.assert_array_equal(lambda_median(F, lam), np.sort(F, axis=0)[::-1][k])


@pytest.mark.parametrize("lam", [1.0, 3.0, 9.0])
def test_theorem1_indicator_ratio(lam):
    """||1_A||_TV / ||1_A - med||_{1,lambda} = 2 Cut(A, A^c) / min{lambda|A|, |A^c|}, where
    ||.||_TV of (3) sums over ordered pairs, i.e. twice the edge-once D-norm."""
    n = 40
    W = random_graph(n, seed=1)
    D = gradient_operator(W)
    rng = np.random.default_rng(2)
    Wd = W.toarray()
    for size in [1, 3, 7, 10, 20, 33, 39]:
        A = rng.choice(n, size, replace=False)
        f = np.zeros(n)
        f[A] = 1.0
        tv_sym = float(np.sum(Wd * np.abs(f[:, None] - f[None, :])))  # definition (3)
        cut = float(Wd[np.ix_(f == 1, f == 0)].sum())
        assert tv_sym == pytest.approx(2 * cut)
        assert 2 * np.abs(D @ f).sum() == pytest.approx(tv_sym)
        B = balance(f, lam)
        assert B == pytest.approx(min(lam * size, n - size))
        assert tv_sym / B == pytest.approx(2 * cut / min(lam * size, n - size))
        T, B2, E = mtv_energy(D, f[:, None], lam)
        assert E[0] == pytest.approx(cut / min(lam * size, n - size))


def test_theorem5_subgradient_inequality():
    rng = np.random.default_rng(3)
    for trial in range(200):
        n = int(rng.integers(3, 30))
        lam = float(rng.integers(1, 10))
        f = rng.normal(size=n)
        if trial % 2:  # many ties at the median
            f = np.round(f, 0)
        v = balance_subgradient(f, lam)
        assert abs(v.sum()) < 1e-9          # <v, 1> = 0
        assert np.all(v >= -1 - 1e-12) and np.all(v <= lam + 1e-12)
        Bf = balance(f, lam)
        for _ in range(20):
            g = rng.normal(size=n) * rng.choice([0.1, 1, 10]) + (np.round(rng.normal(size=n))
                                                                  if trial % 3 == 0 else 0)
            assert balance(g, lam) - Bf >= v @ (g - f) - 1e-9


def test_subgradient_columnwise_matches_vector():
    rng = np.random.default_rng(4)
    F = np.round(rng.normal(size=(25, 4)), 1)
    V = balance_subgradient(F, 3.0)
    for r in range(4):
        np.testing.assert_allclose(V[:, r], balance_subgradient(F[:, r], 3.0))


def test_discrete_energy_of_partition():
    W = cliques([5, 6, 7], bridge=0.5)
    D = gradient_operator(W)
    labels = np.repeat([0, 1, 2], [5, 6, 7])
    # each clique is cut by the bridge edges that leave it; lambda = 2, N = 18
    cuts = np.array([0.5, 1.0, 0.5])
    sizes = np.array([5, 6, 7])
    expected = float(np.sum(cuts / np.minimum(2 * sizes, 18 - sizes)))
    assert discrete_energy(D, labels, 3) == pytest.approx(expected)
    bad = labels.copy()
    bad[bad == 2] = 1  # an empty cluster has infinite energy
    assert discrete_energy(D, bad, 3) == np.inf


def test_operator_norm_and_diffusion():
    W = random_graph(30, seed=5)
    D = gradient_operator(W)
    s = np.linalg.svd(D.toarray(), compute_uv=False)[0]
    assert s <= operator_norm(D) <= 1.02 * s
    F = np.random.default_rng(0).random((30, 3))
    Lap = sp.diags(np.asarray(W.sum(1)).ravel()) - W
    ref = spsolve(sp.csc_matrix(sp.eye(30) + Lap), F)
    np.testing.assert_allclose(diffuse(W, F, max_iter=200, tol=1e-12), ref, rtol=1e-8, atol=1e-10)


def _raise(error):
    def eigsh(*args, **kwargs):
        raise error
    return eigsh


@pytest.mark.parametrize("failure", [
    ArpackNoConvergence("No convergence (1 iterations, 0/1 eigenvectors converged)", np.array([]),
                        np.zeros((0, 0))),
    ArpackError(-9999),  # ARPACK's error code for a failed Arnoldi factorization
], ids=["no_convergence", "arpack_error"])
def test_operator_norm_falls_back_to_the_bound_on_arpack_failure_and_says_so(monkeypatch, failure):
    D = gradient_operator(random_graph(30, seed=5))
    diagnostics = {}
    assert operator_norm(D, diagnostics=diagnostics) < gradient_norm_bound(D)
    assert diagnostics == {"norm_bound_fallback": 0.0}
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", _raise(failure))
    assert operator_norm(D, diagnostics=diagnostics) == gradient_norm_bound(D)
    assert diagnostics == {"norm_bound_fallback": 1.0}


def test_mtv_records_the_norm_fallback_in_its_fit_metrics(monkeypatch):
    W = cliques([15, 15, 15], bridge=1.0)
    y = np.full(45, -1)
    y[[3, 20, 40]] = [0, 1, 2]
    m = MTVClustering(random_state=0).fit(Graph(W=W), y)
    assert m.fit_metrics_["norm_bound_fallback"] == 0.0
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", _raise(ArpackNoConvergence("no", [], [])))
    m = MTVClustering(random_state=0).fit(Graph(W=W), y)
    assert m.fit_metrics_["norm_bound_fallback"] == 1.0  # logged as solver_norm_bound_fallback
    np.testing.assert_array_equal(m.labels_, np.repeat([0, 1, 2], 15))  # smaller steps, same result


@pytest.mark.parametrize("error", [ValueError("k must be less than ndim(A), k=1"),
                                   RuntimeError("not ARPACK's")])
def test_operator_norm_lets_errors_other_than_arpacks_through(monkeypatch, error):
    D = gradient_operator(random_graph(30, seed=5))
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", _raise(error))
    diagnostics = {}
    with pytest.raises(type(error)) as raised:
        operator_norm(D, diagnostics=diagnostics)
    assert raised.value is error
    assert diagnostics == {}


# -- Algorithm 1 ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def blob_graph():
    X, y = make_blobs(240, centers=[[0, 0], [6, 0], [0, 6], [6, 6]], cluster_std=1.3,
                      random_state=0)
    return knn_graph(X, 8), y


def test_energy_descent_estimate_every_outer_step(blob_graph):
    g, y = blob_graph
    D = gradient_operator(g.W)
    rng = np.random.default_rng(0)
    F0 = diffuse(g.W, rng.random((y.size, 4)) ** 4)
    res = mtv_minimize(D, F0, max_iter=400, rel_tol=1e-7, max_inner=10_000)
    assert len(res.history) > 5
    for h in res.history[1:]:
        # (16): weighted energy decrease >= (1 - eps) |F^{k+1} - F^k|^2 / Delta >= 0
        assert h["descent"] >= (1 - 1e-3) * h["dist"] - 1e-12
        assert h["descent"] >= -1e-12
    energies = [h["energy"] for h in res.history]
    assert energies[-1] < energies[0]
    # the sum of the energies, not only the weighted sum, decreases in practice
    assert np.all(np.diff(energies) <= 1e-6 * energies[0])
    assert on_simplex(res.F)


@pytest.mark.parametrize("max_iter", [1, 2, 5, 30])
def test_iterates_stay_on_simplex(blob_graph, max_iter):
    g, y = blob_graph
    D = gradient_operator(g.W)
    F0 = np.random.default_rng(max_iter).normal(size=(y.size, 4))  # infeasible start: projected
    res = mtv_minimize(D, F0, max_iter=max_iter, rel_tol=1e-12)
    assert res.n_iter >= min(max_iter, 1)
    assert on_simplex(res.F)


def test_labeled_rows_stay_fixed(blob_graph):
    g, y = blob_graph
    D = gradient_operator(g.W)
    fixed = np.zeros(y.size, bool)
    fixed[np.arange(0, y.size, 17)] = True
    F0 = diffuse(g.W, np.random.default_rng(1).random((y.size, 4)))
    F0 = F0 / F0.sum(1, keepdims=True)
    F0[fixed] = np.eye(4)[y[fixed]]
    res = mtv_minimize(D, F0, fixed=fixed, max_iter=300)
    np.testing.assert_array_equal(res.F[fixed], np.eye(4)[y[fixed]])
    assert on_simplex(res.F)
    # through the estimator: labeled nodes keep their labels
    yl = np.where(fixed, y, -1)
    m = MTVClustering(random_state=0).fit(g, yl, n_classes=4)
    np.testing.assert_array_equal(m.labels_[fixed], y[fixed])
    np.testing.assert_array_equal(m.decision_function_[fixed], np.eye(4)[y[fixed]])


def test_two_disconnected_cliques_split_exactly():
    W = cliques([12, 20])
    truth = np.repeat([0, 1], [12, 20])
    m = MTVClustering(n_trials=3, random_state=0).fit(Graph(W=W), np.full(32, -1), n_classes=2)
    assert purity(truth, m.labels_) == 100.0
    assert m.discrete_energy_ == 0.0
    assert on_simplex(m.decision_function_)


def test_three_cliques_with_bridges_unsupervised_and_one_label():
    W = cliques([15, 15, 15], bridge=1.0)
    truth = np.repeat([0, 1, 2], 15)
    g = Graph(W=W)
    m = MTVClustering(n_trials=5, random_state=1).fit(g, np.full(45, -1), n_classes=3)
    assert purity(truth, m.labels_) == 100.0
    y = np.full(45, -1)
    y[[3, 20, 40]] = [0, 1, 2]
    m = MTVClustering(random_state=0).fit(g, y)
    np.testing.assert_array_equal(m.labels_, truth)


def test_mtv_recovers_blobs_and_selects_lowest_discrete_energy(blob_graph):
    g, y = blob_graph
    m = MTVClustering(n_trials=4, random_state=0).fit(g, np.full(y.size, -1), n_classes=4)
    assert purity(y, m.labels_) > 95
    ok = [t for t in m.trials_ if "discrete_energy" in t]
    assert len(ok) == 5
    assert m.discrete_energy_ == min(t["discrete_energy"] for t in ok)
    assert m.n_iter_ >= 1 and m.history_ and m.stop_reason_
    D = gradient_operator(g.W)
    assert discrete_energy(D, m.labels_, 4) == pytest.approx(m.discrete_energy_)
    # deterministic given random_state
    m2 = MTVClustering(n_trials=4, random_state=0).fit(g, np.full(y.size, -1), n_classes=4)
    np.testing.assert_array_equal(m.labels_, m2.labels_)


# -- estimator plumbing and peers -----------------------------------------------------------------
def test_estimators_are_clusterers_and_registered(blob_graph):
    g, y = blob_graph
    for name, cls in [("mtv", MTVClustering), ("spectral_clustering", SpectralGraphClustering),
                      ("kmeans", KMeansClustering)]:
        est = make_solver(name, {"random_state": 0})
        assert isinstance(est, cls) and is_clusterer(est)
        clone(est)
        assert "gssl.solvers.params" in solver_modules(name)
    with pytest.raises(ConfigError):
        make_solver("mtv", {"n_trials": -1})
    with pytest.raises(ConfigError):
        make_solver("mtv", {"bogus": 1})
    with pytest.raises(ConfigError):
        make_solver("spectral_clustering", {"assign_labels": "nope"})
    with pytest.raises(SolverError):
        MTVClustering().fit(g, np.full(y.size, -1))  # no number of clusters
    sc = SpectralGraphClustering(random_state=0).fit(g, np.full(y.size, -1), n_classes=4)
    km = KMeansClustering(random_state=0).fit(g, np.full(y.size, -1), n_classes=4)
    assert purity(y, sc.labels_) > 90 and purity(y, km.labels_) > 90
    assert sc.transduction_.shape == km.transduction_.shape == y.shape
    with pytest.raises(SolverError):
        KMeansClustering().fit(Graph(W=g.W), None, n_classes=4)  # graph-only: no features


# -- fast kernels of the inner loop (issue #5 speed work) ---------------------------------------
def test_newton_simplex_projection_matches_sort_based_projection():
    from gssl.optim.simplex import project_simplex_rows, theta_lower_bound

    rng = np.random.default_rng(7)
    for R in [2, 3, 10, 20]:
        Z = np.vstack([rng.normal(size=(200, R)) * s for s in (1e-3, 1.0, 30.0)]
                      + [np.round(rng.normal(size=(50, R)), 0),          # ties
                         np.eye(R)[rng.integers(0, R, 40)],              # already on the simplex
                         np.full((5, R), 1.0 / R), np.zeros((5, R))])
        ref = project_simplex(Z, axis=1)
        np.testing.assert_allclose(project_simplex_rows(Z), ref, atol=1e-12)
        # warm starts: the exact thresholds, thresholds far above every entry, far below
        th = theta_lower_bound(Z)
        X = project_simplex_rows(Z, theta=th)
        np.testing.assert_allclose(X, ref, atol=1e-12)
        for start in (th.copy(), th + 100.0, th - 100.0, th + rng.normal(size=th.size)):
            np.testing.assert_allclose(project_simplex_rows(Z, theta=start), ref, atol=1e-12)
            np.testing.assert_allclose(np.maximum(Z - start[:, None], 0.0), ref, atol=1e-12)


def test_median_balance_and_outer_step_kernels_match_the_definitions():
    from gssl.optim.mtv_kernels import median_balance, outer_step

    rng = np.random.default_rng(8)
    for N, R in [(7, 2), (40, 3), (101, 10)]:
        lam = R - 1.0
        k = int(np.floor(N / (lam + 1.0)))
        F = rng.random((N, R))
        F[:, 0] = 0.25                                 # a constant column: B = 0 exactly
        F[: N // 2, 1] = 0.0                           # many ties at the median
        F[: N - N // (R + 1), R - 1] = 0.0             # median 0 (few positive entries)
        for G in (F, rng.normal(size=(N, R)), np.minimum(rng.normal(size=(N, R)), 0.0)):
            med, B = median_balance(G, k, lam, np.empty((R, N)), np.empty((R, N)))
            np.testing.assert_array_equal(med, lambda_median(G, lam))
            np.testing.assert_allclose(B, balance(G, lam), rtol=1e-12, atol=1e-12)
        med, B = median_balance(F, k, lam, np.empty((R, N)), np.empty((R, N)))
        assert B[0] == 0.0
        c = rng.random(R)
        np.testing.assert_allclose(outer_step(F, med, lam, c),
                                   F + balance_subgradient(F, lam, med) * c, atol=1e-12)


def test_inner_loop_kernels_match_their_sparse_numpy_definitions(blob_graph):
    """One dual step, one primal step (D'P, projection with warm start, fixed rows,
    extrapolation, distance) and the column total variations, against scipy/numpy."""
    from gssl.optim.mtv_kernels import dual_ascent, primal_project, total_variation_columns
    from gssl.optim.mtv_step import _edges_of

    g, _ = blob_graph
    D = gradient_operator(g.W)
    ei, ej, w = _edges_of(D)
    rng = np.random.default_rng(3)
    N, R = D.shape[1], 4
    F = project_simplex(rng.random((N, R)))
    np.testing.assert_allclose(total_variation_columns(F, ei, ej, np.abs(w)),
                               np.abs(D @ F).sum(axis=0), rtol=1e-12)
    P = rng.uniform(-1, 1, (D.shape[0], R))
    Fbar = 3.0 * rng.normal(size=(N, R))
    expected_P = np.clip(P + D @ Fbar, -1.0, 1.0)
    dual_ascent(P, Fbar, ei, ej, w)
    np.testing.assert_allclose(P, expected_P, atol=1e-12)
    assert np.abs(P).max() == 1.0                      # the clip was active

    Dt = D.T.tocsr()
    G, F_outer = rng.normal(size=(N, R)), project_simplex(rng.random((N, R)))
    tau, theta, gamma, sg = 0.7, 0.6, rng.random(R) + 0.5, rng.random(R)
    fixed = np.zeros(N, bool)
    fixed[:5] = True
    for start in (np.full(N, 100.0), np.full(N, -100.0), rng.normal(size=N)):
        F_new, Fbar = np.empty((N, R)), np.empty((N, R))
        th = start.copy()
        dist = primal_project(F, F_new, G, F_outer, Fbar, th, fixed, Dt.indptr.astype(np.int64),
                              Dt.indices.astype(np.int64), Dt.data, P, tau, tau * gamma, theta,
                              sg)
        Z = (F - tau * gamma * (D.T @ P) + tau * G) / (1.0 + tau)
        ref = project_simplex(Z, axis=1, fixed=fixed)
        ref[fixed] = F[fixed]
        np.testing.assert_allclose(F_new, ref, atol=1e-12)
        np.testing.assert_allclose(Fbar, sg * ((1 + theta) * ref - theta * F), atol=1e-12)
        assert dist == pytest.approx(((ref - F_outer) ** 2).sum(), rel=1e-12)
        free = ~fixed                                  # thresholds returned: x = (z - theta)^+
        np.testing.assert_allclose(np.maximum(Z[free] - th[free, None], 0.0), ref[free],
                                   atol=1e-12)


def test_mtv_minimize_rejects_an_operator_that_is_not_a_graph_gradient(blob_graph):
    g, y = blob_graph
    D = gradient_operator(g.W)
    D.data[1] *= 2.0                                   # the row no longer sums to zero
    with pytest.raises(ValueError, match="gradient operator"):
        mtv_minimize(D, np.eye(4)[y])


def test_float32_dual_and_float64_dual_reach_the_same_partition(blob_graph):
    g, y = blob_graph
    D = gradient_operator(g.W)
    fixed = np.zeros(y.size, bool)
    fixed[[np.flatnonzero(y == r)[0] for r in range(4)]] = True
    F0 = np.zeros((y.size, 4))
    F0[fixed] = np.eye(4)[y[fixed]]
    F0 = diffuse(g.W, F0)
    F0[fixed] = np.eye(4)[y[fixed]]
    r32 = mtv_minimize(D, F0, fixed=fixed, max_iter=500)
    r64 = mtv_minimize(D, F0, fixed=fixed, max_iter=500, dual_dtype=np.float64)
    assert on_simplex(r32.F) and on_simplex(r64.F)
    np.testing.assert_array_equal(r32.F.argmax(1), r64.F.argmax(1))
    assert r32.energy == pytest.approx(r64.energy, rel=1e-2)


def _orientable(W, k):
    """True when every edge of W can be charged to one of its ends with at most k edges per node,
    i.e. W is contained in (hence, with min degree >= k, equal to) a max-symmetrized k-NN graph
    (bipartite max flow: source -> edge (1) -> its two ends (1) -> sink (k))."""
    from scipy.sparse.csgraph import maximum_flow
    T = sp.triu(W, 1).tocoo()
    m, n = T.nnz, W.shape[0]
    e = np.arange(1, m + 1)
    rows = np.concatenate([np.zeros(m, int), e, e, m + 1 + np.arange(n)])
    cols = np.concatenate([e, m + 1 + T.row, m + 1 + T.col, np.full(n, m + n + 1)])
    cap = np.concatenate([np.ones(3 * m, np.int32), np.full(n, k, np.int32)])
    G = sp.csr_matrix((cap, (rows, cols)), shape=(m + n + 2, m + n + 2))
    return maximum_flow(G, 0, m + n + 1).flow_value == m


def test_config_knn5_graph_is_a_binary_max_symmetrized_5nn_graph():
    import yaml
    from pathlib import Path
    from gssl.graphs import build_graph
    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / "config/experiments/mtv.yaml")
                         .read_text())
    X, _ = make_blobs(300, centers=3, n_features=5, random_state=0)
    W = build_graph(X, dict(cfg["graphs"]["mtv_knn5"])).W
    A = kneighbors_graph(X, 5, include_self=False)
    assert abs(W - W.T).max() == 0 and set(np.unique(W.data)) == {1.0}
    assert (W != A.maximum(A.T)).nnz == 0
    deg = np.diff(W.tocsr().indptr)
    assert deg.min() == 5 and _orientable(W, 5)


def test_mtv_time_graph_override_keeps_the_precomputed_20news_graph():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks/mtv_time.py"
    spec = importlib.util.spec_from_file_location("mtv_time", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.graph_for("pendigits") == "mtv_knn10"
    assert mod.graph_for("pendigits", "mtv_knn5") == "mtv_knn5"
    assert mod.graph_for("news20", "mtv_knn5") == "mtv_precomputed"


@pytest.mark.realdata
def test_mirror_20news_graph_is_a_max_symmetrized_5nn_graph(mirror):
    """The one NMFR graph we have (the mirror's 20NEWS.mat) is a max-symmetrized K-NN graph only for
    K = 5: min degree 5 rules out K >= 6, edges that cannot be charged 4 per node rule out K <= 4,
    and a charge of at most 5 per node exists."""
    import scipy.io as sio
    A = sp.csr_matrix(sio.loadmat(mirror / "20news_graph" / "20NEWS.mat")["A"])
    W = sp.csr_matrix((A + A.T) > 0, dtype=float)
    deg = np.diff(W.indptr)
    assert deg.min() == 5 and (deg == 5).sum() > 0.3 * W.shape[0]
    assert _orientable(W, 5) and not _orientable(W, 4)


def test_mtv_kernels_give_the_same_iterates_for_any_thread_count(blob_graph, tmp_path):
    """Sums run over a fixed chunking, so 1 and 2 threads give bit-identical runs; the job context
    of the workflow sets numba's thread count to the job's threads and restores it."""
    import numba

    from gssl.pipeline.jobs import job_context, numba_threads

    g, y = blob_graph
    D = gradient_operator(g.W)
    fixed = np.zeros(y.size, bool)
    fixed[[np.flatnonzero(y == r)[0] for r in range(4)]] = True
    F0 = diffuse(g.W, np.eye(4)[y] * fixed[:, None])
    runs = []
    for threads in (1, 2):
        with numba_threads(threads):
            runs.append(mtv_minimize(D, F0, fixed=fixed, max_iter=300))
    np.testing.assert_array_equal(runs[0].F, runs[1].F)
    assert runs[0].n_iter == runs[1].n_iter and runs[0].energy == runs[1].energy
    before = numba.get_num_threads()
    with job_context(tmp_path / "job.log", threads=1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
