"""Sparse label propagation (Jung, Hero, Mara & Jahromi 2016): the graph total variation
sum_{i<j} w_ij ||u_i - u_j||_1 minimized with the labeled nodes fixed, by the primal-dual method
of Chambolle & Pock with diagonal preconditioning, every class's indicator at once.

With D the weighted incidence matrix of :mod:`gssl.optim.graph_ops` ((D u)_e = w_e (u_i - u_j)
for the edges e = (i, j), i < j) and a dual variable Y (n_edges, C) in [-1, 1], a step is

    U_new = U - T D^T Y,  labeled rows reset to their labels,
    Y <- clip(Y + S D (2 U_new - U), -1, 1),

S = diag(1 / (2 w_e)) the paper's dual preconditioner and T = diag(2 / d_i) the primal step
GraphLearning 1.7.5 takes (its field on both directions of every edge doubles the paper's
1 / d_i), from U = 0 and Y = 0 (GraphLearning's start). GraphLearning runs the scheme one class
at a time on sparse n x n fields; here it runs on the edge list with (n_edges, C) blocks.
"""

from __future__ import annotations

import numpy as np

from ..errors import SolverError
from .graph_learning import one_hot
from .graph_weights import zero_diagonal_weights
from .graph_ops import edge_list, gradient_operator


def sparse_label_propagation(W, codes: np.ndarray, n_classes: int, *,
                             n_steps: int = 100) -> np.ndarray:
    """The primal iterate U (n, C) after ``n_steps`` primal-dual steps."""
    Wc, d = zero_diagonal_weights(W)
    if np.any(d == 0):
        raise SolverError(f"{int((d == 0).sum())} node(s) have no edge; sparse label "
                          "propagation's primal step 2 / d_i is undefined there")
    D = gradient_operator(Wc)
    DT = D.T.tocsr()
    sigma = (0.5 / edge_list(Wc)[2])[:, None]  # 1 / (2 w_e), in D's row order
    tau = (2.0 / d)[:, None]
    labeled = np.flatnonzero(codes >= 0)
    F = one_hot(codes[labeled], n_classes)
    U = np.zeros((codes.size, n_classes))
    Y = np.zeros((D.shape[0], n_classes))
    for _ in range(n_steps):
        new = U - tau * (DT @ Y)
        new[labeled] = F
        Y += sigma * (D @ (2.0 * new - U))
        np.clip(Y, -1.0, 1.0, out=Y)
        U = new
    return U
