"""SSDL-GA / USSDL and sparse-coding + SVM (gssl.solvers.ssdl): steps, invariants, hooks."""

import numpy as np
import pytest
import scipy.sparse as sp

from gssl.errors import ConfigError
from gssl.graphs import Graph, lle_weights
from gssl.optim.dictionary_learning import lle_operator, lle_targets, update_dictionary
from gssl.optim.ssdl_updates import SSDLModel, probability_update
from gssl.solvers.registry import make_solver
from gssl.solvers.ssdl import SSDLGA, SparseCodingSVM


def _blobs(n_per=20, C=3, d=12, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(C, d)) * 3
    X = np.vstack([centers[c] + rng.normal(size=(n_per, d)) for c in range(C)])
    y = np.repeat(np.arange(C), n_per)
    X = 2 * X / np.linalg.norm(X, axis=1, keepdims=True)
    return X, y


def _graph(X):
    n = X.shape[0]
    return Graph(W=sp.csr_matrix((n, n)), V=None, X=X, params={})


def _labels(y, per_class=3):
    out = np.full(y.size, -1)
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)[:per_class]
        out[idx] = c
    return out


def test_dictionary_update_keeps_atoms_in_ball_and_decreases():
    rng = np.random.default_rng(0)
    X, A = rng.normal(size=(50, 8)) * 4, rng.normal(size=(50, 6))
    D0 = rng.normal(size=(6, 8))
    for alpha in (0.3, 1.0):
        res = update_dictionary(X, A, D0, alpha, max_iter=100)
        assert np.all(np.linalg.norm(res.x, axis=1) <= alpha * (1 + 1e-12))
        f = lambda D: np.sum((X - A @ D) ** 2)
        from gssl.optim import project_l2_ball
        assert f(res.x) <= f(project_l2_ball(D0, alpha)) + 1e-9
        # optimality: projected gradient step leaves the solution (nearly) unchanged
        g = 2 * A.T @ (A @ res.x - X)
        step = 1 / (2 * np.linalg.norm(A.T @ A, 2))
        np.testing.assert_allclose(project_l2_ball(res.x - step * g, alpha), res.x, atol=1e-3)


def test_probability_update_simplex_and_one_hot():
    rng = np.random.default_rng(1)
    E = rng.random((30, 5)) * 4
    E[0, 2] = 0.0
    E[1, [1, 3]] = 0.0
    for r in (1.0, 1.3, 1.7, 2.0):
        P = probability_update(E, r)
        assert np.all(P >= 0)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        # optimal against random points of the simplex
        Q = rng.dirichlet(np.ones(5), size=(200, 30))
        best = np.sum(P ** r * E, axis=1)
        assert np.all(best[None, :] <= np.sum(Q ** r * E[None], axis=2) + 1e-12)
    P1 = probability_update(E, 1.0)
    np.testing.assert_array_equal(P1, np.eye(5)[np.argmin(E, axis=1)])
    P2 = probability_update(E, 2.0)
    np.testing.assert_allclose(P2[0], [0, 0, 1, 0, 0])
    np.testing.assert_allclose(P2[1], [0, 0.5, 0, 0.5, 0])
    inv = 1 / E[5]
    np.testing.assert_allclose(P2[5], inv / inv.sum())      # r = 2: P proportional to 1/E


def test_lle_weights_reconstruct_points_on_a_plane():
    rng = np.random.default_rng(2)
    B = rng.normal(size=(2, 5))
    X = rng.normal(size=(60, 2)) @ B + 1.5  # affine plane in R^5
    V = lle_weights(X, 6, reg=1e-9)
    np.testing.assert_allclose(V @ X, X, atol=1e-6)
    np.testing.assert_allclose(np.asarray(V.sum(axis=1)).ravel(), 1.0)
    K = lle_operator(V)          # ||(I - V) X||^2 = tr(X^T L_A X) = 0 on the plane
    L = (sp.identity(60) - V - V.T + V.T @ V).toarray()
    np.testing.assert_allclose((K.T @ K).toarray(), L, atol=1e-12)
    # out-of-sample LLE targets: a new point on the plane is rebuilt from training neighbours
    Xn = rng.normal(size=(7, 2)) @ B + 1.5
    M, idx, w = lle_targets(X, X, Xn, 6, reg=1e-9)
    np.testing.assert_allclose(M, Xn, atol=1e-6)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)


def test_lle_reg_zero_gives_the_papers_unregularized_barycentric_weights():
    """lle_reg = 0 (eq. 3.1 of the paper, and the authors' code for a non-singular local Gram):
    w_i = argmin ||x_i - sum_j w_ij x_j||^2 s.t. sum_j w_ij = 1, solved here by its KKT system."""
    from gssl.graphs.knn import knn_distances

    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 10))
    k = 6

    def kkt(x, N):
        Z = N - x
        M = np.block([[2 * Z @ Z.T, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
        return np.linalg.solve(M, np.r_[np.zeros(k), 1.0])[:k]

    V = lle_weights(X, k, reg=0.0).toarray()
    _, idx = knn_distances(X, k)
    for i in (0, 7, 23):
        np.testing.assert_allclose(V[i, idx[i]], kkt(X[i], X[idx[i]]), atol=1e-9)
    Xn = rng.normal(size=(5, 10))
    M, nidx, w = lle_targets(X, X, Xn, k, reg=0.0)
    for i in range(5):
        np.testing.assert_allclose(w[i], kkt(Xn[i], X[nidx[i]]), atol=1e-9)
    # the default 1e-3 * trace regularization moves them (slightly)
    V3 = lle_weights(X, k, reg=1e-3).toarray()
    assert 0 < np.abs(V3 - V).max() < 0.2


def _fitted(beta=0.5, gamma=0.5, max_iter=6, **kw):
    X, y = _blobs()
    est = SSDLGA(n_atoms=15, lam=0.2, beta=beta, gamma=gamma, mu=2 * gamma, k=5, r=1.5,
                 max_iter=max_iter, tol=0, random_state=0, **kw)
    return est.fit(_graph(X), _labels(y), n_classes=3), X, y


def test_objective_decreases_within_each_outer_iteration():
    est, X, y = _fitted()
    assert est.n_iter_ == 6 and len(est.history_) == 6
    for h in est.history_:
        seq = [h["objective_start"], h["objective_after_sparse_coding"],
               h["objective_after_dictionary"], h["objective"]]
        assert all(b <= a * (1 + 1e-10) for a, b in zip(seq, seq[1:])), seq
        for key in ("seconds_sparse_coding", "seconds_dictionary", "seconds_classifier",
                    "seconds_probabilities"):
            assert h[key] >= 0
    assert np.all(np.linalg.norm(est.dictionary_, axis=1) <= 1 + 1e-12)
    np.testing.assert_allclose(est.probabilities_.sum(axis=1), 1.0)
    assert np.mean(est.predict() == y) > 0.9


def test_sparse_coding_gradient_matches_finite_differences():
    X, y = _blobs(n_per=6, d=5)
    rng = np.random.default_rng(3)
    nl, C, p = 6, 3, 4
    Y = -np.ones((nl, C))
    Y[np.arange(nl), np.arange(nl) % C] = 1
    K = lle_operator(lle_weights(X, 4))
    m = SSDLModel(X, nl, Y, K, 0.1, 1.0, 0.7, 0.9, 1.0, 1.6)
    m.D, m.W, m.b = rng.normal(size=(p, 5)), rng.normal(size=(C, p)), rng.normal(size=C)
    A = rng.normal(size=(X.shape[0], p))
    m.P = rng.dirichlet(np.ones(C), size=X.shape[0] - nl)
    m.update_masks(A)
    m.set_weights()
    # smooth part of the objective and its gradient (lam = 0 isolates the smooth part)
    m.lam = 0.0
    f = lambda Z: m.objective(Z) - m.mu * (np.sum(m.W ** 2) + np.sum(m.b ** 2))
    G = 2 * (A @ m.D - X) @ m.D.T + 2 * m.beta * (K.T @ (K @ A)) + m.gamma * (
        m.class_grad_F(m.scores(A)) @ m.W)
    eps = 1e-6
    for (i, j) in [(0, 0), (3, 2), (10, 1), (17, 3)]:
        E = np.zeros_like(A)
        E[i, j] = eps
        assert abs((f(A + E) - f(A - E)) / (2 * eps) - G[i, j]) < 1e-4 * max(1, abs(G[i, j]))
    # the batch sparse coding (rows subset, others fixed) decreases the full objective too
    m.lam = 0.1
    before = m.objective(A)
    A2, _ = m.sparse_coding(A, np.array([1, 4, 7, 12]), max_iter=30)
    assert m.objective(A2) <= before
    np.testing.assert_array_equal(np.delete(A2, [1, 4, 7, 12], 0), np.delete(A, [1, 4, 7, 12], 0))


def _model_with_masks(seed, scale):
    """An SSDLModel on the blobs (9 labeled, 3 classes, 7 atoms) with random codes A, classifier of
    size ``scale``, probabilities P, and its masks and weights set."""
    X, _ = _blobs()
    rng = np.random.default_rng(seed)
    nl, C, p = 9, 3, 7
    Y = -np.ones((nl, C))
    Y[np.arange(nl), np.arange(nl) % C] = 1
    m = SSDLModel(X, nl, Y, None, 0.1, 1.0, 0.0, 0.8, 1.3, 1.5)
    A = rng.normal(size=(X.shape[0], p))
    m.W, m.b = scale * rng.normal(size=(C, p)), scale * rng.normal(size=C)
    m.P = rng.dirichlet(np.ones(C), size=X.shape[0] - nl)
    m.update_masks(A)
    m.set_weights()
    return m, A, Y, nl, C, p


def test_classifier_update_is_the_weighted_ridge_optimum():
    m, A, *_ = _model_with_masks(5, 1.0)
    m.classifier_update(A)
    Gf = m.class_grad_F(m.scores(A))
    np.testing.assert_allclose(m.gamma * Gf.T @ A + 2 * m.mu * m.W, 0, atol=1e-9)
    np.testing.assert_allclose(m.gamma * Gf.sum(axis=0) + 2 * m.mu * m.b, 0, atol=1e-9)


def test_wang_classifier_update_matches_its_definition():
    """classifier_update="wang" (the authors' released code): per class c, labeled samples with
    an active mask, and unlabeled samples whose C masks are all on (-1 < f_jc < 1), weighted by
    sum_k P_jk^r with target sum_k P_jk^r y_jc(k) / sum_k P_jk^r; ridge mu/gamma on (w_c, b_c)."""
    m, A, Y, nl, C, p = _model_with_masks(6, 0.3)
    F = m.scores(A)
    Fu = F[nl:]
    assert ((Fu > -1) & (Fu < 1)).any() and ((Fu >= 1) | (Fu <= -1)).any()  # both cases occur
    Pr = m.P ** m.r
    W_ref, b_ref = np.empty((C, p)), np.empty(C)
    for c in range(C):
        rows, wts, tgt = [], [], []
        for i in range(nl):
            if Y[i, c] * F[i, c] < 1:
                rows.append(A[i]), wts.append(1.0), tgt.append(Y[i, c])
        for j in range(Fu.shape[0]):
            if all((1.0 if k == c else -1.0) * Fu[j, c] < 1 for k in range(C)):
                yk = np.array([1.0 if k == c else -1.0 for k in range(C)])
                rows.append(A[nl + j]), wts.append(Pr[j].sum()), tgt.append(Pr[j] @ yk / Pr[j].sum())
        Z = np.hstack([np.array(rows), np.ones((len(rows), 1))])
        w = np.array(wts)
        sol = np.linalg.solve(Z.T @ (Z * w[:, None]) + (m.mu / m.gamma) * np.eye(p + 1),
                              Z.T @ (w * np.array(tgt)))
        W_ref[c], b_ref[c] = sol[:p], sol[p]
    m.classifier_update(A, "wang")
    np.testing.assert_allclose(m.W, W_ref, atol=1e-10)
    np.testing.assert_allclose(m.b, b_ref, atol=1e-10)
    # when every unlabeled mask is on, "wang" and "exact" solve the same ridge problem
    m.W, m.b = 1e-3 * m.W, 1e-3 * m.b
    m.update_masks(A)
    m.set_weights()
    assert np.all(m.Mpos * m.Mneg == 1)
    m.classifier_update(A, "wang")
    Ww, bw = m.W.copy(), m.b.copy()
    m.W, m.b = 1e-3 * W_ref, 1e-3 * b_ref
    m.update_masks(A)
    m.set_weights()
    m.classifier_update(A, "exact")
    np.testing.assert_allclose(Ww, m.W, atol=1e-10)
    np.testing.assert_allclose(bw, m.b, atol=1e-10)
    est = SSDLGA(n_atoms=15, lam=0.2, beta=0.5, gamma=0.5, mu=1.0, k=5, r=1.5, max_iter=3,
                 tol=0, classifier_update="wang", random_state=0)
    Xb, yb = _blobs()
    est.fit(_graph(Xb), _labels(yb), n_classes=3)
    assert np.mean(est.predict() == yb) > 0.9


def test_out_of_sample_code_of_training_point_matches_training_code():
    est, X, y = _fitted(beta=0.5, max_iter=15)
    A_new = est.transform(X[est.train_indices_])
    A = est.codes_
    rel = np.linalg.norm(A_new - A, axis=1) / np.linalg.norm(A, axis=1)
    assert np.median(rel) < 0.15, np.median(rel)
    assert np.mean(est.predict(X) == est.predict()) > 0.95


def test_train_mask_keeps_other_nodes_out_of_learning():
    X, y = _blobs(n_per=25)
    lab = _labels(y)
    train = np.zeros(y.size, bool)
    train[np.r_[0:18, 25:43, 50:68]] = True
    kw = dict(n_atoms=12, lam=0.2, beta=0.5, gamma=0.5, mu=1.0, k=5, max_iter=3, random_state=0)
    a = SSDLGA(**kw).fit(_graph(X), lab, n_classes=3, train_mask=train)
    # the same training nodes alone, in the same order: identical model
    order = np.r_[np.flatnonzero((lab >= 0) & train), np.flatnonzero((lab < 0) & train)]
    b = SSDLGA(**kw).fit(_graph(X[order]), lab[order], n_classes=3)
    np.testing.assert_allclose(a.codes_, b.codes_, atol=1e-10)
    np.testing.assert_allclose(a.dictionary_, b.dictionary_, atol=1e-10)
    test = ~train
    np.testing.assert_allclose(a.decision_function()[test], b.decision_function(X[test]),
                               atol=1e-10)
    # predict_mask: nodes outside both masks are not coded (zero scores)
    c = SSDLGA(**kw).fit(_graph(X), lab, n_classes=3, train_mask=train, predict_mask=train)
    assert np.all(c.decision_function()[test] == 0)
    assert np.mean(a.predict()[test] == y[test]) > 0.9


def test_ussdl_is_beta_zero_and_batch_coding_runs():
    est, X, y = _fitted(beta=0.0)
    assert np.mean(est.predict() == y) > 0.9
    est_b, X, y = _fitted(batch_size=20, n_epochs=2)
    for h in est_b.history_:
        assert h["objective_after_sparse_coding"] <= h["objective_start"] * (1 + 1e-10)


@pytest.mark.parametrize("reg", ["none", "knn", "lle"])
def test_sc_svm_runs_on_labeled_samples_only(reg):
    X, y = _blobs(n_per=20)
    lab = _labels(y, per_class=8)
    est = SparseCodingSVM(graph_reg=reg, n_atoms=10, lam=0.2, beta=1.0, k=4, max_iter=4,
                          random_state=0).fit(_graph(X), lab, n_classes=3)
    assert est.codes_.shape == (24, 10)
    assert est.C_ in (0.1, 1.0, 10.0)
    assert np.mean(est.predict()[lab < 0] == y[lab < 0]) > 0.9
    for h1, h2 in zip(est.history_, est.history_[1:]):
        assert h2["objective"] <= h1["objective"] * (1 + 1e-10)


def test_registry_and_param_checks():
    assert isinstance(make_solver("ssdl_ga", {"beta": 0.0}), SSDLGA)
    assert isinstance(make_solver("sc_svm", {"graph_reg": "knn"}), SparseCodingSVM)
    with pytest.raises(ConfigError):
        make_solver("ssdl_ga", {"r": 0.5})
    with pytest.raises(ConfigError):
        make_solver("ssdl_ga", {"n_atoms": 0})
    with pytest.raises(ConfigError):
        make_solver("sc_svm", {"graph_reg": "threshold"})
    with pytest.raises(ConfigError):
        make_solver("ssdl_ga", {"nope": 1})
    with pytest.raises(ConfigError):
        make_solver("ssdl_ga", {"classifier_update": "svm"})
    with pytest.raises(ConfigError):
        make_solver("ssdl_ga", {"inner_solver": "ista"})


def test_authors_inner_solver_runs_and_stops_early():
    """inner_solver="authors" (the released code's plain FISTA with its max-abs stop): fits the
    toy problem and its sparse-coding steps stop before the 50-iteration cap."""
    est, X, y = _fitted(inner_solver="authors")
    assert np.mean(est.predict() == y) > 0.9
    assert min(h["sc_iterations"] for h in est.history_) < 50
    assert all(np.isfinite(h["objective"]) for h in est.history_)


@pytest.mark.parametrize("cls", [SSDLGA, SparseCodingSVM])
def test_every_parameter_declared_keyword_only_and_cloneable(cls):
    import inspect

    from sklearn.base import clone

    params = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    assert {p.name for p in params} <= set(cls._parameter_constraints)
    est = cls(max_iter=2, random_state=np.random.default_rng(0))
    est._validate_params()
    assert vars(est) == est.get_params(deep=False)
    assert clone(est).get_params().keys() == est.get_params().keys()
    with pytest.raises(TypeError):
        cls(10)
    assert not hasattr(cls, "check_params")


@pytest.mark.parametrize("name,params", [
    ("ssdl_ga", {"batch_size": 0}), ("ssdl_ga", {"batch_size": True}), ("ssdl_ga", {"r": True}),
    ("ssdl_ga", {"tol": -1e-3}), ("ssdl_ga", {"gamma": 0.0}), ("ssdl_ga", {"random_state": "x"}),
    ("sc_svm", {"Cs": []}), ("sc_svm", {"Cs": [1.0, -1.0]}), ("sc_svm", {"sigma": 0.0}),
    ("sc_svm", {"cv": 1.5}),
])
def test_invalid_parameters_raise_config_error(name, params):
    with pytest.raises(ConfigError):
        make_solver(name, params)


def test_valid_edge_parameters_pass():
    for name, cls, params in [(
            "ssdl_ga", SSDLGA, {"batch_size": None, "r": 1, "beta": 0, "tol": 0}),
            ("sc_svm", SparseCodingSVM, {"sigma": None, "Cs": [2], "graph_reg": "none"})]:
        est = make_solver(name, params)
        assert type(est) is cls  # the estimator, with the edge values kept as given
        assert {k: v for k, v in est.get_params().items() if k in params} == params
