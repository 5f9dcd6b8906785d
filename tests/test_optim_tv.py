"""Shared graph-TV numerics: gradient operator, simplex projection, ROF prox, dual QPs."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import lsq_linear

from gssl.optim import (edge_list, gradient_norm_bound, gradient_operator, project_simplex,
                        project_simplex_michelot, qp_box_equality, qp_diagonal, qp_kkt_violation,
                        rof_objective, rof_prox, total_variation)


def _random_graph(n, p, seed):
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=p, random_state=rng, data_rvs=lambda k: rng.uniform(0.1, 2, k))
    W = sp.triu(A, 1)
    W = (W + W.T).tocsr()
    # make sure it is connected: add a path
    i = np.arange(n - 1)
    P = sp.csr_matrix((np.full(n - 1, 0.5), (i, i + 1)), shape=(n, n))
    return (W + P + P.T).tocsr()


def _path(n, w=1.0):
    i = np.arange(n - 1)
    P = sp.csr_matrix((np.full(n - 1, w), (i, i + 1)), shape=(n, n))
    return (P + P.T).tocsr()


def test_gradient_operator_tv_and_laplacian():
    W = _random_graph(15, 0.3, 0)
    D = gradient_operator(W)
    i, j, w = edge_list(W)
    assert D.shape == (i.size, 15) and np.all(i < j)
    assert i.size == sp.triu(W, 1).nnz
    g = np.random.default_rng(1).normal(size=(15, 3))
    Wd = W.toarray()
    brute = np.array([sum(Wd[a, b] * abs(g[a, c] - g[b, c]) for a in range(15)
                          for b in range(a + 1, 15)) for c in range(3)])
    np.testing.assert_allclose(total_variation(W, g), brute, rtol=1e-12)
    np.testing.assert_allclose(total_variation(D, g), brute, rtol=1e-12)
    assert total_variation(W, g[:, 0]) == pytest.approx(brute[0], rel=1e-12)
    # D'D is the Laplacian of the squared weights
    W2 = Wd ** 2
    np.testing.assert_allclose((D.T @ D).toarray(), np.diag(W2.sum(1)) - W2, atol=1e-12)
    # the cheap norm bound really bounds ||D||_2
    assert gradient_norm_bound(D) >= np.linalg.norm(D.toarray(), 2) - 1e-12


def test_total_variation_square_gradient_operator_of_cycle():
    # a cycle has n edges: D is square but must not be mistaken for W
    n = 6
    i = np.arange(n)
    C = sp.csr_matrix((np.ones(n), (i, (i + 1) % n)), shape=(n, n))
    W = (C + C.T).tocsr()
    D = gradient_operator(W)
    assert D.shape == (n, n)
    g = np.arange(n, dtype=float)
    assert total_variation(D, g) == pytest.approx(2 * (n - 1))
    assert total_variation(W, g) == pytest.approx(2 * (n - 1))


def _brute_simplex(y):
    best, bx = np.inf, None
    k = y.size
    for m in range(1, k + 1):
        for S in itertools.combinations(range(k), m):
            S = list(S)
            x = np.zeros(k)
            x[S] = y[S] - (y[S].sum() - 1) / m
            if x.min() >= -1e-15 and np.sum((x - y) ** 2) < best:
                best, bx = np.sum((x - y) ** 2), x
    return bx


def test_simplex_projection_matches_bruteforce_and_michelot():
    rng = np.random.default_rng(0)
    Y = rng.normal(scale=2.0, size=(40, 5))
    P = project_simplex(Y)
    for y, p in zip(Y, P):
        np.testing.assert_allclose(p, _brute_simplex(y), atol=1e-12)
        np.testing.assert_allclose(p, project_simplex_michelot(y), atol=1e-12)
    np.testing.assert_allclose(P.sum(1), 1.0, atol=1e-12)
    assert P.min() >= 0
    # axis=0 and fixed rows
    np.testing.assert_allclose(project_simplex(Y.T, axis=0), P.T, atol=1e-14)
    fixed = np.zeros(40, bool)
    fixed[:7] = True
    Pf = project_simplex(Y, fixed=fixed)
    np.testing.assert_array_equal(Pf[:7], Y[:7])
    np.testing.assert_allclose(Pf[7:], P[7:], atol=1e-14)
    # points already on the simplex are left in place
    np.testing.assert_allclose(project_simplex(P), P, atol=1e-12)


def _rof_reference(D, z, gamma, r):
    """Dual ROF as a bounded least-squares problem: min_{|p|<=gamma} ||D'p/sqrt(r) - sqrt(r) z||."""
    A = (D.T / np.sqrt(r)).toarray()
    res = lsq_linear(A, np.sqrt(r) * z, bounds=(-gamma, gamma), method="bvls", tol=1e-15,
                     max_iter=10000)
    return z - (D.T @ res.x) / r


@pytest.mark.parametrize("seed,gamma,r", [(0, 0.3, 1.0), (1, 1.0, 0.5), (2, 0.05, 2.0)])
def test_rof_prox_matches_generic_solver(seed, gamma, r):
    W = _random_graph(20, 0.2, seed)
    D = gradient_operator(W)
    z = np.random.default_rng(seed + 10).normal(size=20)
    g, info = rof_prox(D, z, gamma, r, tol=1e-9, max_iter=20000)
    g_ref = _rof_reference(D, z, gamma, r)
    o, o_ref = rof_objective(D, g, z, gamma, r), rof_objective(D, g_ref, z, gamma, r)
    assert info["stop_reason"] == "duality gap"
    assert abs(o - o_ref) <= 1e-6 * abs(o_ref)
    assert info["gap"] <= 1e-9 * info["primal"] + 1e-15


def test_rof_prox_columnwise_equals_separate_columns():
    W = _random_graph(18, 0.25, 3)
    D = gradient_operator(W)
    Z = np.random.default_rng(4).normal(size=(18, 3))
    G, _ = rof_prox(D, Z, 0.4, 1.0, tol=1e-10, max_iter=20000)
    for c in range(3):
        g_ref = _rof_reference(D, Z[:, c], 0.4, 1.0)
        assert rof_objective(D, G[:, c], Z[:, c], 0.4, 1.0) == pytest.approx(
            rof_objective(D, g_ref, Z[:, c], 0.4, 1.0), rel=1e-6)


def test_rof_prox_path_graph_piecewise_constant():
    # step signal on a path: the ROF solution keeps the two plateaus and moves each by
    # gamma / (r * length) towards the other; for large gamma it is the constant mean
    n, m = 10, 5
    D = gradient_operator(_path(n))
    z = np.r_[np.zeros(m), np.ones(m)]
    gamma, r = 0.5, 1.0
    g, info = rof_prox(D, z, gamma, r, tol=1e-12, max_iter=50000)
    shift = gamma / (r * m)
    np.testing.assert_allclose(g, np.r_[np.full(m, shift), np.full(m, 1 - shift)], atol=1e-5)
    g, _ = rof_prox(D, z, 10.0, r, tol=1e-12, max_iter=50000)
    np.testing.assert_allclose(g, 0.5, atol=1e-5)
    # gamma = 0 is the identity
    g, info = rof_prox(D, z, 0.0, r)
    np.testing.assert_array_equal(g, z)


def test_qp_diagonal_exact_kkt():
    rng = np.random.default_rng(0)
    for trial in range(20):
        n = rng.integers(2, 30)
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        y[0], y[1] = 1.0, -1.0
        q = rng.uniform(0.1, 3, n)
        a = rng.normal(size=n) * 3
        mu = rng.uniform(0.2, 2)
        b, nu = qp_diagonal(q, a, y, 0.0, mu)
        assert qp_kkt_violation(np.diag(q), a, y, b, 0.0, mu) <= 1e-8
        assert abs(y @ b) <= 1e-10


def test_qp_dense_kkt_and_agrees_with_diagonal():
    rng = np.random.default_rng(1)
    n = 25
    B = rng.normal(size=(n, n))
    Q = B @ B.T / n + 0.1 * np.eye(n)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    a = np.ones(n) + rng.normal(size=n)
    b, info = qp_box_equality(Q, a, y, 0.0, 1.0, tol=1e-11)
    assert info["stop_reason"] == "kkt residual"
    assert info["kkt"] <= 1e-8
    q = rng.uniform(0.5, 2, n)
    b1, _ = qp_box_equality(np.diag(q), a, y, 0.0, 1.0, tol=1e-12)
    b2, _ = qp_diagonal(q, a, y, 0.0, 1.0)
    np.testing.assert_allclose(b1, b2, atol=1e-8)


def test_min_conductance_sweep_matches_bruteforce():
    """The sweep returns the threshold k in [lo, hi] whose split (first k nodes of the order vs
    the rest) has the lowest cut / min(vol, vol^c), as computed directly from the indicator."""
    from gssl.optim import min_conductance_sweep

    W = _random_graph(40, 0.1, seed=3)
    rng = np.random.default_rng(0)
    order = rng.permutation(40)
    deg = np.asarray(W.sum(axis=1)).ravel()

    def conductance(k):
        x = np.zeros(40)
        x[order[:k]] = 1.0
        cut = total_variation(W, x)
        vol = deg[order[:k]].sum()
        return cut / min(vol, deg.sum() - vol)

    for lo, hi in [(1, 39), (5, 12), (20, 20)]:
        best = min(range(lo, hi + 1), key=conductance)
        assert min_conductance_sweep(W, order, lo, hi) == best
    # two cliques joined by one edge: the sweep along the true order cuts the bridge
    B = sp.block_diag([np.ones((6, 6)) - np.eye(6)] * 2, format="lil")
    B[5, 6] = B[6, 5] = 1.0
    assert min_conductance_sweep(B.tocsr(), np.arange(12)) == 6
    with pytest.raises(ValueError, match="sweep range"):
        min_conductance_sweep(W, order, 0, 10)


def test_tv_prox_wrapper_matches_rof_prox_and_counts_iterations():
    """TVProx (the g-steps' prox of gssl.solvers.tv): rof_prox at the wrapper's accuracy, with
    the norm bound computed once, and the iterations summed over calls."""
    from gssl.optim.graph_ops import gradient_operator
    from gssl.optim.tv import TVProx, rof_prox

    rng = np.random.default_rng(3)
    W = sp.random(30, 30, density=0.2, random_state=3)
    W = sp.csr_matrix(W + W.T)
    D = gradient_operator(W)
    prox = TVProx(D, tol=1e-6, max_iter=300)
    z1, z2 = rng.normal(size=30), rng.normal(size=(30, 2))
    g1, p1 = prox(z1, 0.5, 2.0)
    g2, _ = prox(z2, 0.3, 1.0)
    r1, i1 = rof_prox(D, z1, 0.5, 2.0, tol=1e-6, max_iter=300)
    r2, i2 = rof_prox(D, z2, 0.3, 1.0, tol=1e-6, max_iter=300)
    np.testing.assert_array_equal(g1, r1)
    np.testing.assert_array_equal(g2, r2)
    np.testing.assert_array_equal(p1, i1["p"])
    assert prox.iterations == i1["iterations"] + i2["iterations"]


def test_iteration_log_stops_on_change_and_residual():
    from gssl.optim.tv_admm import IterationLog

    log = IterationLog(1e-3)
    assert not log.record(1, 0.0, 1e-4, residual=0.1)              # g still, f not yet on it
    assert log.record(2, 0.0, 1e-4, residual=1e-4)
    assert log.converged and log.stop_reason == "relative change and residual"
    assert log.history[-1]["residual"] == 1e-4
    plain = IterationLog(1e-3)
    assert plain.record(1, 0.0, 1e-4) and plain.stop_reason == "relative change"


class _RidgeStep:
    """f-step of E(F) = lam/2 ||F||^2: F = argmin E + rho/2 ||F - (G - Lm/rho)||^2."""

    def __init__(self, lam, rho):
        self.lam, self.rho, self.alpha = lam, rho, None

    def __call__(self, G, Lm):
        return (self.rho * G - Lm) / (self.rho + self.lam)

    def objective(self, F):
        return 0.5 * self.lam * np.sum(F ** 2)


def test_simplex_admm_meets_the_simplex_constraint_with_pinned_rows():
    """min lam/2 ||G||^2 on the simplex with two rows pinned: the free rows go to the uniform
    point 1/C, the pinned rows stay, f = g at the end (residual < tol); make_step is asked for
    the f-step at each penalty the run used, and the penalty never falls."""
    from gssl.optim.tv_admm import simplex_admm

    rng = np.random.default_rng(0)
    G0 = project_simplex(rng.random((20, 3)))
    lab = np.zeros(20, bool)
    lab[[0, 5]] = True
    rows = np.eye(3)[[0, 2]]
    asked = []

    def make_step(rho):
        asked.append(rho)
        return _RidgeStep(5.0, rho)

    run = simplex_admm(make_step, G0, 1.0, max_iter=500, tol=1e-8, pinned=(lab, rows))
    assert run.log.converged and run.log.history[-1]["residual"] < 1e-8
    np.testing.assert_array_equal(run.scores[lab], rows)
    np.testing.assert_allclose(run.scores[~lab], 1 / 3, atol=1e-6)
    np.testing.assert_allclose(run.F, run.scores, atol=1e-7)
    used = sorted({h["penalty"] for h in run.log.history})
    assert asked[0] == 1.0 and set(used) <= set(asked)
    pen = [h["penalty"] for h in run.log.history]
    assert all(b >= a for a, b in zip(pen, pen[1:]))


def test_the_sphere_cannot_be_a_constraint_on_the_simplex():
    """Why the multiplier must not follow the sphere point: rows on the simplex have
    sum_k g_ik^2 <= 1, so sum_k ||g^k||^2 <= N, while every column on the sphere of radius
    sqrt(N) gives C N. The balance step keeps the sphere's effect without the constraint: its
    direction is the gradient of B(G) = sum_k (R ||g^k|| - ||g^k||^2 / 2)."""
    from gssl.optim.tv_admm import sphere

    rng = np.random.default_rng(1)
    G = project_simplex(rng.normal(size=(50, 4)))
    assert np.sum(G ** 2) <= 50 + 1e-9
    assert np.sum(sphere(G, np.sqrt(50)) ** 2) == pytest.approx(4 * 50)

    def B(M):
        nrm = np.linalg.norm(M, axis=0)
        return float(np.sum(np.sqrt(50) * nrm - 0.5 * nrm ** 2))

    E = rng.normal(size=G.shape)
    eps = 1e-6
    numeric = (B(G + eps * E) - B(G - eps * E)) / (2 * eps)
    assert numeric == pytest.approx(np.sum((sphere(G, np.sqrt(50)) - G) * E), rel=1e-6)
