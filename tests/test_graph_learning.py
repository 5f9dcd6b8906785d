"""Laplace, Poisson, PoissonMBO and p-Laplace learning: closed forms and invariants of the
gssl.optim kernels, and agreement with GraphLearning 1.7.5 (the authors' package, a test extra)
on the same weight matrix and labeled set (scikit-learn digits)."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits
from sklearn.neighbors import NearestNeighbors

from gssl.errors import ConfigError, SolverError
from gssl.graphs.base import Graph
from gssl.graphs.laplacian import laplacian
from gssl.optim.block_cg import block_cg
from gssl.optim.graph_learning import (laplace_learning, one_hot, poisson_cg, poisson_mbo,
                                       poisson_random_walk, poisson_source, reweight,
                                       volume_label_projection)
from gssl.optim.plaplace import plaplace_learning
from gssl.solvers.registry import make_solver


def gaussian_knn(X, k=10):
    """w_ij = exp(-4 |x_i - x_j|^2 / d_k(x_i)^2) on each point's k nearest (itself included, as
    GraphLearning counts), symmetrized by (W + W') / 2, zero diagonal."""
    dist, idx = NearestNeighbors(n_neighbors=k).fit(X).kneighbors(X)
    w = np.exp(-4.0 * dist ** 2 / dist[:, -1:] ** 2)
    n = X.shape[0]
    W = sp.csr_matrix((w.ravel(), (np.repeat(np.arange(n), k), idx.ravel())), shape=(n, n))
    W = (W + W.T) / 2
    W.setdiag(0)
    W.eliminate_zeros()
    return sp.csr_matrix(W)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    return X, y, gaussian_knn(X)


def draw(y, per_class, seed):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.choice(np.flatnonzero(y == c), per_class, replace=False)
                           for c in np.unique(y)])


def codes_for(y, train):
    codes = np.full(y.size, -1)
    codes[train] = y[train]
    return codes


# -- kernels -----------------------------------------------------------------------------------
def test_block_cg_matches_a_direct_solve():
    rng = np.random.default_rng(0)
    A = sp.random(60, 60, density=0.1, random_state=1)
    A = sp.csr_matrix(A @ A.T + sp.identity(60))
    B = rng.standard_normal((60, 3))
    res = block_cg(lambda P: A @ P, B, precond=1.0 / A.diagonal(), tol=1e-12, max_iter=500)
    assert res.converged
    np.testing.assert_allclose(res.X, np.linalg.solve(A.toarray(), B), atol=1e-9)
    assert np.all(res.residual <= 1e-12)


def test_laplace_is_the_harmonic_extension(digits):
    X, y, W = digits
    train = draw(y, 2, 0)
    U, cg = laplace_learning(W, train, one_hot(y[train], 10), tol=1e-10)
    L = laplacian(W, "unnormalized")
    free = np.setdiff1d(np.arange(y.size), train)
    assert np.abs((L @ U)[free]).max() < 1e-7                 # harmonic off the labels
    np.testing.assert_array_equal(U[train], one_hot(y[train], 10))
    np.testing.assert_allclose(U.sum(axis=1), 1.0, atol=1e-7)  # a partition of unity ...
    assert U.min() > -1e-9 and U.max() < 1 + 1e-9              # ... by the maximum principle


def test_laplace_refuses_a_component_without_labels():
    W = sp.block_diag([sp.csr_matrix(np.ones((3, 3)) - np.eye(3))] * 2).tocsr()
    with pytest.raises(SolverError, match="hold no labeled node"):
        laplace_learning(W, np.array([0, 1]), one_hot(np.array([0, 1]), 2))


def test_reweightings_follow_their_formulas(digits):
    X, y, W = digits
    train = draw(y, 1, 0)
    n, m = y.size, train.size
    a = np.ones(n)
    a[train] = n / m
    np.testing.assert_allclose(reweight(W, train, "wnll").toarray(),
                               (sp.diags(a) @ W + W @ sp.diags(a)).toarray())
    Wp = reweight(W, train, "properly", X, r=0.5, alpha=2, zeta=1e7)
    i, j = W.nonzero()
    far = np.linalg.norm(X[:, None, :] - X[train][None], axis=2).min(axis=1)
    gamma = 1 + (0.5 / np.maximum(far, 0.5 / (1e7 - 1) ** 0.5)) ** 2
    np.testing.assert_allclose(np.asarray(Wp[i, j]).ravel(),
                               np.asarray(W[i, j]).ravel() * (gamma[i] + gamma[j]))
    assert np.isclose(gamma[train], 1e7).all()
    with pytest.raises(SolverError, match="needs node features"):
        reweight(W, train, "properly", None)


def test_poisson_solves_the_poisson_equation(digits):
    X, y, W = digits
    train = draw(y, 1, 3)
    codes = codes_for(y, train)
    B = poisson_source(codes, 10)
    np.testing.assert_allclose(B.sum(axis=0), 0.0, atol=1e-12)           # centred sources
    np.testing.assert_allclose(B[train], one_hot(y[train], 10) - 0.1)
    U, cg = poisson_cg(W, B, tol=1e-10)
    d = np.asarray(W.sum(axis=1)).ravel()
    assert cg.converged
    assert np.abs(laplacian(W, "unnormalized") @ U - B).max() < 1e-8     # L U = B
    np.testing.assert_allclose(d @ U, 0.0, atol=1e-8)                     # sum_i d_i u_i = 0
    # the paper's random-walk iteration keeps sum_i d_i u_i = 0 and tends to the same solution
    U_rw, t, _ = poisson_random_walk(W, B, train, min_iter=5000, max_iter=5000)
    np.testing.assert_allclose(d @ U_rw, 0.0, atol=1e-8)
    assert np.abs(U_rw - U).max() < 1e-3 * np.abs(U).max()


def test_random_walk_stops_when_the_walk_has_mixed(digits):
    X, y, W = digits
    train = draw(y, 1, 3)
    B = poisson_source(codes_for(y, train), 10)
    _, t, mixed = poisson_random_walk(W, B, train, min_iter=1, max_iter=100000)
    assert mixed and 1 < t < 100000
    # the criterion |p_t - d / sum(d)|_inf <= 1/n holds at t and not one step earlier
    d = np.asarray(W.sum(axis=1)).ravel()
    walk = W @ sp.diags(1.0 / d)
    p = np.zeros(y.size)
    p[train] = 1.0 / train.size
    gaps = []
    for _ in range(t):
        p = walk @ p
        gaps.append(np.abs(p - d / d.sum()).max())
    assert gaps[-1] <= 1.0 / y.size < gaps[-2]
    _, t_min, _ = poisson_random_walk(W, B, train, min_iter=t + 7, max_iter=100000)
    assert t_min == t + 7
    _, t_cap, mixed = poisson_random_walk(W, B, train, min_iter=1, max_iter=t - 1)
    assert t_cap == t - 1 and not mixed


def clique_pair(extra=0):
    """Two 4-cliques (and ``extra`` more, unlabeled in the tests)."""
    return sp.block_diag([sp.csr_matrix(np.ones((4, 4)) - np.eye(4))] * (2 + extra)).tocsr()


@pytest.mark.parametrize("solver", ["laplace", "poisson", "poisson_mbo", "plaplace"])
def test_components_are_solved_each_with_its_own_labels(solver):
    """Poisson's sources are centred within each component (globally centred sources have no
    solution on a disconnected graph); every method labels each component from its labels."""
    codes = np.array([0, -1, -1, -1, 1, 0, -1, -1])
    est = make_solver(solver, {"class_priors": [0.5, 0.5]} if solver == "poisson_mbo" else {})
    labels = est.fit(Graph(W=clique_pair()), codes).transduction_
    assert labels[1:4].tolist() == [0, 0, 0] and est.fit_metrics_["unreached_nodes"] == 0
    assert set(labels[6:8]) <= {0, 1}


@pytest.mark.parametrize("solver", ["laplace", "poisson", "poisson_mbo", "plaplace"])
def test_a_component_without_labels_errors_or_abstains(solver):
    codes = np.array([0, -1, -1, -1, 1, -1, -1, -1] + [-1] * 4)
    with pytest.raises(SolverError, match=r"1 connected component\(s\) of the graph \(4 nodes\)"):
        make_solver(solver).fit(Graph(W=clique_pair(1)), codes)
    est = make_solver(solver, {"unreachable": "abstain"}).fit(Graph(W=clique_pair(1)), codes)
    assert est.transduction_[8:].tolist() == [-1] * 4
    assert est.transduction_[1:4].tolist() == [0] * 3 and est.transduction_[5:8].tolist() == [1] * 3
    assert est.fit_metrics_["unreached_nodes"] == 4
    assert np.all(est.decision_function_[8:] == 0)


def test_poisson_mbo_meets_its_class_priors(digits):
    X, y, W = digits
    train = draw(y, 2, 4)
    priors = np.full(10, 0.1)
    est = make_solver("poisson_mbo", {"class_priors": priors.tolist()}).fit(Graph(W=W), codes_for(y, train))
    frac = np.bincount(est.transduction_, minlength=10) / y.size
    assert np.abs(frac - priors).max() <= 2e-3
    assert est.fit_metrics_["volume_misfit"] == pytest.approx(np.abs(frac - priors).max())


def test_properly_radius_from_the_data(digits):
    X, y, W = digits
    train = draw(y, 1, 0)
    free = np.setdiff1d(np.arange(y.size), train)
    far = np.linalg.norm(X[:, None, :] - X[train][None], axis=2).min(axis=1)
    r = np.median(far[free])
    np.testing.assert_allclose(reweight(W, train, "properly", X, r="median_label_distance").toarray(),
                               reweight(W, train, "properly", X, r=r).toarray())


def test_a_refit_forgets_the_last_fits_diagnostics(digits):
    X, y, W = digits
    codes = codes_for(y, draw(y, 1, 0))
    est = make_solver("poisson", {"class_priors": "uniform"}).fit(Graph(W=W), codes)
    assert "volume_misfit" in est.fit_metrics_
    assert "volume_misfit" not in est.set_params(class_priors=None).fit(Graph(W=W), codes).fit_metrics_


def test_volume_projection_meets_the_priors():
    rng = np.random.default_rng(0)
    scores = rng.random((3000, 4)) + np.array([0.6, 0, 0, 0])   # class 0 would take most nodes
    priors = np.array([0.1, 0.2, 0.3, 0.4])
    labels, w, misfit = volume_label_projection(scores, priors)
    frac = np.bincount(labels, minlength=4) / 3000
    assert misfit <= 2e-3 and misfit == pytest.approx(np.abs(frac - priors).max())
    assert np.bincount(np.argmax(scores, axis=1))[0] > 0.8 * 3000


@pytest.mark.parametrize("max_iter", [0, 1, 7, 10000])
def test_volume_projection_weights_are_the_numpy_loops_to_the_bit(max_iter):
    """The compiled steps (issue 34) take GraphLearning's NumPy steps: the same weights to the bit
    from any start, ties going to the first class as numpy's argmax."""
    rng = np.random.default_rng(max_iter)
    u = rng.random((2000, 5)) + np.array([0.5, 0, 0, 0, 0])
    u[:50] = 0.25  # exact ties
    u = u - u.min()
    u = u / u.max()
    priors = np.array([0.1, 0.15, 0.2, 0.25, 0.3])
    for start in (np.ones(5), np.array([1.0, 1.3, 0.7, 1.1, 0.9])):
        w = start.copy()
        for _ in range(max_iter):  # the loop as it was (GraphLearning's)
            grad = np.bincount(np.argmax(u * w, axis=1), minlength=5) / u.shape[0] - priors
            w = w - 0.1 * grad
            w = w / w[0]
            if np.abs(grad).max() <= 1e-3:
                break
        labels, ours, _ = volume_label_projection(u, priors, start, max_iter=max_iter)
        np.testing.assert_array_equal(ours, w)
        np.testing.assert_array_equal(labels, np.argmax(u * w, axis=1))


def test_plaplace_is_a_fixed_point_and_tends_to_laplace_as_p_falls(digits):
    X, y, W = digits
    train = draw(y, 2, 1)
    F = one_hot(y[train], 10)
    U, t, change = plaplace_learning(W, train, F, p=10, tol=1e-9)
    assert change <= 1e-9 and 0 <= U.min() and U.max() <= 1
    np.testing.assert_array_equal(U[train], F)
    U_near2, *_ = plaplace_learning(W, train, F, p=2.0001, tol=1e-9)
    U_lap, _ = laplace_learning(W, train, F, tol=1e-12)
    # p -> 2 leaves only the random-walk mean: the harmonic extension
    assert np.abs(U_near2 - U_lap).max() < 1e-3
    with pytest.raises(SolverError, match="p > 2"):
        plaplace_learning(W, train, F, p=2)


def test_plaplace_keeps_an_isolated_labeled_node():
    W = sp.csr_matrix(np.array([[0, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0.0]]))
    U, _, _ = plaplace_learning(W, np.array([0, 1, 3]), one_hot(np.array([0, 1, 1]), 2), p=4)
    np.testing.assert_allclose(U[2], [0, 1])
    with pytest.raises(SolverError, match="1 unlabeled node"):
        plaplace_learning(W, np.array([1, 3]), one_hot(np.array([0, 1]), 2), p=4)


# -- estimators --------------------------------------------------------------------------------
@pytest.mark.parametrize("solver, params, message", [
    ("laplace", {"reweighting": "poisson"}, "'reweighting' parameter of LaplaceLearning must be a str among"),
    ("laplace", {"zeta": 1}, r"'zeta' parameter of LaplaceLearning must be a float in the range \(1.0, inf\)"),
    ("poisson", {"solver": "spectral"}, "'solver' parameter .* among {'cg', 'random_walk'}"),
    ("poisson", {"class_priors": "true"}, "'class_priors' parameter .* or None. Got 'true'"),
    ("poisson_mbo", {"class_priors": None}, "'class_priors' parameter .* class fractions. Got None"),
    ("poisson_mbo", {"n_inner": 0}, r"'n_inner' parameter .* an int in the range \[1, inf\)"),
    ("plaplace", {"p": 2}, r"'p' parameter .* in the range \(2.0, inf\)"),
    ("plaplace", {"p": float("inf")}, r"'p' parameter .* in the range \(2.0, inf\)"),
    ("poisson", {"solver": "random_walk", "min_iter": 10, "max_iter": 5}, "must not exceed max_iter"),
    ("laplace", {"r": "mean"}, "'r' parameter .* in the range .* or a str among {'median_label_distance'}"),
    ("poisson", {"unreachable": "ignore"}, "'unreachable' parameter .* among {'error', 'abstain'}"),
])
def test_bad_parameters_say_what_is_wrong(solver, params, message):
    with pytest.raises(ConfigError, match=message):
        make_solver(solver, params)


def test_priors_list_must_match_the_classes(digits):
    X, y, W = digits
    train = draw(y, 1, 0)
    with pytest.raises(ConfigError, match="lists 3 fractions but the problem has 10 classes"):
        make_solver("poisson", {"class_priors": [0.2, 0.3, 0.5]}).fit(Graph(W=W), codes_for(y, train))


def test_priors_list_must_be_positive_fractions():
    with pytest.raises(ConfigError, match="positive class fractions"):
        make_solver("poisson", {"class_priors": [0.5, -0.5]})


@pytest.mark.parametrize("solver", ["laplace", "poisson", "poisson_mbo", "plaplace"])
def test_estimators_fit_a_graph_without_features(solver, digits):
    X, y, W = digits
    train = draw(y, 3, 2)
    est = make_solver(solver).fit(Graph(W=W), codes_for(y, train))
    unl = np.setdiff1d(np.arange(y.size), train)
    assert est.decision_function_.shape == (y.size, 10)
    assert np.mean(est.transduction_[unl] == y[unl]) > 0.85   # digits at 3 labels per class
    np.testing.assert_array_equal(est.transduction_[train], y[train])


@pytest.mark.parametrize("solver", ["laplace", "poisson"])
def test_renumbered_solves_give_the_same_solution(solver, digits, monkeypatch):
    """Above RENUMBER_MIN_NODES the CG runs in reverse Cuthill-McKee order; the solution comes
    back in the original order, equal up to the rounding of the reordered sums."""
    import gssl.optim.graph_learning as kernels

    X, y, W = digits
    codes = codes_for(y, draw(y, 2, 3))
    plain = make_solver(solver, {"tol": 1e-10}).fit(Graph(W=W), codes)
    monkeypatch.setattr(kernels, "RENUMBER_MIN_NODES", 0)
    renumbered = make_solver(solver, {"tol": 1e-10}).fit(Graph(W=W), codes)
    np.testing.assert_allclose(renumbered.decision_function_, plain.decision_function_,
                               rtol=1e-6, atol=1e-9 * np.abs(plain.decision_function_).max())
    np.testing.assert_array_equal(renumbered.transduction_, plain.transduction_)


# -- the compiled p-Laplace sweeps (issue 34) -----------------------------------------------------
def jacobi_plaplace(W, train, F, p, tol):
    """The definition, iterated as gssl did before its compiled kernel: Jacobi steps
    u <- a D^-1 W u + (1 - a) (max + min) / 2 on the unlabeled nodes, all classes together, until
    the largest change is <= tol."""
    W = sp.csr_matrix(W)
    d = np.asarray(W.sum(axis=1)).ravel()
    P = sp.diags(1.0 / d) @ W
    a = 1.0 / (p - 1.0)
    U = np.zeros((W.shape[0], F.shape[1]))
    U[train] = F
    free = np.setdiff1d(np.arange(W.shape[0]), train)
    starts = W.indptr[:-1]
    while True:
        vals = U[W.indices]
        mid = 0.5 * (np.maximum.reduceat(vals, starts, axis=0)
                     + np.minimum.reduceat(vals, starts, axis=0))
        new = a * (P @ U) + (1.0 - a) * mid
        change = np.abs(new[free] - U[free]).max()
        U[free] = new[free]
        if change <= tol:
            return U


@pytest.mark.parametrize("per_class, seed", [(1, 0), (1, 1), (3, 2), (5, 3)])
def test_plaplace_sweeps_give_the_labels_of_the_jacobi_iteration(per_class, seed, digits):
    X, y, W = digits
    train = draw(y, per_class, 40 + seed)
    F = one_hot(y[train], 10)
    U, t, change = plaplace_learning(W, train, F, p=10)
    ref = jacobi_plaplace(W, train, F, 10, 1e-6)
    assert change <= 1e-6 and t < 1000
    np.testing.assert_array_equal(U.argmax(axis=1), ref.argmax(axis=1))
    assert np.abs(U - ref).max() < 1e-4  # both within their tolerance of the same fixed point


def test_plaplace_classes_are_solved_each_on_its_own(digits):
    """The classes are independent problems, each stopped by its own sweeps' changes: a class
    solved alone comes out the same to the bit (the four-at-a-time path and the single one do
    the same arithmetic)."""
    X, y, W = digits
    train = draw(y, 2, 7)
    F = one_hot(y[train], 10)
    U, t, _ = plaplace_learning(W, train, F, p=5)
    for c in (0, 3, 9):
        alone, t_c, change_c = plaplace_learning(W, train, F[:, [c]], p=5)
        np.testing.assert_array_equal(alone[:, 0], U[:, c])
        assert t_c <= t and change_c <= 1e-6


def test_plaplace_renumbered_sweeps_give_the_same_labels(digits, monkeypatch):
    """From RENUMBER_MIN_ENTRIES entries of U the sweeps run in reverse Cuthill-McKee
    order: another Gauss-Seidel order to the same fixed point, U back in the nodes' order."""
    import gssl.optim.graph_weights as graph_weights

    X, y, W = digits
    train = draw(y, 1, 9)
    F = one_hot(y[train], 10)
    plain, _, _ = plaplace_learning(W, train, F, p=10)
    monkeypatch.setattr(graph_weights, "RENUMBER_MIN_ENTRIES", 0)
    renumbered, t, change = plaplace_learning(W, train, F, p=10)
    assert change <= 1e-6
    np.testing.assert_array_equal(renumbered[train], F)
    np.testing.assert_array_equal(renumbered.argmax(axis=1), plain.argmax(axis=1))
    assert np.abs(renumbered - plain).max() < 1e-4


@pytest.mark.parametrize("renumber_from", [None, 0])
def test_poisson_mbo_heat_steps_are_the_explicit_iteration(digits, monkeypatch, renumber_from):
    """The compiled heat steps (in the nodes' order, and renumbered in reverse Cuthill-McKee
    order) give the iteration U <- U - dt (d U - W U) + dt mu B written out in NumPy, with the
    projection's class weights carried over: the same labels, U to rounding."""
    from gssl.optim import graph_weights

    _, _, W = digits
    rng = np.random.default_rng(3)
    B = rng.standard_normal((W.shape[0], 10)) * 1e-2
    labels0 = rng.integers(0, 10, W.shape[0])
    priors = np.full(10, 0.1)
    d = np.asarray(W.sum(axis=1)).ravel()
    dt, labels, w = 1.0 / d.max(), labels0, None
    for _ in range(3):
        U = one_hot(labels, 10)
        for _ in range(5):
            U = U - dt * (d[:, None] * U - W @ U) + dt * 0.5 * B
        labels, w, err = volume_label_projection(U, priors, w)
    if renumber_from is not None:
        monkeypatch.setattr(graph_weights, "RENUMBER_MIN_ENTRIES", renumber_from)
    got, U_got, err_got = poisson_mbo(W, B, labels0, priors, mu=0.5, n_outer=3, n_inner=5)
    np.testing.assert_array_equal(got, labels)
    assert np.abs(U_got - U).max() < 1e-12 and err_got == err
