"""The weight matrix W as the graph-learning iterations read it: CSR with a zero diagonal and its
degrees, symmetric scaling S W S and renumbering, each in O(nnz) on W's own structure."""

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
