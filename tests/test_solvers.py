import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import laplacian as csgraph_laplacian
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge
from sklearn.semi_supervised import LabelSpreading
from sklearn.svm import SVC

from gssl.errors import ConfigError, SolverError
from gssl.graphs.base import Graph
from gssl.store.hashing import module_source_hash
from gssl.metrics import error_rate
from gssl.solvers import (SOLVERS, KernelRLS, KernelSVM, LabelSpreadingBaseline, LaplacianRLS,
                          make_solver, solver_modules)

from graph_helpers import knn_graph

RBF = {"kind": "rbf", "sigma": 0.8}
GAMMA = 1 / (2 * 0.8**2)  # sklearn's gamma for RBF


def labels(y, per_class, seed=0, n_classes=None):
    rng = np.random.default_rng(seed)
    out = np.full(y.size, -1)
    for c in range(n_classes or y.max() + 1):
        idx = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        out[idx] = c
    return out


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(120, centers=[[0, 0], [5, 0], [0, 5]], cluster_std=1.0, random_state=0)
    return knn_graph(X), y, labels(y, 4)


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(400, noise=0.05, random_state=0)
    return knn_graph(X, 10), y


# ----------------------------------------------------------------------------- KernelRLS
def test_kernel_rls_equals_kernel_ridge(blobs):
    g, y, yl = blobs
    lab = yl >= 0
    rls = KernelRLS(kernel=RBF, gamma_A=1e-2).fit(g, yl, n_classes=3)
    Y = 2.0 * (yl[lab][:, None] == np.arange(3)) - 1  # one-vs-all ±1
    ref = KernelRidge(alpha=1e-2, kernel="rbf", gamma=GAMMA).fit(g.X[lab], Y)
    np.testing.assert_allclose(rls.decision_function_, ref.predict(g.X), atol=1e-8)
    np.testing.assert_array_equal(rls.transduction_, ref.predict(g.X).argmax(1))
    np.testing.assert_array_equal(rls.classes_, [0, 1, 2])
    assert rls.decision_function_.shape == (120, 3) and rls.n_iter_ == 1
    assert rls.history_[0]["relative_residual"] < 1e-10


def test_binary_uses_one_signed_column(moons):
    g, y = moons
    yl = labels(y, 3)
    rls = KernelRLS(kernel=RBF, gamma_A=1e-2).fit(g, yl)
    lab = yl >= 0
    f = KernelRidge(alpha=1e-2, kernel="rbf", gamma=GAMMA).fit(
        g.X[lab], np.where(yl[lab] == 1, 1.0, -1.0)).predict(g.X)
    np.testing.assert_allclose(rls.decision_function_, np.column_stack([-f, f]), atol=1e-8)
    np.testing.assert_array_equal(rls.transduction_, (f > 0).astype(int))
    assert rls.dual_coef_.shape == (6, 1)


def test_kernel_rls_sparse_features_and_out_of_sample(blobs):
    g, y, yl = blobs
    dense = KernelRLS(kernel=RBF, gamma_A=1e-3).fit(g, yl)
    sparse = KernelRLS(kernel=RBF, gamma_A=1e-3).fit(Graph(W=g.W, X=sp.csr_matrix(g.X)), yl)
    np.testing.assert_allclose(sparse.decision_function_, dense.decision_function_, atol=1e-8)
    np.testing.assert_allclose(dense.decision_function(g.X[:10]), dense.decision_function_[:10])
    np.testing.assert_array_equal(dense.predict(g.X), dense.predict())


# ----------------------------------------------------------------------------- LaplacianRLS
def test_lap_rls_without_manifold_term_is_kernel_rls(blobs):
    g, y, yl = blobs
    rls = KernelRLS(kernel=RBF, gamma_A=1e-2).fit(g, yl)
    lap = LaplacianRLS(kernel=RBF, gamma_A=1e-2, gamma_I=0.0).fit(g, yl)
    lab = yl >= 0
    np.testing.assert_allclose(lap.decision_function_[lab], rls.decision_function_[lab], atol=1e-8)
    np.testing.assert_allclose(lap.decision_function_, rls.decision_function_, atol=1e-8)
    np.testing.assert_allclose(lap.dual_coef_[~lab], 0.0, atol=1e-12)  # alpha_U = 0


def test_lap_rls_solves_normal_equations_and_minimizes_objective(blobs):
    g0, y, yl = blobs
    g = Graph(W=g0.W, X=g0.X, laplacian_kind="unnormalized")
    gA, gI = 1e-3, 0.5
    lap = LaplacianRLS(kernel=RBF, gamma_A=gA, gamma_I=gI, laplacian_power=2).fit(g, yl)
    # independent reference: scipy's D - W, squared
    L = csgraph_laplacian(g.W.toarray())
    L = L @ L
    K = np.exp(-GAMMA * ((g.X[:, None] - g.X[None]) ** 2).sum(-1))
    J = np.diag((yl >= 0).astype(float))
    Y = J @ (2.0 * (yl[:, None] == np.arange(3)) - 1)
    a = lap.dual_coef_
    np.testing.assert_allclose((J @ K + gA * np.eye(120) + gI * L @ K) @ a, Y, atol=1e-7)

    def objective(a):
        F = K @ a
        return (np.sum((J @ F - Y) ** 2) + gA * np.sum(a * F) + gI * np.sum(F * (L @ F)))

    assert lap.history_[0]["objective"] == pytest.approx(objective(a), rel=1e-8)
    rng = np.random.default_rng(0)
    for _ in range(5):  # convex objective: every perturbation of the minimizer increases it
        assert objective(a + 1e-3 * rng.normal(size=a.shape)) > objective(a)


def test_lap_rls_uses_declared_or_requested_laplacian(blobs):
    g, y, yl = blobs
    g_un = Graph(W=g.W, X=g.X, laplacian_kind="unnormalized")
    a = LaplacianRLS(kernel=RBF, gamma_A=1e-3, gamma_I=0.5).fit(g_un, yl).decision_function_
    b = LaplacianRLS(kernel=RBF, gamma_A=1e-3, gamma_I=0.5,
                     laplacian="unnormalized").fit(g, yl).decision_function_
    c = LaplacianRLS(kernel=RBF, gamma_A=1e-3, gamma_I=0.5).fit(g, yl).decision_function_
    np.testing.assert_allclose(a, b)
    assert not np.allclose(a, c)


def test_lap_rls_beats_rls_on_two_moons_with_one_label_per_class(moons):
    g, y = moons
    k = {"kind": "rbf", "sigma": 0.35}
    for seed in range(3):
        yl = labels(y, 1, seed)
        rls = error_rate(y, KernelRLS(kernel=k, gamma_A=1e-3).fit(g, yl, 2).predict())
        lap = LaplacianRLS(kernel=k, gamma_A=1e-3, gamma_I=1.0).fit(g, yl, 2)
        assert error_rate(y, lap.predict()) < 2.0 < 10.0 < rls
        # the out-of-sample extension reproduces the transductive labels on the nodes
        np.testing.assert_array_equal(lap.predict(g.X), lap.transduction_)


# ----------------------------------------------------------------------------- SVM
@pytest.mark.parametrize("binary", [False, True])
def test_svm_matches_sklearn_svc(blobs, moons, binary):
    g, y, yl = (moons[0], moons[1], labels(moons[1], 5)) if binary else blobs
    lab = yl >= 0
    svm = KernelSVM(kernel=RBF, C=3.0).fit(g, yl)
    ref = SVC(kernel="rbf", gamma=GAMMA, C=3.0).fit(g.X[lab], yl[lab])
    np.testing.assert_array_equal(svm.predict(), ref.predict(g.X))
    np.testing.assert_array_equal(svm.predict(g.X[lab]), ref.predict(g.X[lab]))
    f = ref.decision_function(g.X)
    expected = np.column_stack([-f, f]) if binary else f
    np.testing.assert_allclose(svm.decision_function_, expected, atol=1e-8)
    assert svm.n_iter_ >= 1


def test_svm_one_vs_rest_matches_sklearn(blobs):
    """multiclass="ovr": one SVC per class, label = arg-max of the decision values, exactly
    sklearn's OneVsRestClassifier; an unknown scheme is a configuration error."""
    from sklearn.multiclass import OneVsRestClassifier

    g, y, yl = blobs
    lab = yl >= 0
    svm = KernelSVM(kernel=RBF, C=3.0, multiclass="ovr").fit(g, yl)
    ref = OneVsRestClassifier(SVC(kernel="rbf", gamma=GAMMA, C=3.0)).fit(g.X[lab], yl[lab])
    np.testing.assert_allclose(svm.decision_function_, ref.decision_function(g.X), atol=1e-8)
    np.testing.assert_array_equal(svm.predict(), ref.predict(g.X))
    np.testing.assert_array_equal(svm.predict(g.X[:7]), ref.predict(g.X[:7]))
    np.testing.assert_array_equal(svm.predict(), np.argmax(svm.decision_function_, axis=1))
    with pytest.raises(ConfigError, match="'multiclass' parameter of KernelSVM must be"):
        KernelSVM(kernel=RBF, multiclass="ova").fit(g, yl)


# ----------------------------------------------------------------------------- label spreading
def test_label_spreading_equals_sklearn(blobs):
    g, y, yl = blobs
    ls = LabelSpreadingBaseline(n_neighbors=7, alpha=0.3, max_iter=50).fit(g, yl, 3)
    ref = LabelSpreading(kernel="knn", n_neighbors=7, alpha=0.3, max_iter=50).fit(g.X, yl)
    np.testing.assert_array_equal(ls.transduction_, ref.transduction_)
    np.testing.assert_allclose(ls.decision_function_, ref.label_distributions_)
    np.testing.assert_array_equal(ls.predict(g.X[:5]), ref.predict(g.X[:5]))
    assert ls.n_iter_ == ref.n_iter_ and error_rate(y, ls.predict()) < 15
    assert ls.converged_ and ls.stop_reason_ == "tol"
    with pytest.warns(ConvergenceWarning):
        short = LabelSpreadingBaseline(n_neighbors=7, alpha=0.3, max_iter=2).fit(g, yl, 3)
    assert not short.converged_ and short.stop_reason_ == "max_iter"


# ----------------------------------------------------------------------------- common behaviour
ALL = [KernelRLS(kernel=RBF, gamma_A=1e-2), LaplacianRLS(kernel=RBF, gamma_A=1e-2, gamma_I=0.1),
       KernelSVM(kernel=RBF, C=1.0),
       LabelSpreadingBaseline(n_neighbors=7)]


@pytest.mark.parametrize("solver", ALL, ids=lambda s: type(s).__name__)
def test_single_labeled_point_per_class(blobs, solver):
    g, y, _ = blobs
    yl = labels(y, 1, seed=3)
    est = clone(solver).fit(g, yl, n_classes=3)
    assert est.transduction_.shape == (120,) and est.decision_function_.shape == (120, 3)
    np.testing.assert_array_equal(est.transduction_[yl >= 0], yl[yl >= 0])
    assert error_rate(y, est.predict()) < 20  # well separated blobs


@pytest.mark.parametrize("solver", ALL, ids=lambda s: type(s).__name__)
def test_class_without_label_raises(blobs, solver):
    g, y, yl = blobs
    yl = np.where(yl == 2, -1, yl)
    with pytest.raises(SolverError, match=r"class 2 has no labeled node.*labels every class"):
        clone(solver).fit(g, yl, n_classes=3)
    # without n_classes the problem is a 2-class one
    assert set(clone(solver).fit(g, yl).classes_) == {0, 1}


def test_label_validation_errors(blobs):
    g, y, yl = blobs
    with pytest.raises(SolverError, match="one entry per graph node"):
        KernelRLS().fit(g, yl[:-1])
    with pytest.raises(SolverError, match="at least 2 classes"):
        KernelRLS().fit(g, np.where(yl == 0, 0, -1))
    with pytest.raises(SolverError, match="outside 0..1"):
        KernelRLS().fit(g, yl, n_classes=2)
    with pytest.raises(SolverError, match="graph-only"):
        KernelRLS().fit(Graph(W=g.W), yl)
    with pytest.raises(SolverError, match="no out-of-sample"):
        from gssl.solvers.base import SemiSupervisedClassifier

        class Plain(SemiSupervisedClassifier):
            def _fit(self, graph, codes, n_classes):
                return np.zeros((codes.size, n_classes))

        Plain().fit(g, yl).predict(g.X)


def test_get_set_params_clone_roundtrip():
    est = LaplacianRLS(kernel={"kind": "polynomial", "degree": 2}, gamma_A=0.1, gamma_I=2.0,
                       laplacian="random_walk", laplacian_power=2)
    params = est.get_params()
    assert params == {"kernel": {"kind": "polynomial", "degree": 2}, "gamma_A": 0.1,
                      "gamma_I": 2.0, "laplacian": "random_walk", "laplacian_power": 2}
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    assert twin.set_params(gamma_I=5.0) is twin and twin.gamma_I == 5.0 and est.gamma_I == 2.0
    assert LaplacianRLS(**params).get_params() == params
    assert not hasattr(clone(KernelRLS().fit(*_tiny())), "classes_")  # clone is unfitted


def _tiny():
    X = np.array([[0.0], [0.1], [1.0], [1.1]])
    return Graph(W=sp.csr_matrix(np.eye(4)[[1, 0, 3, 2]]), X=X), np.array([0, -1, 1, -1])


def test_registry_make_solver_and_modules():
    est = make_solver("lap_rls", {"gamma_I": 0.5, "kernel": {"kind": "linear"}})
    assert isinstance(est, LaplacianRLS) and est.gamma_I == 0.5
    assert isinstance(make_solver("svm"), KernelSVM)
    assert set(SOLVERS) >= {"rls", "lap_rls", "svm", "label_spreading"}
    with pytest.raises(ConfigError, match=r"unknown solver 'lapsvm'.*'lap_rls'"):
        make_solver("lapsvm", {})
    with pytest.raises(ConfigError, match=r"unknown parameters \['gamma'\].*gamma_A"):
        make_solver("rls", {"gamma": 1})
    with pytest.raises(ConfigError, match="sigma"):
        make_solver("rls", {"kernel": {"kind": "rbf", "sigma": -1}})
    with pytest.raises(ConfigError, match="laplacian"):
        make_solver("lap_rls", {"laplacian": "sym"})
    mods = solver_modules("rls")
    assert {"gssl.solvers.rls", "gssl.solvers.base", "gssl.optim.kernels", "gssl.optim.linalg"} <= set(mods)
    for name in SOLVERS:  # every listed module exists, so rerun hashes can be computed
        assert len(module_source_hash(*solver_modules(name))) == 16
    with pytest.raises(ConfigError):
        solver_modules("nope")


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_a_solvers_code_hash_covers_its_own_modules_not_the_whole_package(name):
    """The rerun hash hashes a package as every file below it: a solver that imports the gssl
    package itself (e.g. ``from . import __version__``) would rerun on any edit anywhere."""
    modules = solver_modules(name)
    assert not {"gssl", "gssl.solvers", "gssl.optim"} & set(modules), modules
    assert SOLVERS[name].__module__ in modules


@pytest.mark.parametrize("name", SOLVERS.names())
def test_the_registry_knows_a_clusterer_from_its_source_as_scikit_learn_does(name):
    """Planning asks whether a solver clusters (a table's headline) without importing it: the
    registry reads ClusterMixin among the class's bases in its module's source."""
    from sklearn.base import is_clusterer

    from gssl.solvers.registry import _Registry, _declarations

    assert _Registry(*_declarations()).is_clusterer(name) == is_clusterer(SOLVERS[name]())


def test_a_job_imports_the_solvers_it_fits_only():
    """The registry, gssl.solvers and gssl.optim import a name on first use: a Laplacian RLS job
    (or a config check naming it) imports neither the other solvers nor numba (0.5 s)."""
    import subprocess
    import sys

    code = ("import sys; from gssl.solvers.registry import SOLVERS, make_solver; make_solver('lap_rls'); "
            "assert 'tv_rls' in SOLVERS and 'nope' not in SOLVERS; "
            "print(sorted(m for m in sys.modules if m == 'numba' or m.startswith('gssl.solvers.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(out) == ["gssl.solvers.base", "gssl.solvers.docstrings", "gssl.solvers.fit_checks",
                         "gssl.solvers.params", "gssl.solvers.registry", "gssl.solvers.rls"], out


def test_label_spreading_on_the_given_graph_is_sklearns_on_its_own_graph():
    """graph='given' runs scikit-learn's iteration on W: given sklearn's own kNN connectivity
    graph it reproduces the features mode exactly; given another graph it uses that one."""
    from sklearn.datasets import load_digits
    from sklearn.neighbors import NearestNeighbors

    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    codes = np.full(y.size, -1)
    codes[::15] = y[::15]
    W_sk = NearestNeighbors(n_neighbors=7).fit(X).kneighbors_graph(X, 7, mode="connectivity")
    # scikit-learn's kNN graph is directed and has self-loops, which a Graph's check refuses and
    # drops: checked=True hands it over as it is
    own = make_solver("label_spreading", {"n_neighbors": 7}).fit(Graph(W=W_sk, X=X, checked=True),
                                                                 codes)
    given = make_solver("label_spreading", {"graph": "given"}).fit(Graph(W=W_sk, checked=True), codes)
    np.testing.assert_allclose(given.decision_function_, own.decision_function_, atol=1e-12)
    other = make_solver("label_spreading", {"graph": "given"}).fit(
        Graph(W=W_sk[:, ::-1], checked=True), codes)
    assert not np.allclose(other.decision_function_, own.decision_function_)
    with pytest.raises(SolverError, match="no out-of-sample extension"):
        given.predict(X[:3])


# ----------------------------------------------------------------------------- convergence warnings
# one per iterative family, each stopped on its limit: (solver, params)
STOPPED = [
    ("tv_rls", {"max_iter": 1}), ("tv_svm", {"max_iter": 1}),                  # simplex ADMM
    ("cheeger_rls", {"max_iter": 1}), ("cheeger_svm", {"max_iter": 1}),        # Cheeger
    ("lap_rls_simplex", {"max_iter": 1}), ("lap_svm_mc", {"max_iter": 1}),     # Lap simplex
    ("lapsvm_pcg", {"max_iter": 1}), ("laprlsc", {"method": "pcg", "max_iter": 1}),  # PCG
    ("lapsvm_newton", {"max_iter": 1}),                                         # Newton
    ("laplace", {"max_iter": 1}), ("poisson", {"max_iter": 1}),                # CG
    ("poisson_mbo", {"max_iter": 1}), ("plaplace", {"max_iter": 1}),           # p-Laplace sweeps
    ("volume_mbo", {"max_iter": 1, "temperature": 0.0}),                        # MBO
    ("ssdl_ga", {"max_iter": 1}), ("sc_svm", {"max_iter": 1}),                 # SSDL alternation
    ("label_spreading", {"max_iter": 1}),                                       # scikit-learn's
    ("mtv", {"max_iter": 1, "n_trials": 1}), ("kmeans", {"max_iter": 1, "n_init": 1}),  # clustering
]


@pytest.mark.parametrize("name, params", STOPPED, ids=[n for n, _ in STOPPED])
def test_an_iterative_solver_stopped_by_max_iter_warns_once(blobs, name, params):
    """Issue 32: a fit that stops on its iteration limit without meeting its criterion is never
    silent: one ConvergenceWarning (from gssl.solvers.base.warn_not_converged) naming the solver,
    how it stopped, its criterion with the last value and tolerance, and the parameter to change;
    converged_ is False and criteria_ holds what the message reports."""
    import warnings

    g, y, yl = blobs
    extra = {"n_atoms": 10, "k": 4} if name in ("ssdl_ga", "sc_svm") else {}
    est = make_solver(name, {**params, **extra})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(g, yl, n_classes=3)
    conv = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert not est.converged_ and est.criteria_
    assert len(conv) == 1, [str(w.message) for w in conv]
    text = str(conv[0].message)
    assert text.startswith(f"{type(est).__name__} did not converge") and "Increase max_iter" in text
    criterion, (value, tol) = next(iter(est.criteria_.items()))
    assert f"{criterion} = " in text
    assert (tol if isinstance(tol, str) else f"tol {tol:.3g}") in text
    assert conv[0].filename == __file__                # points at the caller's fit


def test_the_warning_names_the_criteria_last_values():
    class Stopped(KernelRLS):
        def _fit(self, graph, codes, n_classes):
            self.n_iter_, self.converged_, self.stop_reason_ = 7, False, "max_iter"
            self.criteria_ = {"residual": (0.25, 1e-4), "errors": (3, "stop when they stop falling")}
            return np.zeros((codes.size, n_classes))

    with pytest.warns(ConvergenceWarning, match=r"Stopped did not converge after 7 iterations "
                                                r"\(stop: max_iter\): residual = 0\.25 \(tol 0\.0001\), "
                                                r"errors = 3 \(stop when they stop falling\)"):
        Stopped().fit(*_tiny())


@pytest.mark.parametrize("name, params", [
    ("multiclass_mbo", {}),                          # a fixed number of MBO steps
    ("volume_mbo", {"max_iter": 3}),                 # with noise: a fixed number of steps
    ("mtv", {"max_iter": 5, "rel_tol": 0.0, "n_trials": 1}),   # rel_tol 0: a fixed budget
    ("lapsvm_pcg", {"stopping": "stability", "check_every": 1}),  # its early stop met its rule
    ("rls", {}), ("laplace", {}), ("spectral_clustering", {}),
])
def test_converged_fixed_budget_and_direct_fits_do_not_warn(blobs, name, params):
    import warnings

    g, y, yl = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert make_solver(name, params).fit(g, yl, n_classes=3).converged_


def test_label_spreading_warns_once_from_the_base_class(blobs):
    """scikit-learn's own warning (no solver, no criterion) gives way to the base class's."""
    import warnings

    g, y, yl = blobs
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LabelSpreadingBaseline(n_neighbors=7, max_iter=2).fit(g, yl, 3)
    conv = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1 and conv[0].startswith("LabelSpreadingBaseline did not converge after 2")


@pytest.mark.parametrize("name", ["volume_mbo", "multiclass_mbo", "mtv", "ssdl_ga", "kmeans",
                                  "spectral_clustering"])
def test_an_unseeded_fit_leaves_numpy_global_random_state_alone(blobs, name):
    """random_state=None draws fresh entropy: library code never advances np.random's state
    (scikit-learn's check_random_state(None) would hand out that singleton)."""
    graph, _, codes = blobs
    est = make_solver(name, {"random_state": None})
    if name == "ssdl_ga":
        est.set_params(max_iter=1)
    before = np.random.get_state()
    unsupervised = name in ("mtv", "kmeans", "spectral_clustering")
    est.fit(graph, np.full(codes.size, -1) if unsupervised else codes, n_classes=3)
    after = np.random.get_state()
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and before[2:] == after[2:]
