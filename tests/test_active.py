"""Active learning (gssl.active, gssl.optim.active): the acquisition functions against
GraphLearning 1.7.5 (installed by the test extra) on the same weight matrix, eigenpairs, class
scores and labeled set of scikit-learn digits, the rank-one covariance update against the dense
posterior, the query loop's policies, candidates and refusals, and plugins by import path."""
import graphlearning as gl
import graphlearning.active_learning as gal
import numpy as np
import pytest

from gssl.active import (ActiveLearner, Acquisition, ModelChange, ModelChangeVOpt, RandomSampling,
                         SigmaOpt, UncertaintySampling, VOpt, make_acquisition, run_queries)
from gssl.errors import ConfigError, SolverError
from gssl.optim import active as numerics
from gssl.solvers.base import SemiSupervisedClassifier
from gssl.solvers.registry import make_solver

from test_graph_learning import digits, draw  # noqa: F401  (digits: the fixture)

MEASURES = numerics.UNCERTAINTY_MEASURES
N_EIG = 30


@pytest.fixture(scope="module")
def setting(digits):
    """Digits' W, GraphLearning's normalized eigenpairs, a start set of 1 label per class and
    GraphLearning's Laplace scores on it."""
    X, y, W = digits
    lam, V = gl.graph(W).eigen_decomp(normalization="normalized", k=N_EIG)
    start = draw(y, 1, 3)
    u = gl.ssl.laplace(W).fit(start, y[start])
    return W, y, (lam, V), start, u


def ours(acq, W, start, eig):
    acq.start(W, start, random_state=0, eigenpairs=eig)
    return acq


@pytest.mark.parametrize("measure", MEASURES)
def test_uncertainty_measures_equal_graphlearnings(measure, setting):
    W, y, eig, start, u = setting
    cand = np.setdiff1d(np.arange(y.size), start)
    want = gal.unc_sampling(unc_method=measure).compute(u, cand)
    np.testing.assert_allclose(UncertaintySampling(measure=measure).values(u, cand), want,
                               rtol=1e-12, atol=1e-12)
    rng = np.random.default_rng(0)  # signed scores (Poisson learning's) as well
    s = rng.standard_normal((50, 4))
    np.testing.assert_allclose(numerics.uncertainty(s, measure),
                               gal.unc_sampling(unc_method=measure).compute(s, np.arange(50)),
                               rtol=1e-12, atol=1e-12)


GL_LOWRANK = [(VOpt, {}, gal.var_opt, {}), (ModelChange, {}, gal.model_change, {}),
              (ModelChangeVOpt, {}, gal.model_change_var_opt, {}),
              (ModelChange, {"measure": "entropy"}, gal.model_change, {"unc_method": "entropy"})]


@pytest.mark.parametrize("shift, rtol", [(1e-3, 1e-8), (1e-11, 1e-5)])
@pytest.mark.parametrize("cls, params, gl_cls, gl_params", GL_LOWRANK)
def test_lowrank_acquisitions_equal_graphlearnings_after_queries(cls, params, gl_cls, gl_params,
                                                                 shift, rtol, setting):
    """The same next query and values on the start set and after 8 more labels (the rank-one
    updates): to 1e-8 with a prior shift of 1e-3; at GraphLearning's 1e-11 the prior's variance
    1e11 along d^1/2 cancels to O(1) in the updates, leaving both codes ~6 digits (their rounding
    differs: ours is one BLAS rank-one update), so there to 1e-5."""
    W, y, (lam, V), start, u = setting
    mine = ours(cls(n_eig=N_EIG, shift=shift, **params), W, start, (lam, V))
    ref = gl_cls(C=np.diag(1.0 / (lam + shift)), V=V.copy(), **gl_params)
    ref.update(start, y[start])
    labeled = start.copy()
    for step in range(9):
        cand = np.setdiff1d(np.arange(y.size), labeled)
        a, b = mine.values(u, cand), ref.compute(u, cand)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-4 * np.abs(b).max())
        q = cand[np.argmax(b)]
        assert cand[np.argmax(a)] == q
        labeled = np.append(labeled, q)
        mine.update([q])
        ref.update([q], y[[q]])


def test_sigma_opt_equals_graphlearnings_full_covariance(setting):
    """Sigma-opt on the low-rank covariance equals GraphLearning's on the full n x n covariance
    V C V^T (its low-rank form sums the eigenbasis coefficients instead: the module's note).
    With a prior shift of 1e-3: at 1e-11 the full form's entries reach 1e11 and its rank-one
    updates cancel them to ~1e3, keeping only 4 digits (both forms agree to 1e-3 there)."""
    W, y, (lam, V), start, u = setting
    mine = ours(SigmaOpt(n_eig=N_EIG, shift=1e-3), W, start, (lam, V))
    ref = gal.sigma_opt(C=(V / (lam + 1e-3)) @ V.T)
    ref.update(start, y[start])
    labeled = start.copy()
    for step in range(5):
        cand = np.setdiff1d(np.arange(y.size), labeled)
        a, b = mine.values(u, cand), ref.compute(u, cand)
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-12 * np.abs(b).max())
        assert cand[np.argmax(a)] == cand[np.argmax(b)]
        labeled = np.append(labeled, cand[np.argmax(b)])
        mine.update(labeled[-1:])
        ref.update(labeled[-1:], y[labeled[-1:]])


def test_rank_one_updates_equal_the_dense_posterior():
    """condition_on gives V C V^T = Sigma - Sigma_:K (Sigma_KK + gamma2 I)^-1 Sigma_K: (the
    Gaussian posterior of the observed nodes K)."""
    rng = np.random.default_rng(1)
    V, _ = np.linalg.qr(rng.standard_normal((40, 8)))
    lam = np.sort(rng.uniform(0.1, 2.0, 8))
    C = numerics.prior_covariance(lam, 0.0)
    S = V @ C @ V.T
    K = np.array([3, 17, 29])
    numerics.condition_on(C, V, K, 0.01)
    want = S - S[:, K] @ np.linalg.solve(S[np.ix_(K, K)] + 0.01 * np.eye(3), S[K, :])
    np.testing.assert_allclose(V @ C @ V.T, want, atol=1e-12)
    F = np.asfortranarray(numerics.prior_covariance(lam, 0.0))  # BLAS writes a copy: still in place
    numerics.condition_on(F, V, K, 0.01)
    np.testing.assert_allclose(F, C, atol=1e-12)


def test_vopt_loop_queries_what_graphlearnings_loop_queries(setting):
    """gssl's loop with Laplace learning and VOpt asks for the same 10 nodes as GraphLearning's
    active_learner (same eigenpairs), and ends with the same labels."""
    W, y, (lam, V), start, u = setting
    AL = gal.active_learner(gl.ssl.laplace(W), gal.var_opt, start, y[start],
                            C=np.diag(1.0 / (lam + 1e-11)), V=V.copy())
    learner = ActiveLearner(make_solver("laplace"), VOpt(n_eig=N_EIG), random_state=0)
    learner.start(W, start, y[start], eigenpairs=(lam, V))
    for _ in range(10):
        q_gl, q = AL.select_queries(), learner.select()
        assert q.tolist() == q_gl.tolist()
        AL.update(q_gl, y[q_gl])
        learner.update(q, y[q])
    assert np.mean(learner.model.transduction_ == AL.model.predict()) >= 0.999


def test_model_change_loop_agrees_with_graphlearnings_loop(setting):
    """With scores (Laplace learning's CG solves agree to ~1e-5) the queries may part at a
    near-tie; the first five agree, and the accuracy after 10 stays within 0.5 %."""
    W, y, (lam, V), start, u = setting
    AL = gal.active_learner(gl.ssl.laplace(W), gal.model_change, start, y[start],
                            C=np.diag(1.0 / (lam + 1e-11)), V=V.copy())
    learner = ActiveLearner(make_solver("laplace", tol=1e-10), ModelChange(n_eig=N_EIG), random_state=0)
    learner.start(W, start, y[start], eigenpairs=(lam, V))
    same = []
    for _ in range(10):
        q_gl, q = AL.select_queries(), learner.select()
        same.append(q.tolist() == q_gl.tolist())
        AL.update(q_gl, y[q_gl])
        learner.update(q, y[q])
    assert all(same[:5])
    acc_gl = np.mean(AL.model.predict() == y)
    assert abs(np.mean(learner.model.transduction_ == y) - acc_gl) <= 0.005


def test_own_eigenpairs_give_graphlearnings_vopt_queries(setting):
    """From gssl's own eigenpairs (optim.mbo.normalized_eigenpairs) VOpt asks for the nodes it
    asks for from GraphLearning's."""
    W, y, eig, start, u = setting
    a = ours(VOpt(n_eig=N_EIG), W, start, eig)
    b = VOpt(n_eig=N_EIG)
    b.start(W, start, random_state=0)
    cand = np.setdiff1d(np.arange(y.size), start)
    for _ in range(5):
        qa, qb = cand[np.argmax(a.values(u, cand))], cand[np.argmax(b.values(u, cand))]
        assert qa == qb
        a.update([qa]), b.update([qb])
        cand = cand[cand != qa]


# -- the loop ----------------------------------------------------------------------------------
def test_run_queries_records_every_round_and_labels_get_better(setting):
    W, y, eig, start, u = setting
    learner = ActiveLearner(make_solver("laplace"), UncertaintySampling(), batch=5, random_state=0)
    hist = run_queries(learner, W, y, start, budget=42)
    assert hist.n_labeled == [10, 15, 20, 25, 30, 35, 40, 45, 50, 52]  # the last batch is cut
    assert len(set(np.concatenate(hist.queried[1:]).tolist())) == 42
    assert not set(start) & set(np.concatenate(hist.queried[1:]).tolist())
    assert len(hist.accuracy) == 10 and hist.accuracy[-1] > hist.accuracy[0] + 0.02


def test_random_sampling_is_seeded_and_prop_draws_distinct_nodes(setting):
    W, y, eig, start, u = setting

    def queries(seed, policy="max", acq=RandomSampling):
        learner = ActiveLearner(make_solver("laplace"), acq(), policy=policy, batch=4, random_state=seed)
        return run_queries(learner, W, y, start, budget=8).queried[1:]

    assert queries(1) == queries(1) and queries(1) != queries(2)
    drawn = queries(5, "prop", UncertaintySampling)
    assert all(len(set(b)) == 4 for b in drawn) and drawn == queries(5, "prop", UncertaintySampling)


def test_candidates_restrict_the_queries(setting):
    W, y, eig, start, u = setting
    pool = np.arange(0, y.size, 7)
    learner = ActiveLearner(make_solver("laplace"), UncertaintySampling(), candidates=pool,
                            random_state=0)
    hist = run_queries(learner, W, y, start, budget=6)
    assert set(np.concatenate(hist.queried[1:]).tolist()) <= set(pool.tolist())


@pytest.mark.parametrize("kwargs, match", [({"batch": 0}, "batch must be an integer >= 1"),
                                           ({"policy": "softmax"}, "policy must be one of"),
                                           ({"candidates": 1.5}, "fraction must lie in")])
def test_the_loop_refuses_bad_settings(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        ActiveLearner(make_solver("laplace"), RandomSampling(), **kwargs)


def test_a_budget_beyond_the_pool_is_refused(setting):
    W, y, eig, start, u = setting
    learner = ActiveLearner(make_solver("laplace"), RandomSampling())
    with pytest.raises(ConfigError, match="budget 1788 exceeds the 1787 unlabeled"):
        run_queries(learner, W, y, start, budget=y.size - start.size + 1)


def test_a_node_labeled_twice_is_refused(setting):
    W, y, eig, start, u = setting
    learner = ActiveLearner(make_solver("laplace"), RandomSampling()).start(W, start, y[start])
    with pytest.raises(SolverError, match="labeled already"):
        learner.update(start[:1], y[start[:1]])


# -- names, parameters, plugins ----------------------------------------------------------------
class FarthestFromLabels(Acquisition):
    """A plugin acquisition: the candidates with the smallest top score."""

    def values(self, scores, candidates):
        return -scores[candidates].max(axis=1)


def test_make_acquisition_validates_parameters():
    assert isinstance(make_acquisition("model_change", {"measure": "entropy"}), ModelChange)
    with pytest.raises(ConfigError, match="'measure' parameter of UncertaintySampling"):
        make_acquisition("uncertainty", {"measure": "margin"})
    with pytest.raises(ConfigError, match=r"unknown parameters \['k'\]"):
        make_acquisition("vopt", {"k": 5})
    with pytest.raises(ConfigError, match="'n_eig' parameter of VOpt"):
        make_acquisition("vopt", {"n_eig": 0})
    with pytest.raises(ConfigError, match="unknown acquisition 'vopt2'"):
        make_acquisition("vopt2")


def test_an_acquisition_by_import_path(setting):
    W, y, eig, start, u = setting
    acq = make_acquisition("test_active:FarthestFromLabels")
    learner = ActiveLearner(make_solver("laplace"), acq).start(W, start, y[start])
    cand = np.setdiff1d(np.arange(y.size), start)
    assert learner.select()[0] == cand[np.argmin(learner.scores[cand].max(axis=1))]
    with pytest.raises(ConfigError, match="not an Acquisition class"):
        make_acquisition("test_active:ours")
    with pytest.raises(ConfigError, match="has no 'Nope'"):
        make_acquisition("test_active:Nope")


class OneStepPropagation(SemiSupervisedClassifier):
    """A plugin classifier: class scores of a few steps of label propagation along W."""

    _parameter_constraints = {}

    def _fit(self, graph, codes, n_classes):
        F = np.zeros((codes.size, n_classes))
        F[codes >= 0, codes[codes >= 0]] = 1.0
        U = F.copy()
        for _ in range(5):
            U = graph.W @ U + F
        return U


@pytest.mark.parametrize("model", ["poisson_mbo", "plugin"])
def test_the_loop_runs_any_classifier_with_class_scores(model, setting):
    W, y, eig, start, u = setting
    est = OneStepPropagation() if model == "plugin" else make_solver(model, n_outer=2, n_inner=5)
    learner = ActiveLearner(est, ModelChangeVOpt(n_eig=N_EIG), batch=2, random_state=0)
    hist = run_queries(learner, W, y, start, budget=4, eigenpairs=eig)
    assert hist.n_labeled == [10, 12, 14] and len(set(sum(hist.queried, []))) == 4
    assert learner.scores.shape == (y.size, 10)
