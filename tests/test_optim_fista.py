"""FISTA with backtracking (gssl.optim.fista) against closed forms and scikit-learn's Lasso."""

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from gssl.errors import ConfigError
from gssl.optim import fista, l1_prox, project_l2_ball, soft_threshold


def _lasso_obj(D, x, a, lam):
    return float(np.sum((x - D @ a) ** 2) + lam * np.abs(a).sum())


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("monotone", [False, True])
def test_fista_reaches_sklearn_lasso_optimum(seed, monotone):
    rng = np.random.default_rng(seed)
    n, p = 40, 25
    D = rng.normal(size=(n, p))
    x = D @ (rng.normal(size=p) * (rng.random(p) < 0.3)) + 0.1 * rng.normal(size=n)
    lam = 2.0
    # sklearn: 1/(2n)||x - D a||^2 + alpha ||a||_1  <=>  ours with alpha = lam / (2n)
    ref = Lasso(alpha=lam / (2 * n), fit_intercept=False, tol=1e-14, max_iter=200000).fit(D, x)
    res = fista(lambda a: float(np.sum((x - D @ a) ** 2)), lambda a: -2 * D.T @ (x - D @ a),
                l1_prox(lam), np.zeros(p), g=lambda a: lam * np.abs(a).sum(), lipschitz=1e-2,
                max_iter=20000, tol=1e-13, monotone=monotone)
    ours, theirs = _lasso_obj(D, x, res.x, lam), _lasso_obj(D, x, ref.coef_, lam)
    assert abs(ours - theirs) <= 1e-6 * theirs
    assert ours <= theirs * (1 + 1e-9)
    np.testing.assert_allclose(res.x, ref.coef_, atol=1e-4)


@pytest.mark.parametrize("monotone", [False, True])
def test_value_and_grad_in_one_call_and_f_once_per_trial_point(monotone):
    """A value_and_grad callable gives the same iterates to the bit as f and grad apart, and f is
    evaluated once per point: at each backtracking trial (the accepted one's value is reused for
    the objective), never twice at one z."""
    rng = np.random.default_rng(4)
    D = rng.normal(size=(30, 50))
    x = rng.normal(size=30)
    calls = {"f": 0}

    def f(a):
        calls["f"] += 1
        return float(np.sum((x - D @ a) ** 2))

    def grad(a):
        return -2 * D.T @ (x - D @ a)

    kw = dict(g=lambda a: 0.5 * np.abs(a).sum(), lipschitz=1e-2, max_iter=60, tol=0.0, monotone=monotone)
    apart = fista(f, grad, l1_prox(0.5), np.zeros(50), **kw)
    trials = calls["f"] - 1 - apart.n_iter  # f(x0) once, f(y) once per iteration
    assert apart.n_iter == 60 and 60 <= trials < 60 + 20  # one trial per iteration, a few more while L grows
    calls["f"] = 0
    together = fista(f, grad, l1_prox(0.5), np.zeros(50), value_and_grad=lambda a: (f(a), grad(a)), **kw)
    assert calls["f"] == 1 + apart.n_iter + trials
    np.testing.assert_array_equal(together.x, apart.x)
    assert together.objective == apart.objective


def test_backtracking_grows_step_constant_and_monotone_never_increases():
    rng = np.random.default_rng(3)
    D = rng.normal(size=(30, 50))
    x = rng.normal(size=30)
    lam = 0.5
    L_true = 2 * np.linalg.norm(D, 2) ** 2
    res = fista(lambda a: float(np.sum((x - D @ a) ** 2)), lambda a: -2 * D.T @ (x - D @ a),
                l1_prox(lam), np.zeros(50), g=lambda a: lam * np.abs(a).sum(), lipschitz=1e-3,
                max_iter=300, tol=0, monotone=True)
    assert L_true / 2 ** 11 < res.lipschitz <= 2 * L_true  # grown by factors of eta=2 only as needed
    assert np.all(np.diff(res.objective) <= 1e-12)


def test_projected_fista_on_ball_matches_projection_of_unconstrained_point():
    # min ||D - M||^2 s.t. rows in the ball has the closed form: project the rows of M
    rng = np.random.default_rng(4)
    M = rng.normal(size=(6, 5)) * 3
    res = fista(lambda D: float(np.sum((D - M) ** 2)), lambda D: 2 * (D - M),
                lambda V, s: project_l2_ball(V, 1.0), np.zeros_like(M), max_iter=500, tol=1e-14)
    np.testing.assert_allclose(res.x, project_l2_ball(M, 1.0), atol=1e-9)
    assert np.all(np.linalg.norm(res.x, axis=1) <= 1 + 1e-12)


def test_proxes():
    v = np.array([-3.0, -0.5, 0.0, 0.2, 2.0])
    np.testing.assert_allclose(soft_threshold(v, 1.0), [-2.0, 0.0, 0.0, 0.0, 1.0])
    M = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    P = project_l2_ball(M, 2.0)
    np.testing.assert_allclose(P, [[1.2, 1.6], [0.3, 0.4], [0.0, 0.0]])
    np.testing.assert_allclose(project_l2_ball(M.T, 2.0, axis=0), P.T)


def test_bad_arguments():
    with pytest.raises(ConfigError):
        fista(lambda a: 0.0, lambda a: a, l1_prox(1.0), np.zeros(2), lipschitz=0)
    with pytest.raises(ConfigError):
        fista(lambda a: 0.0, lambda a: a, l1_prox(1.0), np.zeros(2), monotone=True)


def test_maxabs_stop_and_extrapolated_output():
    """stop="maxabs" / output="y" (the rule of Tran et al.'s released code): the run stops at the
    first iteration where the extrapolated point moves by < tol in max-abs, and returns that
    point; with a tiny tol it still reaches the LASSO optimum."""
    rng = np.random.default_rng(4)
    n, p, lam = 30, 12, 1.0
    D = rng.normal(size=(n, p))
    x = rng.normal(size=n)
    f = lambda a: float(np.sum((x - D @ a) ** 2))
    grad = lambda a: -2 * D.T @ (x - D @ a)
    L = 2 * np.linalg.norm(D.T @ D, 2)
    # reference loop: plain FISTA with a fixed step, extrapolated points y_k
    ys, xs, y, xp, t = [np.zeros(p)], [], np.zeros(p), np.zeros(p), 1.0
    for _ in range(40):
        z = soft_threshold(y - grad(y) / L, lam / L)
        t2 = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        y, xp, t = z + ((t - 1) / t2) * (z - xp), z, t2
        ys.append(y), xs.append(z)
    moves = [np.max(np.abs(b - a)) for a, b in zip(ys, ys[1:])]
    tol = 0.05 * moves[0]
    k = next(i for i, m in enumerate(moves) if m < tol)
    assert 2 <= k < 39
    res = fista(f, grad, l1_prox(lam), np.zeros(p), lipschitz=L, backtracking=False,
                max_iter=40, tol=tol, stop="maxabs", output="y")
    assert res.n_iter == k + 1 and res.converged
    np.testing.assert_allclose(res.x, ys[k + 1], atol=1e-12)
    res_x = fista(f, grad, l1_prox(lam), np.zeros(p), lipschitz=L, backtracking=False,
                  max_iter=40, tol=tol, stop="maxabs")
    np.testing.assert_allclose(res_x.x, xs[k], atol=1e-12)
    ref = Lasso(alpha=lam / (2 * n), fit_intercept=False, tol=1e-14, max_iter=200000).fit(D, x)
    tight = fista(f, grad, l1_prox(lam), np.zeros(p), lipschitz=1.0, eta=1.5, max_iter=20000,
                  tol=1e-12, stop="maxabs", output="y")
    assert abs(_lasso_obj(D, x, tight.x, lam) - _lasso_obj(D, x, ref.coef_, lam)) <= 1e-6 * \
        _lasso_obj(D, x, ref.coef_, lam)
    with pytest.raises(ConfigError):
        fista(f, grad, l1_prox(lam), np.zeros(p), g=lambda a: 0.0, monotone=True, output="y")
    with pytest.raises(ConfigError):
        fista(f, grad, l1_prox(lam), np.zeros(p), stop="gap")
