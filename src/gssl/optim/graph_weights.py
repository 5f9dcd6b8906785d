"""The weight matrix W as the graph-learning iterations read it: CSR with a zero diagonal and its
degrees, symmetric scaling S W S and renumbering, each in O(nnz) on W's own structure; and the
arrays the compiled node loops read (:func:`kernel_graph`)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def zero_diagonal_weights(W) -> tuple[sp.csr_matrix, np.ndarray]:
    """W as CSR with a zero diagonal (self-loops do not change L but slow the iterations), and d."""
    W = sp.csr_matrix(W, dtype=np.float64)
    if W.diagonal().any():
        W = sp.csr_matrix(W - sp.diags(W.diagonal()))
        W.eliminate_zeros()
    return W, np.asarray(W.sum(axis=1)).ravel()


def scale_symmetric(W: sp.csr_matrix, s: np.ndarray) -> sp.csr_matrix:
    """S W S for S = diag(s), in O(nnz) on W's own structure (the same numbers, bit for bit, as
    the product of sparse matrices, which costs a sparse matrix product twice)."""
    W = sp.csr_matrix(W)
    rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    return sp.csr_matrix(((s[rows] * W.data) * s[W.indices], W.indices.copy(), W.indptr.copy()),
                         shape=W.shape)


def renumbered(A: sp.csr_matrix, perm: np.ndarray, position: np.ndarray) -> sp.csr_matrix:
    """``A[perm][:, perm]`` (``position`` is perm's inverse) with one copy instead of two: the rows
    are gathered, then the column indices relabelled in place (left unsorted within a row, which
    a product does not need; sorting them cost more than the second copy it saves)."""
    A = sp.csr_matrix(A[perm])
    A.indices = position[A.indices].astype(A.indices.dtype, copy=False)
    A.has_sorted_indices = False
    return A


# from this many entries of an (n, k) block of node values (2 MiB of float64, about a core's L2
# cache) the compiled node loops run in reverse Cuthill-McKee order: a node's neighbours then sit
# close in memory (Fashion-MNIST, 70,000 x 10: p-Laplace's sweeps 1.7x faster, PoissonMBO's heat
# steps 1.6x; at MNIST's 10,000 x 10 no gain)
RENUMBER_MIN_ENTRIES = 2**18


def kernel_graph(W, renumber: bool):
    """W (zero diagonal) as the compiled node loops read it: uint64 indptr and indices (numba then
    emits no wrap-around test of a negative index per neighbour, a third of a sweep's time),
    its weights, and with ``renumber`` the reverse Cuthill-McKee order (perm, position), W
    renumbered by it; else (perm, position) are None. Fresh arrays: the caller's W is not
    shared (a cached value is made read-only)."""
    Wc, _ = zero_diagonal_weights(W)
    if not renumber:
        return Wc.indptr.astype(np.uint64), Wc.indices.astype(np.uint64), Wc.data.copy(), None, None
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    perm = reverse_cuthill_mckee(Wc, symmetric_mode=True).astype(np.intp)
    position = np.empty_like(perm)
    position[perm] = np.arange(perm.size)
    Wr = renumbered(Wc, perm, position)
    return Wr.indptr.astype(np.uint64), Wr.indices.astype(np.uint64), Wr.data, perm, position
