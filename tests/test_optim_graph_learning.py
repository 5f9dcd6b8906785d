"""Kernels of gssl.optim.graph_learning that the solver tests do not pin down on their own."""

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from gssl.optim.graph_learning import components, scale_symmetric


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
