"""Laplacian SVM family (Melacci & Belkin 2011): optimality against scipy, dual vs primal, LapRLSC
closed form vs PCG, early-stopping criteria on scripted sequences, edge cases."""

import numpy as np
import pytest
import scipy.optimize as so
from sklearn.datasets import make_blobs, make_moons

from gssl.errors import ConfigError, SolverError
from gssl.optim.kernels import kernel_matrix
from gssl.optim import (GradientNormCheck, IterationState, LaplacianPower, MixedCheck,
                        ObjectiveDecreaseCheck, StabilityCheck, ValidationCheck,
                        default_check_every, laprlsc_closed_form, lapsvm_newton,
                        lapsvm_newton_ova, manifold_pcg,
                        piecewise_quadratic_line_search, polak_ribiere, primal_gradient,
                        primal_objective, symmetric_matvec)
from gssl.solvers.lapsvm import LapRLSC, LapSVMDual, LapSVMNewton, LapSVMPCG
from gssl.solvers.registry import make_solver
from gssl.solvers.rls import LaplacianRLS

from graph_helpers import knn_graph

RBF = {"kind": "rbf", "sigma": 0.7}


def small_problem(n=40, p=1, seed=0, kind="normalized"):
    X, y = make_moons(n, noise=0.15, random_state=seed)
    g = knn_graph(X, 6, kind)
    K = kernel_matrix(X, None, RBF)
    M = LaplacianPower(g.laplacian(kind, 1), p)
    rng = np.random.default_rng(seed)
    lab = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), 4, replace=False)
                                  for c in (0, 1)]))
    return X, y, g, K, M, lab, np.where(y[lab] == 1, 1.0, -1.0)


def scipy_optimum(K, M, lab, y, gA, gI, loss):
    n = K.shape[0]

    def fun(w):
        return primal_objective(K, M, lab, y, gA, gI, w[:n], w[n], loss)

    def jac(w):
        return primal_gradient(K, M, lab, y, gA, gI, w[:n], w[n], loss)

    # BFGS reaches these optima in ~500 iterations (0.2 s); L-BFGS-B, tried beside it, ran into its
    # 15,000-evaluation limit on every case (12-23 s) without ever getting lower
    return so.minimize(fun, np.zeros(n + 1), jac=jac, method="BFGS",
                       options={"maxiter": 20000, "gtol": 1e-10}).fun


def test_gradient_matches_finite_differences():
    _, _, _, K, M, lab, y = small_problem(20)
    rng = np.random.default_rng(1)
    w = rng.normal(size=21) * 0.3
    for loss in ("squared_hinge", "squared"):
        g = primal_gradient(K, M, lab, y, 0.1, 0.5, w[:20], w[20], loss)
        fd = so.approx_fprime(w, lambda v: primal_objective(K, M, lab, y, 0.1, 0.5, v[:20], v[20],
                                                            loss), 1e-7)
        np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("p,gA,gI", [(1, 1e-2, 1.0), (3, 1e-1, 10.0), (2, 1.0, 1e-2)])
def test_newton_and_pcg_reach_scipy_optimum(p, gA, gI):
    _, _, _, K, M, lab, y = small_problem(40, p)
    ref = scipy_optimum(K, M, lab, y, gA, gI, "squared_hinge")
    newton = lapsvm_newton(K, M, lab, y, gA, gI)
    pcg = manifold_pcg(K, M, lab, y, gA, gI, criterion=None, tol=1e-12, max_iter=5000)
    assert newton.converged and newton.stop_reason == "error vectors unchanged"
    assert newton.objective <= ref * (1 + 1e-6)
    assert pcg.objective <= ref * (1 + 1e-6)
    assert abs(newton.objective - pcg.objective) <= 1e-6 * ref
    # objective decreases monotonically along PCG (exact line search)
    objs = [h["objective"] for h in pcg.history]
    assert np.all(np.diff(objs) <= 1e-12 * objs[0])
    # Newton's optimum has zero gradient
    g = primal_gradient(K, M, lab, y, gA, gI, newton.alpha, newton.b)
    assert np.linalg.norm(g) < 1e-6 * max(1.0, np.linalg.norm(
        primal_gradient(K, M, lab, y, gA, gI, np.zeros(40), 0.0)))


def test_laprlsc_closed_form_equals_pcg_and_scipy():
    _, _, _, K, M, lab, y = small_problem(40, 2)
    a, b = laprlsc_closed_form(K, M, lab, y[:, None], 1e-2, 1.0)
    pcg = manifold_pcg(K, M, lab, y, 1e-2, 1.0, loss="squared", tol=1e-13, max_iter=5000)
    cf_obj = primal_objective(K, M, lab, y, 1e-2, 1.0, a[:, 0], b[0], "squared")
    assert abs(pcg.objective - cf_obj) <= 1e-8 * cf_obj
    np.testing.assert_allclose(pcg.f, K @ a[:, 0] + b[0], atol=1e-5)
    assert cf_obj <= scipy_optimum(K, M, lab, y, 1e-2, 1.0, "squared") * (1 + 1e-9)


def test_laprlsc_without_bias_matches_lap_rls_system():
    """Stationarity of Eq. 14 in alpha alone is lap_rls's system: same gamma scaling."""
    X, y, g, K, M, lab, yl = small_problem(40)
    codes = np.full(40, -1)
    codes[lab] = y[lab]
    ref = LaplacianRLS(kernel=RBF, gamma_A=1e-2, gamma_I=1.0).fit(g, codes)
    a = ref.dual_coef_[:, 0]
    # gradient of Eq. 14 w.r.t. alpha (b = 0) vanishes at lap_rls's solution
    grad = primal_gradient(K, M, lab, yl, 1e-2, 1.0, a, 0.0, "squared")[:40]
    assert np.linalg.norm(grad) < 1e-8 * np.linalg.norm(K @ np.where(codes >= 0, 1, 0))


def test_line_search_is_exact():
    rng = np.random.default_rng(3)
    for _ in range(50):
        r, s = rng.normal(size=30), rng.normal(size=30)
        lin, quad = rng.normal() - 1.0, rng.uniform(0.01, 2)

        def phi(t):
            return lin * t + 0.5 * quad * t * t + 0.5 * np.sum(np.maximum(0, r - t * s) ** 2)

        t, _ = piecewise_quadratic_line_search(r, s, lin, quad)
        ref = so.minimize_scalar(phi, bounds=(0, 100), method="bounded",
                                 options={"xatol": 1e-12})
        assert phi(t) <= phi(ref.x) + 1e-10
        # closed form for the squared loss
        t2, _ = piecewise_quadratic_line_search(r, s, lin, quad, all_active=True)
        assert t2 == pytest.approx(max(0.0, -(lin - s @ r) / (quad + s @ s)))
    assert polak_ribiere(1.0, 2.0, 1.0) == 0.0        # negative beta -> restart
    assert polak_ribiere(3.0, 1.0, 4.0) == pytest.approx(0.5)


# ------------------------------------------------------------------------ estimators
@pytest.fixture(scope="module")
def separable():
    X, y = make_blobs(80, centers=[[0, 0], [6, 0]], cluster_std=0.8, random_state=1)
    g = knn_graph(X, 6)
    codes = np.full(80, -1)
    for c in (0, 1):
        codes[np.flatnonzero(y == c)[:3]] = c
    return g, y, codes


def test_dual_and_primal_same_decisions_on_separable_data(separable):
    g, y, codes = separable
    kw = dict(kernel={"kind": "rbf", "sigma": 2.0}, gamma_A=1e-2, gamma_I=1e-1)
    preds = [est.fit(g, codes).predict() for est in
             (LapSVMDual(**kw), LapSVMNewton(**kw), LapSVMPCG(stopping="none", **kw),
              LapRLSC(**kw))]
    for p in preds:
        np.testing.assert_array_equal(p, y)


def test_dual_solution_satisfies_stationarity(separable):
    """a = (2 gA I + 2 gI M K)^-1 J'Y beta and f = K a + b classifies labeled points by margin."""
    g, y, codes = separable
    est = LapSVMDual(kernel={"kind": "rbf", "sigma": 2.0}, gamma_A=1e-2, gamma_I=1e-1).fit(g, codes)
    K = kernel_matrix(g.X, None, {"kind": "rbf", "sigma": 2.0})
    M = g.laplacian("normalized", 1)
    lab = np.flatnonzero(codes >= 0)
    a = est.dual_coef_[:, 0]
    ylab = np.where(codes[lab] == 1, 1.0, -1.0)
    rhs = np.zeros(80)
    rhs[lab] = ylab * est.beta_[0]
    np.testing.assert_allclose(2e-2 * a + 2e-1 * (M @ (K @ a)), rhs, atol=1e-8)
    assert np.all(est.beta_[0] >= -1e-12) and np.all(est.beta_[0] <= 1 + 1e-12)
    assert abs(ylab @ est.beta_[0]) < 1e-6
    f = K[lab] @ a + est.intercept_[0]
    free = (est.beta_[0] > 1e-6) & (est.beta_[0] < 1 - 1e-6)
    np.testing.assert_allclose(ylab[free] * f[free], 1.0, atol=1e-2)
    # out-of-sample extension reproduces the transductive scores
    np.testing.assert_allclose(est.decision_function(g.X[:5]), est.decision_function_[:5])


@pytest.mark.parametrize("name", ["lapsvm_dual", "lapsvm_newton", "lapsvm_pcg", "laprlsc"])
def test_one_label_per_class_multiclass_and_power(name):
    X, y = make_blobs(90, centers=[[0, 0], [6, 0], [0, 6]], cluster_std=0.7, random_state=0)
    g = knn_graph(X, 6)
    codes = np.full(90, -1)
    for c in range(3):
        codes[np.flatnonzero(y == c)[0]] = c
    est = make_solver(name, {"kernel": {"kind": "rbf", "sigma": 2.0}, "gamma_A": 1e-3,
                             "gamma_I": 1.0, "laplacian_power": 2})
    est.fit(g, codes, n_classes=3)
    assert est.decision_function_.shape == (90, 3)
    assert np.mean(est.predict() == y) > 0.95
    assert est.dual_coef_.shape == (90, 3) and est.intercept_.shape == (3,)
    with pytest.raises(SolverError, match="class 2 has no labeled node"):
        est.fit(g, np.where(codes == 2, -1, codes), n_classes=3)


def test_pcg_early_stopping_records_criterion(separable):
    g, y, codes = separable
    kw = dict(kernel={"kind": "rbf", "sigma": 2.0}, gamma_A=1e-4, gamma_I=10.0, laplacian_power=2)
    full = LapSVMPCG(stopping="none", **kw).fit(g, codes)
    val = (np.arange(70, 80), y[70:80])
    for stopping in ("stability", "validation", "mixed", "gradient", "objective"):
        est = LapSVMPCG(stopping=stopping, check_every=2, **kw).fit(g, codes, validation=val)
        assert est.stop_reason_ in (stopping, "converged", "no descent step")
        assert 1 <= est.n_iter_ <= full.n_iter_
        assert len(est.history_) == est.n_iter_
        assert np.mean(est.predict() == y) > 0.9
    est = LapSVMPCG(stopping="stability", check_every=2, **kw).fit(g, codes)
    assert est.stop_reason_ == "stability" and est.n_iter_ < full.n_iter_
    with pytest.raises(SolverError, match="needs validation nodes"):
        LapSVMPCG(stopping="validation", **kw).fit(g, codes)


def test_newton_ova_shares_first_step():
    """One LU for the first (LapRLSC) step of every one-vs-all column: same iterates, same steps."""
    X, y = make_blobs(60, centers=3, cluster_std=1.5, random_state=3)
    g = knn_graph(X, 6)
    K = kernel_matrix(X, None, RBF)
    M = LaplacianPower(g.laplacian("normalized", 1), 2)
    lab = np.concatenate([np.flatnonzero(y == c)[:3] for c in range(3)])
    Y = np.where(y[lab][:, None] == np.arange(3), 1.0, -1.0)
    shared = lapsvm_newton_ova(K, M, lab, Y, 1e-2, 1.0)
    for c, r in enumerate(shared):
        ref = lapsvm_newton(K, M, lab, Y[:, c], 1e-2, 1.0)
        assert r.n_iter == ref.n_iter and r.converged
        np.testing.assert_allclose(r.alpha, ref.alpha, rtol=1e-8, atol=1e-10)
        assert abs(r.b - ref.b) <= 1e-8 * max(1.0, abs(ref.b))
        assert [h["n_error_vectors"] for h in r.history] == [h["n_error_vectors"]
                                                             for h in ref.history]


def test_unnormalized_laplacian_and_bias():
    X, y, g, K, M, lab, yl = small_problem(40, 1, kind="unnormalized")
    r1 = lapsvm_newton(K, M, lab, yl, 1e-2, 1.0)
    r2 = manifold_pcg(K, M, lab, yl, 1e-2, 1.0, tol=1e-12, max_iter=5000)
    assert abs(r1.objective - r2.objective) <= 1e-6 * r1.objective


@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_symmetric_matvec_equals_dense_product(order):
    X, *_ = small_problem(60, 1)
    K = kernel_matrix(X, None, RBF)
    if order == "F":
        K = np.asfortranarray(K)
    elif order == "strided":                      # a view that is neither C nor F contiguous
        K = np.kron(K, np.ones((2, 2)))[::2, ::2]
    v = np.random.default_rng(1).normal(size=K.shape[0])
    np.testing.assert_allclose(symmetric_matvec(K)(v), K @ v, rtol=1e-13, atol=1e-13)


def test_symmetric_matvec_rejects_asymmetric_and_non_square():
    A = np.random.default_rng(0).normal(size=(30, 30))
    with pytest.raises(SolverError, match="not symmetric"):
        symmetric_matvec(A)
    with pytest.raises(SolverError, match="square"):
        symmetric_matvec(A[:, :20])
    X, y, g, K, M, lab, yl = small_problem(40, 1)
    with pytest.raises(SolverError, match="not symmetric"):
        manifold_pcg(K + np.triu(np.full_like(K, 0.1), 1), M, lab, yl, 1e-2, 1.0)


def test_param_validation():
    with pytest.raises(ConfigError, match="'stopping' parameter of LapSVMPCG must be a str among"):
        make_solver("lapsvm_pcg", {"stopping": "sometimes"})
    with pytest.raises(ConfigError, match="laplacian_power"):
        make_solver("lapsvm_newton", {"laplacian_power": 0})
    with pytest.raises(ConfigError, match="'method' parameter of LapRLSC must be"):
        make_solver("laprlsc", {"method": "magic"})
    with pytest.raises(ConfigError, match="gamma_A"):
        make_solver("lapsvm_dual", {"gamma_A": 0})
    with pytest.raises(ConfigError, match="check_every"):
        make_solver("lapsvm_pcg", {"check_every": 0})


# ------------------------------------------------------------- stopping criteria, scripted
def states(**seqs):
    n = len(next(iter(seqs.values())))
    for i in range(n):
        yield IterationState(
            iteration=i + 1,
            objective=seqs.get("objective", [np.nan] * n)[i],
            grad_norm=seqs.get("grad", [np.nan] * n)[i],
            decisions=(lambda i=i: seqs["decisions"][i]) if "decisions" in seqs else None,
            validation_errors=(lambda i=i: seqs["val"][i]) if "val" in seqs else None)


def first_stop(crit, **seqs):
    crit.reset()
    for st in states(**seqs):
        if crit(st):
            return st.iteration
    return None


def test_stability_check_scripted():
    base = np.ones(200, int)
    flip = lambda k: np.where(np.arange(200) < k, -1, 1)  # noqa: E731
    # checks at iterations 2, 4, 6, 8: changes 0->? ; 3 of 200 = 1.5% is within tolerance
    decisions = [None, flip(50), None, flip(20), None, flip(16), None, flip(13)]
    assert first_stop(StabilityCheck(every=2, tol=0.015), decisions=decisions) == 8
    assert first_stop(StabilityCheck(every=2, tol=0.03), decisions=decisions) == 6
    assert first_stop(StabilityCheck(every=2, tol=0.0), decisions=[base] * 4) == 4
    assert default_check_every(1409 + 50) == 20 and default_check_every(4) == 1


def test_validation_check_scripted():
    # checks every 3 iterations see 10, 8, 8 errors: stop at the third check (no improvement)
    val = [99, 99, 10, 99, 99, 8, 99, 99, 8]
    assert first_stop(ValidationCheck(every=3), val=val) == 9
    assert first_stop(ValidationCheck(every=3), val=[5, 5, 6, 6]) is None  # one check only
    assert first_stop(ValidationCheck(every=1), val=[5, 4, 3, 3, 1]) == 4
    assert first_stop(ValidationCheck(every=1), val=[5, 4, 5]) == 3   # got worse
    assert first_stop(ValidationCheck(every=1), val=[5, 4, 3]) is None


def test_mixed_check_needs_both():
    same = np.ones(100, int)
    other = -same
    # stable from check 2 on, validation stops improving only at check 4
    assert first_stop(MixedCheck(every=1), decisions=[same, same, same, same],
                      val=[9, 8, 7, 7]) == 4
    # validation flat but decisions keep flipping: never stops
    assert first_stop(MixedCheck(every=1), decisions=[same, other, same, other],
                      val=[5, 5, 5, 5]) is None


def test_classic_checks_scripted():
    assert first_stop(GradientNormCheck(1e-2), grad=[10.0, 1.0, 0.2, 0.09, 0.01]) == 4
    assert first_stop(ObjectiveDecreaseCheck(1e-3), objective=[10.0, 5.0, 4.0, 3.999, 3.0]) == 4
