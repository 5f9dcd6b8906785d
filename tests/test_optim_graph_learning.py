"""Kernels of gssl.optim.graph_learning that the solver tests do not pin down on their own."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import spsolve

import gssl.optim.graph_learning as kernels
from gssl.optim.block_cg import block_cg, coupled_cg
from gssl.optim.graph_learning import laplace_learning, normalized_graph, product_into
from gssl.optim.graph_weights import renumbered, scale_symmetric
from gssl.optim.reachability import components
from gssl.optim.shared_operators import graph_operator, shared_graph_operators


def _graph(n=400, seed=0):
    A = sp.random(n, n, density=0.01, random_state=seed, format="csr")
    return sp.csr_matrix(A + A.T)


def test_scale_symmetric_is_the_product_of_sparse_matrices_bit_for_bit():
    W = _graph()
    s = np.random.default_rng(1).random(W.shape[0]) + 0.1
    ref = sp.csr_matrix(sp.diags(s) @ W @ sp.diags(s))
    got = scale_symmetric(W, s)
    assert np.array_equal(got.indptr, ref.indptr) and np.array_equal(got.indices, ref.indices)
    assert np.array_equal(got.data, ref.data)  # same operations in the same order: no rounding gap
    assert got.data is not W.data  # W untouched
    assert np.array_equal(W.toarray(), _graph().toarray())


def test_components_are_the_undirected_partition():
    W = sp.csr_matrix(sp.block_diag([_graph(200, seed=3), _graph(150, seed=4), sp.csr_matrix((5, 5))]))
    ref = connected_components(W, directed=False)[1]
    got = components(W)
    n_comp = ref.max() + 1
    assert n_comp > 1 and got.max() + 1 == n_comp
    pairs = set(zip(ref.tolist(), got.tolist()))  # a bijection between the two labelings
    assert len(pairs) == n_comp


def test_renumbered_is_the_permuted_matrix():
    W = _graph()
    perm = np.random.default_rng(2).permutation(W.shape[0])
    position = np.argsort(perm)
    got = renumbered(W, perm, position)
    assert (got != W[perm][:, perm]).nnz == 0
    np.testing.assert_array_equal(W.toarray(), _graph().toarray())  # W untouched


@pytest.mark.parametrize("threshold", [np.inf, 0])  # the nodes' own order, and renumbered
def test_laplace_learning_is_the_harmonic_extension(threshold, monkeypatch):
    """The masked solve on the shared normalized operator gives L_uu U_u = W_ul F (a direct
    sparse solve), whether or not the CG runs in reverse Cuthill-McKee order."""
    monkeypatch.setattr(kernels, "RENUMBER_MIN_NODES", threshold)
    W = _graph(n=300, seed=5) + sp.diags(np.ones(299), 1) + sp.diags(np.ones(299), -1)  # connected
    W = sp.csr_matrix(W)
    labeled = np.array([3, 77, 150, 290])
    F = np.eye(4)[[0, 1, 2, 3]] + 0.5
    U, cg = laplace_learning(W, labeled, F, tol=1e-12)
    free = np.setdiff1d(np.arange(300), labeled)
    L = sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W)
    ref = spsolve(sp.csc_matrix(L[free][:, free]), W[free][:, labeled] @ F)
    np.testing.assert_allclose(U[free], ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(U[labeled], F)
    assert cg.converged and cg.X.shape == (free.size, 4)


def test_graph_operators_are_built_once_per_w_inside_a_block():
    W, other = _graph(seed=6), _graph(seed=7)
    calls = []

    def build():
        calls.append(1)
        return np.arange(3.0)

    assert graph_operator(W, "k", build) is not graph_operator(W, "k", build)  # no block: fresh
    assert len(calls) == 2
    with shared_graph_operators(W):
        first = graph_operator(W, "k", build)
        assert graph_operator(W, "k", build) is first and len(calls) == 3
        with shared_graph_operators(W):  # nested, same W: the outer block's
            assert graph_operator(W, "k", build) is first
        graph_operator(other, "k", build)  # another W (a copy, a sub-graph): not cached
        graph_operator(other, "k", build)
        assert len(calls) == 5
        with pytest.raises(ValueError, match="read-only"):  # a caller cannot change the next split's
            first[0] = 1.0
        ng = normalized_graph(W)
        assert normalized_graph(W) is ng and not ng.s.flags.writeable
        assert W.data.flags.writeable  # the caller's W stays the caller's
        assert components(W) is components(W)
    assert graph_operator(W, "k", build) is not first  # the block has ended


def test_product_into_is_the_sparse_product_bit_for_bit():
    A = _graph(seed=8)
    P = np.random.default_rng(3).standard_normal((A.shape[0], 3))
    out = np.full_like(P, np.nan)  # whatever the buffer held is overwritten
    assert product_into(A, P, out) is out
    assert np.array_equal(out, A @ P)
    with pytest.raises(ValueError, match="C-contiguous"):  # would write into a copy of out
        product_into(A, P, np.empty((3, A.shape[0])).T)
    with pytest.raises(ValueError, match="does not fit"):
        product_into(A, P, np.empty((A.shape[0], 2)))


@pytest.mark.parametrize("cg", [block_cg, coupled_cg])
def test_cg_accepts_a_product_that_reuses_its_buffer(cg):
    """identity_minus_cg's product returns one buffer every call; CG must give the bits it gives
    with a fresh array each call."""
    ng = normalized_graph(_graph(seed=9) + sp.identity(400))
    B = np.random.default_rng(4).standard_normal((400, 2))
    fresh = cg(lambda P: P - 0.5 * (ng.Wn @ P), B, tol=1e-10, max_iter=500)
    buf = np.empty_like(B)
    reused = cg(lambda P: np.subtract(P, 0.5 * product_into(ng.Wn, P, buf), out=buf), B,
                tol=1e-10, max_iter=500)
    assert fresh.converged and fresh.n_iter == reused.n_iter
    assert np.array_equal(fresh.X, reused.X)


def _numpy_cg(A, B, precond, tol, max_iter):
    """Block CG written with NumPy's operations, one per update: the compiled updates of
    block_cg must round alike."""
    X, R = np.zeros_like(B), B.copy()
    Z = R * precond[:, None] if precond is not None else R
    P, rz = Z.copy(), np.einsum("ij,ij->j", R, Z)
    stop, rr = tol ** 2 * np.einsum("ij,ij->j", B, B), np.einsum("ij,ij->j", R, R)
    it = 0
    while it < max_iter and not np.all(rr <= stop):
        AP = A @ P
        alpha = rz / np.einsum("ij,ij->j", P, AP)
        X += P * alpha
        R -= AP * alpha
        Z = R * precond[:, None] if precond is not None else R
        rz_new = np.einsum("ij,ij->j", R, Z)
        P = P * (rz_new / rz) + Z
        rz, rr, it = rz_new, np.einsum("ij,ij->j", R, R), it + 1
    return X, it


@pytest.mark.parametrize("jacobi", [False, True])
def test_block_cg_iterates_as_numpy_operations_do(jacobi):
    """The compiled updates (x += alpha p, r -= alpha Ap, p = z + beta p and the column dot
    products, summed down the rows as einsum sums them) make the same roundings as the NumPy
    expressions: the same iterates, bit for bit."""
    W = _graph(seed=3)
    A = sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel() + 0.5) - W)
    B = np.random.default_rng(5).standard_normal((A.shape[0], 3))
    precond = 1.0 / A.diagonal() if jacobi else None
    ref, n_ref = _numpy_cg(A, B, precond, 1e-10, 300)
    got = block_cg(lambda P: A @ P, B, precond=precond, tol=1e-10, max_iter=300)
    assert got.converged and got.n_iter == n_ref
    assert np.array_equal(got.X, ref)
    assert np.allclose(A @ got.X, B, atol=1e-8)


# -- block CG with one Krylov space for all columns (coupled_cg) ----------------------------------
def _clusters(n_clusters=6, size=80, seed=0):
    """Dense random clusters joined by a few weak edges: a graph whose normalized Laplacian has
    n_clusters small eigenvalues, the case the shared Krylov space is for."""
    rng = np.random.default_rng(seed)
    blocks = [sp.random(size, size, density=0.15, random_state=seed + c) for c in range(n_clusters)]
    W = sp.lil_matrix(sp.block_diag(blocks))
    for c in range(n_clusters):  # a ring of weak links between consecutive clusters
        i, j = c * size + rng.integers(size), ((c + 1) % n_clusters) * size + rng.integers(size)
        W[i, j] = 0.01
    W = sp.csr_matrix(W + W.T)
    W.setdiag(0)
    W.eliminate_zeros()
    return W


def test_coupled_cg_matches_a_direct_solve_and_takes_fewer_steps_than_one_cg_per_column():
    ng = normalized_graph(_clusters())
    n = ng.Wn.shape[0]
    A = sp.csr_matrix(sp.identity(n) - ng.Wn) + 1e-4 * sp.identity(n)
    B = np.random.default_rng(2).standard_normal((n, 6))
    got = coupled_cg(lambda P: A @ P, B, tol=1e-10, max_iter=2000)
    per_column = block_cg(lambda P: A @ P, B, tol=1e-10, max_iter=2000)
    assert got.converged and np.all(got.residual <= 1e-10)
    np.testing.assert_allclose(got.X, spsolve(sp.csc_matrix(A), B), rtol=0, atol=1e-6)
    assert np.allclose(A @ got.X - B, 0, atol=1e-8 * np.abs(B).max())
    # the block deflates the clusters' small eigenvalues that each column's CG must resolve alone
    assert got.n_iter * 2 <= per_column.n_iter, (got.n_iter, per_column.n_iter)


def test_coupled_cg_of_one_column_is_cg():
    W = _graph(seed=3)
    A = sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel() + 0.5) - W)
    b = np.random.default_rng(5).standard_normal(A.shape[0])
    got = coupled_cg(lambda P: A @ P, b, tol=1e-10, max_iter=300)
    ref = block_cg(lambda P: A @ P, b, tol=1e-10, max_iter=300)
    assert got.X.shape == b.shape and got.converged
    assert abs(got.n_iter - ref.n_iter) <= 1
    np.testing.assert_allclose(got.X, ref.X, rtol=0, atol=1e-8)


def test_coupled_cg_solves_singular_systems_with_dependent_sources():
    """Poisson learning's system: I - Wn is singular (its null vector d^1/2) and the centred
    sources sum to zero over the classes, so the block is rank deficient from the first step.
    The dependent direction is dropped, the solution is found, and it keeps the sources'
    dependence (the columns sum to zero) and lies in the range (orthogonal to d^1/2), whatever
    the BLAS kernel's rounding (test_blas_kernels.py runs this under each)."""
    ng = normalized_graph(_clusters(seed=4))
    n = ng.Wn.shape[0]
    A = sp.csr_matrix(sp.identity(n) - ng.Wn)
    v = 1.0 / ng.s                           # A's null vector, d^1/2
    B = np.zeros((n, 4))
    rng = np.random.default_rng(1)
    B[rng.choice(n, 12, replace=False), np.arange(12) % 4] = 1.0
    B -= B.mean(axis=1, keepdims=True)     # every row sums to 0 over the classes
    B -= np.outer(v, v @ B) / (v @ v)      # every column in A's range (rows still sum to 0)
    null_space = (v / np.linalg.norm(v))[:, None]
    got = coupled_cg(lambda P: A @ P, B, tol=1e-9, max_iter=2000, null_space=null_space)
    scale = np.abs(got.X).max()
    assert got.converged and np.all(got.residual <= 1e-9)
    assert np.abs(got.X.sum(axis=1)).max() <= 1e-7 * scale
    assert np.abs(v @ got.X).max() <= 1e-7 * scale * np.linalg.norm(v)


def test_block_cg_keeps_a_singular_solve_in_the_range():
    """One CG per column on the same singular system: with the null space given, a source with
    a null-space part is solved in the range (its part there dropped), and the solution is
    orthogonal to d^1/2: the range part of the solution without the null space given, which
    carries the start's null part."""
    ng = normalized_graph(_clusters(seed=4))
    n = ng.Wn.shape[0]
    A = sp.csr_matrix(sp.identity(n) - ng.Wn)
    v = 1.0 / ng.s
    N = (v / np.linalg.norm(v))[:, None]
    B = np.random.default_rng(3).standard_normal((n, 3))
    in_range = B - N @ (N.T @ B)
    got = block_cg(lambda P: A @ P, B, X0=B, tol=1e-9, max_iter=4000, null_space=N)
    assert got.converged
    assert np.abs(N.T @ got.X).max() <= 1e-12 * np.abs(got.X).max()
    np.testing.assert_allclose(A @ got.X, in_range, atol=1e-8 * np.abs(B).max())
    X0 = B + N @ np.array([[10.0, 20.0, 30.0]])
    plain = block_cg(lambda P: A @ P, in_range, X0=X0, tol=1e-9, max_iter=4000)
    np.testing.assert_allclose(N.T @ plain.X, N.T @ X0, rtol=1e-3)  # X0's null part stays
    np.testing.assert_allclose(got.X, plain.X - N @ (N.T @ plain.X), atol=1e-7 * np.abs(got.X).max())
    with pytest.raises(ValueError, match="unpreconditioned"):
        block_cg(lambda P: A @ P, B, precond=np.ones(n), null_space=N)


def test_poisson_solution_is_centred_on_every_component():
    """sum_i d_i U_i = 0 on each connected component (the null space of L on a graph of several
    pieces), and L U = B, with sources centred per component."""
    W = sp.csr_matrix(sp.block_diag([_clusters(3, 60, seed=1), _clusters(2, 50, seed=2),
                                      sp.csr_matrix((2, 2))]))
    comp = components(W)
    codes = -np.ones(W.shape[0], dtype=int)
    codes[[0, 70, 130, 185, 200, 260]] = [0, 1, 2, 0, 1, 2]
    B = kernels.poisson_source(codes, 3, comp)
    U, cg = kernels.poisson_cg(W, B, tol=1e-10)
    d = np.asarray(W.sum(axis=1)).ravel()
    assert cg.converged
    for c in range(comp.max() + 1):
        on = comp == c
        assert np.abs(d[on] @ U[on]).max() <= 1e-10 * max(np.abs(U[on]).max(), 1.0)
    L = sp.csr_matrix(sp.diags(d) - W)
    assert np.abs(L @ U - B).max() <= 1e-8


def test_coupled_cg_stops_at_once_on_zero_sources_and_reports_a_short_budget():
    A = sp.identity(50, format="csr") * 2.0
    zero = coupled_cg(lambda P: A @ P, np.zeros((50, 3)), tol=1e-8)
    assert zero.converged and zero.n_iter == 0 and np.array_equal(zero.X, np.zeros((50, 3)))
    ng = normalized_graph(_clusters())
    M = sp.csr_matrix(sp.identity(ng.Wn.shape[0]) - ng.Wn) + 1e-4 * sp.identity(ng.Wn.shape[0])
    short = coupled_cg(lambda P: M @ P, np.ones((ng.Wn.shape[0], 2)), tol=1e-12, max_iter=3)
    assert not short.converged and short.n_iter == 3 and np.all(short.residual > 1e-12)
