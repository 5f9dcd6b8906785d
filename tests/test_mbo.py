"""Volume MBO and multiclass MBO: the volume-constrained assignment against a linear program,
invariants of the schemes, and agreement with GraphLearning 1.7.5 on the same weight matrix and
labeled set (scikit-learn digits)."""
import graphlearning as gl
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from gssl.errors import ConfigError, SolverError
from gssl.graphs.base import Graph
from gssl.optim.mbo import (class_volumes, multiclass_mbo, normalized_eigenpairs,
                            volume_assignment, volume_mbo, voronoi_labels)
from gssl.solvers.registry import make_solver

from graph_helpers import count_chebyshev_filters
from test_graph_learning import (clique_pair, codes_for, digits,  # noqa: F401  (a fixture)
                                 draw, gaussian_knn)


def volume_bounds(target, vc: float, n: int):
    """Volume MBO's class-size bounds around ``target``: vc (1 - vc above it), the largest
    class's upper bound raised until the bounds can hold all n points."""
    lower = np.floor(vc * target).astype(int)
    upper = np.floor((2 - vc) * target).astype(int)
    upper[0] += max(n - upper.sum(), 0)
    return lower, upper


def best_assignment_value(A, lower, upper):
    """The optimum of the transportation LP (its vertices are integral: the assignment's)."""
    n, k = A.shape
    rows = sp.kron(sp.identity(n), np.ones((1, k)))
    counts = sp.kron(np.ones((1, n)), sp.identity(k))
    res = linprog(-A.ravel(), A_ub=sp.vstack([counts, -counts]), b_ub=np.r_[upper, -lower],
                  A_eq=rows, b_eq=np.ones(n), bounds=(0, 1), method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("vc", [1.0, 0.8, 0.5])
def test_volume_assignment_is_optimal_within_its_bounds(vc):
    rng = np.random.default_rng(int(vc * 10))
    for _ in range(25):
        n, k = int(rng.integers(5, 50)), int(rng.integers(2, 6))
        A = rng.random((n, k)) * rng.choice([0.01, 1.0, 10.0])
        lower, upper = volume_bounds(class_volumes(rng.dirichlet(np.ones(k)), n), vc, n)
        labels, _ = volume_assignment(A, lower, upper)
        counts = np.bincount(labels, minlength=k)
        assert np.all(lower <= counts) and np.all(counts <= upper)
        assert A[np.arange(n), labels].sum() >= best_assignment_value(A, lower, upper) - n * 1e-7


def test_volume_assignment_warm_prices_give_the_same_optimum():
    rng = np.random.default_rng(3)
    A = rng.random((40, 4))
    sizes = np.array([10, 10, 10, 10])
    labels, prices = volume_assignment(A, sizes, sizes)
    again, _ = volume_assignment(A + 1e-3 * rng.random((40, 4)), sizes, sizes, prices=prices)
    best = best_assignment_value(A + 0, sizes, sizes)
    assert A[np.arange(40), labels].sum() == pytest.approx(best, abs=1e-6)
    assert np.bincount(again, minlength=4).tolist() == [10] * 4


def test_volume_assignment_refuses_bounds_that_cannot_hold_the_points():
    with pytest.raises(SolverError, match="cannot hold 5 points.*upper bounds \\[2, 2\\] \\(sum 4\\)"):
        volume_assignment(np.zeros((5, 2)), [0, 0], [2, 2])
    with pytest.raises(SolverError, match="at least 2 classes"):
        volume_assignment(np.zeros((5, 1)), [5], [5])


def test_class_volumes_sum_to_n_in_proportion():
    assert class_volumes(np.array([1, 1, 1]), 10).tolist() in ([4, 3, 3], [3, 4, 3], [3, 3, 4])
    sizes = class_volumes(np.array([0.5, 0.3, 0.2]), 1797)
    assert sizes.sum() == 1797 and np.abs(sizes - np.array([898.5, 539.1, 359.4])).max() < 1


def test_voronoi_cells_follow_the_shortest_paths():
    # a path 0 - 1 - 2 - 3 - 4 labeled at both ends; the weak edge 2-3 (length 1/w = 10) puts
    # node 2 in node 0's cell, node 3 in node 4's
    W = sp.diags([[1.0, 1.0, 0.1, 1.0]] * 2, [1, -1], shape=(5, 5)).tocsr()
    codes = np.array([0, -1, -1, -1, 1])
    assert voronoi_labels(W, codes).tolist() == [0, 0, 0, 1, 1]


def test_volume_mbo_keeps_the_labels_meets_the_volumes_and_lowers_the_energy(digits):
    X, y, W = digits
    train = draw(y, 2, 5)
    codes = codes_for(y, train)
    sizes = class_volumes(np.full(10, 0.1), y.size)
    first, _, one = volume_mbo(W, codes, sizes, temperature=0, max_iter=1)
    labels, psi, info = volume_mbo(W, codes, sizes, temperature=0)
    np.testing.assert_array_equal(labels[train], y[train])
    np.testing.assert_array_equal(np.bincount(labels, minlength=10), sizes)
    assert info["energy"] <= one["energy"] and 1 < info["iterations"] < 100
    cross = psi.sum() - psi[np.arange(y.size), labels].sum()
    assert cross == pytest.approx(info["energy"])


def test_volume_mbo_with_temperature_returns_its_lowest_energy_and_is_seeded(digits):
    X, y, W = digits
    codes = codes_for(y, draw(y, 2, 5))
    sizes = class_volumes(np.full(10, 0.1), y.size)
    a = volume_mbo(W, codes, sizes, temperature=0.1, max_iter=30, rng=7)
    b = volume_mbo(W, codes, sizes, temperature=0.1, max_iter=30, rng=7)
    c = volume_mbo(W, codes, sizes, temperature=0.1, max_iter=1, rng=7)  # the start itself
    np.testing.assert_array_equal(a[0], b[0])
    assert a[2]["energy"] <= c[2]["energy"] and a[2]["iterations"] == 30


def test_normalized_eigenpairs_match_a_dense_solve(digits):
    X, y, W = digits
    lam, vecs = normalized_eigenpairs(W, 8)
    d = np.asarray(W.sum(axis=1)).ravel()
    Ls = np.eye(d.size) - W.toarray() / np.sqrt(np.outer(d, d))
    np.testing.assert_allclose(lam, np.linalg.eigvalsh(Ls)[:8], atol=1e-8)
    np.testing.assert_allclose(Ls @ vecs, vecs * lam, atol=1e-6)


def test_the_splits_of_a_cell_share_the_eigenpairs(digits, monkeypatch):
    """Inside a shared_graph_operators block the eigenpairs of W are computed once per n_eig
    (here for two fits); outside, every call computes its own (no module-level cache keeps a
    graph alive)."""
    import gssl.optim.mbo as mbo
    from gssl.optim.shared_operators import shared_graph_operators

    X, y, W = digits
    builds = []
    compute = mbo._eigenpairs
    monkeypatch.setattr(mbo, "_eigenpairs", lambda *a: builds.append(a[1]) or compute(*a))
    assert normalized_eigenpairs(W, 8)[1] is not normalized_eigenpairs(W, 8)[1]
    assert builds == [8, 8]
    with shared_graph_operators(W):
        for seed in (1, 2):
            make_solver("multiclass_mbo", {"n_eig": 8, "random_state": seed}).fit(
                Graph(W=W), codes_for(y, draw(y, 5, seed)))
        normalized_eigenpairs(W, 6)
    assert builds == [8, 8, 8, 6]


@pytest.fixture(scope="module")
def small_digits():
    """The 10-NN graph of 500 digits (a dense eigensolve of it is quick)."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return gaussian_knn(X[:500] / 16.0)


def test_the_spectrum_floor_is_below_the_wanted_eigenvalues(small_digits):
    """The filter's bound (Ritz values of W_s on the smoothed Voronoi cells) lies below the
    n_eig-th largest eigenvalue of W_s, not far (it sets the polynomial's speed)."""
    import gssl.optim.mbo as mbo

    W = small_digits
    S = mbo._normalized_adjacency(W, "x")
    mu = np.sort(np.linalg.eigvalsh(S.toarray()))[::-1]
    for n_eig in (8, 50):
        floor = mbo._spectrum_floor(W, S, n_eig)
        assert mu[n_eig - 1] - 0.3 < floor < mu[n_eig - 1]


@pytest.mark.parametrize("floor", [None, 0.999, -1.0])
def test_the_filtered_eigensolve_gives_the_plain_pairs(small_digits, monkeypatch, floor):
    """Lanczos on the Chebyshev polynomial of W_s gives W_s's own pairs (the eigenvalues, and
    the span of the eigenvectors, to ARPACK's tolerance); a bound above the wanted eigenvalues
    (0.999: the check fails) or none (-1) falls back to Lanczos on W_s."""
    import gssl.optim.mbo as mbo

    W = small_digits
    S = mbo._normalized_adjacency(W, "x")
    mu, vecs = np.linalg.eigh(S.toarray())
    lam_dense, X_dense = 1.0 - mu[::-1][:50], vecs[:, ::-1][:, :50]
    calls = count_chebyshev_filters(monkeypatch)
    if floor is not None:
        monkeypatch.setattr(mbo, "_spectrum_floor", lambda *a: floor)
    lam, vecs = mbo._eigenpairs(W, 50)
    assert (len(calls) > 0) == (floor != -1.0)
    np.testing.assert_allclose(lam, lam_dense, atol=1e-10)
    assert np.linalg.norm(X_dense - vecs @ (vecs.T @ X_dense)) < 1e-7  # the same span
    np.testing.assert_allclose(vecs.T @ vecs, np.eye(50), atol=1e-10)


def test_multiclass_mbo_steps_on_the_coefficients_are_the_semi_implicit_steps(digits):
    """The steps on the eigenvector coefficients give GraphLearning's n-row steps
    U <- X (I + h Lambda)^-1 X^T (U - h mu J (U - F)), up to rounding: the same labels."""
    from gssl.optim.graph_learning import one_hot

    X_, y, W = digits
    codes = codes_for(y, draw(y, 1, 7))
    labels, U = multiclass_mbo(W, codes, 10, random_state=4)
    lam, X = normalized_eigenpairs(W, 50)
    rng = np.random.RandomState(4)
    start = np.argmax(rng.random_sample((10, y.size)), axis=0)
    start[codes >= 0] = codes[codes >= 0]
    V = one_hot(start, 10)
    F = one_hot(np.where(codes >= 0, codes, 0), 10)
    J = (codes >= 0)[:, None] * (0.025 * 50.0)
    for step in range(10):
        for _ in range(6):
            V = X @ ((X.T @ (V - J * (V - F))) / (1.0 + 0.025 * lam)[:, None])
        if step < 9:
            V = one_hot(np.argmax(V, axis=1), 10)
    np.testing.assert_allclose(U, V, atol=1e-10)
    np.testing.assert_array_equal(labels, np.argmax(V, axis=1))


def test_multiclass_mbo_keeps_labels_by_fidelity_and_is_seeded(digits):
    X, y, W = digits
    train = draw(y, 5, 1)
    codes = codes_for(y, train)
    a, U = multiclass_mbo(W, codes, 10, random_state=3)
    b, _ = multiclass_mbo(W, codes, 10, random_state=3)
    np.testing.assert_array_equal(a, b)
    assert np.mean(a[train] == y[train]) == 1.0 and U.shape == (y.size, 10)


# -- agreement with GraphLearning -----------------------------------------------------------------
def test_multiclass_mbo_agrees_with_graphlearning(digits):
    """Same W, labeled set and random start (np.random.seed of the same integer): the same labels.
    GraphLearning takes the eigenvectors of the largest singular values of D^-1/2 W D^-1/2 (ours:
    its largest eigenvalues), the same pairs on this graph."""
    X, y, W = digits
    for per_class, seed in ((1, 0), (5, 1)):
        train = draw(y, per_class, 20 + seed)
        ours = make_solver("multiclass_mbo", {"random_state": seed}).fit(
            Graph(W=W), codes_for(y, train)).transduction_
        np.random.seed(seed)
        theirs = gl.ssl.multiclass_mbo(W).fit_predict(train, y[train])
        assert np.mean(ours == theirs) >= 0.999


@pytest.mark.parametrize("vc", [1.0, 0.5])
def test_volume_mbo_agrees_with_graphlearning_from_the_same_start(vc, digits):
    """Noiseless, from GraphLearning's start (its C code grows the Voronoi cells with the weights
    themselves as edge lengths; ours, by default, with 1 / w): the same labels up to the float32
    arithmetic of GraphLearning's C code; with unequal bounds (vc < 1) GraphLearning's
    forward-reverse auction may stop short of the optimal assignment ours finds, so the floor is
    lower there."""
    X, y, W = digits
    train = draw(y, 5, 13)
    codes = codes_for(y, train)
    sizes = class_volumes(np.bincount(y[train], minlength=10), y.size)
    lengths_w = sp.csr_matrix(W, copy=True)
    lengths_w.data = 1.0 / lengths_w.data  # voronoi_labels inverts: lengths w, as GraphLearning
    ours, _, _ = volume_mbo(W, codes, sizes, temperature=0, volume_constraint=vc,
                            start=voronoi_labels(lengths_w, codes))
    # integer class sizes: GraphLearning truncates n * prior, so pass a fraction a hair above
    theirs = gl.ssl.volume_mbo(W, class_priors=(sizes + 0.5) / y.size, temperature=0,
                               volume_constraint=vc).fit_predict(train, y[train])
    unl = codes < 0
    assert np.mean(ours[unl] == theirs[unl]) >= (0.995 if vc == 1.0 else 0.99)


def test_volume_mbo_accuracy_agrees_with_graphlearning(digits):
    """With the default temperature (0.1: noise on both sides, so no label-for-label match) and
    exact volumes, from each one's own start: mean accuracy over 6 draws at most 2 points below
    GraphLearning's. Its C noise is rand() of the process, so its figures move with the tests
    run before it (at 1 label per class 84-90 % here; ours, whose Voronoi start grows along the
    strong edges, 92 %)."""
    X, y, W = digits
    for per_class in (1, 5):
        ours, theirs = [], []
        for seed in range(6):
            train = draw(y, per_class, 30 + seed)
            unl = np.setdiff1d(np.arange(y.size), train)
            sizes = class_volumes(np.bincount(y[train], minlength=10), y.size)
            est = make_solver("volume_mbo", {"random_state": seed}).fit(Graph(W=W), codes_for(y, train))
            ours.append(np.mean(est.transduction_[unl] == y[unl]))
            pred = gl.ssl.volume_mbo(W, class_priors=(sizes + 0.5) / y.size, temperature=0.1,
                                     volume_constraint=1.0).fit_predict(train, y[train])
            theirs.append(np.mean(pred[unl] == y[unl]))
        gap = np.mean(ours) - np.mean(theirs)
        assert gap >= -0.02, (per_class, ours, theirs)


# -- estimators -----------------------------------------------------------------------------------
def test_volume_mbo_estimator_reports_its_volumes_and_energy(digits):
    X, y, W = digits
    train = draw(y, 3, 4)
    est = make_solver("volume_mbo", {"random_state": 0}).fit(Graph(W=W), codes_for(y, train))
    assert est.fit_metrics_["volume_misfit"] <= 1.0 / y.size
    assert est.fit_metrics_["energy"] > 0 and est.n_iter_ == 100 and est.stop_reason_ == "max_iter"
    quiet = make_solver("volume_mbo", {"temperature": 0}).fit(Graph(W=W), codes_for(y, train))
    assert quiet.converged_ and quiet.stop_reason_ == "tol" and quiet.n_iter_ < 100


@pytest.mark.parametrize("solver", ["volume_mbo", "multiclass_mbo"])
def test_a_component_without_labels_errors_or_abstains(solver):
    codes = np.array([0, -1, -1, -1, 1, -1, -1, -1] + [-1] * 4)
    params = {"random_state": 0, "class_priors": "uniform"}
    with pytest.raises(SolverError, match=r"1 connected component\(s\) of the graph \(4 nodes\)"):
        make_solver(solver, params).fit(Graph(W=clique_pair(1)), codes)
    est = make_solver(solver, {**params, "unreachable": "abstain"}).fit(Graph(W=clique_pair(1)), codes)
    assert est.transduction_[8:].tolist() == [-1] * 4 and est.fit_metrics_["unreached_nodes"] == 4
    if solver == "volume_mbo":  # (multiclass MBO's random start outlives its short diffusion here)
        assert est.transduction_[1:4].tolist() == [0] * 3
        assert est.transduction_[5:8].tolist() == [1] * 3


@pytest.mark.parametrize("solver, params, message", [
    ("volume_mbo", {"class_priors": None}, "'class_priors' parameter .* class fractions. Got None"),
    ("volume_mbo", {"volume_constraint": 0}, r"'volume_constraint' parameter .* range \(0.0, 1.0\]"),
    ("volume_mbo", {"temperature": -0.1}, r"'temperature' parameter .* range \[0.0, inf\)"),
    ("multiclass_mbo", {"n_eig": 0}, r"'n_eig' parameter .* range \[1, inf\)"),
    ("multiclass_mbo", {"dt": 0}, r"'dt' parameter .* range \(0.0, inf\)"),
])
def test_bad_parameters_say_what_is_wrong(solver, params, message):
    with pytest.raises(ConfigError, match=message):
        make_solver(solver, params)


def test_volume_mbo_draws_share_the_normalized_adjacency(digits, monkeypatch):
    """Inside a block, volume MBO's draws build D^-1/2 W D^-1/2 once; the fits equal lone fits."""
    import gssl.optim.mbo as mbo
    from gssl.optim.shared_operators import shared_graph_operators

    X, y, W = digits
    draws = [codes_for(y, draw(y, 3, seed)) for seed in (1, 2)]
    alone = [make_solver("volume_mbo", {"random_state": 0}).fit(Graph(W=W), c).transduction_
             for c in draws]
    builds = []
    scale = mbo.scale_symmetric
    monkeypatch.setattr(mbo, "scale_symmetric", lambda *a: builds.append(1) or scale(*a))
    with shared_graph_operators(W):
        shared = [make_solver("volume_mbo", {"random_state": 0}).fit(Graph(W=W), c).transduction_
                  for c in draws]
    assert len(builds) == 1
    for a, b in zip(alone, shared):
        np.testing.assert_array_equal(a, b)


# -- the compiled assignment and diffusion (issue 34) ---------------------------------------------
@pytest.mark.parametrize("vc", [1.0, 0.5])
@pytest.mark.parametrize("n, k", [(400, 6), (600, 3)])
def test_volume_assignment_is_optimal_from_a_cold_and_a_warm_start(vc, n, k):
    """Hundreds of rows to move (one class worth far more than the others): the candidates,
    then the heaps take the paths (the candidates read from the classes when needed, or, from
    50 rows per pair of classes (600 rows, 3 classes), kept by the first pass); optimal against
    the linear program, cold and warm."""
    rng = np.random.default_rng(7)
    A = rng.random((n, k)) + np.r_[0.8, 0.3, np.zeros(k - 2)]
    lower, upper = volume_bounds(class_volumes(np.ones(k), n), vc, n)
    labels, prices = volume_assignment(A, lower, upper)
    counts = np.bincount(labels, minlength=k)
    assert np.all(lower <= counts) and np.all(counts <= upper)
    best = best_assignment_value(A, lower, upper)
    assert A[np.arange(n), labels].sum() >= best - (1e-9 if vc == 1.0 else n * 1e-7)
    B = A + 0.05 * rng.standard_normal((n, k))  # the next MBO step: new noise, warm prices
    again, _ = volume_assignment(B, lower, upper, prices=prices)
    counts = np.bincount(again, minlength=k)
    assert np.all(lower <= counts) and np.all(counts <= upper)
    assert B[np.arange(n), again].sum() >= best_assignment_value(B, lower, upper) - (
        1e-9 if vc == 1.0 else n * 1e-7)


def test_volume_assignment_says_when_it_runs_out_of_moves():
    A = np.tile([1.0, 0.0], (10, 1))
    with pytest.raises(SolverError, match="did not settle in 2 moves"):
        volume_assignment(A, [5, 5], [5, 5], max_moves=2)


def test_diffusion_kernel_is_scipys_product_to_the_bit(digits):
    from gssl.optim.mbo import _normalized_adjacency
    from gssl.optim.neighbour_sums import diffuse_indicators
    from gssl.optim.graph_learning import one_hot

    X, y, W = digits
    Ws = _normalized_adjacency(W, "volume MBO")
    for k in (3, 5, 10):  # the last group of four classes padded by one, three and two
        labels = np.random.default_rng(k).integers(-1, k, y.size)  # -1: no label reached it
        psi, V = diffuse_indicators(Ws.indptr.astype(np.uint64), Ws.indices.astype(np.uint64),
                                    Ws.data, labels, k)
        np.testing.assert_array_equal(psi, Ws @ (Ws @ one_hot(labels, k)))
        np.testing.assert_array_equal(V, Ws @ one_hot(labels, k))


@pytest.mark.parametrize("vc", [1.0, 0.5])
def test_volume_mbo_steps_are_optimal_assignments(vc, digits, monkeypatch):
    """Every assignment of volume MBO's steps (warm prices, noise) is optimal for its bounds."""
    import gssl.optim.mbo_kernels as kernels

    X, y, W = digits
    codes = codes_for(y, draw(y, 1, 3))
    sizes = class_volumes(np.bincount(y[codes >= 0], minlength=10), y.size)
    seen = []
    assign = kernels.assign_within_bounds

    def spy(A, lower, upper, prices, *args):
        out = assign(A, lower, upper, prices, *args)
        seen.append((A.copy(), lower.copy(), upper.copy(), out[0].copy()))
        return out
    monkeypatch.setattr(kernels, "assign_within_bounds", spy)
    volume_mbo(W, codes, sizes, volume_constraint=vc, max_iter=4, rng=0)
    assert len(seen) == 3
    for A, lower, upper, labels in seen:
        counts = np.bincount(labels, minlength=10)
        assert np.all(lower <= counts) and np.all(counts <= upper)
        slack = 1e-9 if vc == 1.0 else A.shape[0] * 1e-7
        value = A[np.arange(A.shape[0]), labels].sum()
        assert value >= best_assignment_value(A, lower, upper) - slack


def test_volume_assignment_heaps_are_rebuilt_when_full():
    """Heaps too small for the rows entering a class are rebuilt from the labels reached (the
    prices keep every row in a best class), and the paths go on to the optimum."""
    from gssl.optim import mbo_kernels

    rng = np.random.default_rng(11)
    n, k = 300, 5
    A = rng.random((n, k)) + np.array([0.9, 0.2, 0, 0, 0])
    lower = np.full(k, 50)
    upper = np.full(k, 70)
    prices = np.zeros(k)
    labels = np.argmax(A, axis=1).astype(np.int64)
    counts = np.bincount(labels, minlength=k).astype(np.int64)
    statuses, slack, moves = [], 1, 0
    while not statuses or statuses[-1] == 1:
        status, moves = mbo_kernels._augment(A, labels, counts, lower, upper, prices, 1e-7,
                                             slack, 10**6, moves)
        statuses.append(status)
        slack *= 2
    assert statuses[0] == 1 and statuses[-1] == 0 and len(statuses) > 2
    assert np.array_equal(np.bincount(labels, minlength=k), counts)
    assert np.all(lower <= counts) and np.all(counts <= upper)
    assert A[np.arange(n), labels].sum() >= best_assignment_value(A, lower, upper) - n * 1e-7


def test_diffusion_brought_up_to_date_is_summed_afresh_to_the_bit(digits):
    """An MBO step's few changed labels: only the rows they reach are summed again, and psi is
    the product of the new labels to the bit (from 0.1 % to 30 % of the labels changed)."""
    from gssl.optim.mbo import _normalized_adjacency
    from gssl.optim.neighbour_sums import diffuse_changes, diffuse_indicators
    from gssl.optim.graph_learning import one_hot

    X, y, W = digits
    Ws = _normalized_adjacency(W, "volume MBO")
    T = Ws.T.tocsr()
    arrays = (Ws.indptr.astype(np.uint64), Ws.indices.astype(np.uint64), Ws.data)
    pattern = (T.indptr.astype(np.uint64), T.indices.astype(np.uint64))
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, y.size)
    psi, V = diffuse_indicators(*arrays, labels, 10)
    mark = np.zeros(y.size, np.int64)
    for step, share in enumerate([0.001, 0.01, 0.05, 0.3, 0.02]):
        new = labels.copy()
        flip = rng.random(y.size) < share
        new[flip] = rng.integers(0, 10, int(flip.sum()))
        summed = diffuse_changes(*arrays, *pattern, labels, new, V, psi, mark, 1 + 2 * step)
        np.testing.assert_array_equal(psi, Ws @ (Ws @ one_hot(new, 10)))
        assert summed == y.size if share == 0.3 else summed < y.size
        labels = new
