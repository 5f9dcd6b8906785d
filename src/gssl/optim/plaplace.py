"""Game-theoretic p-Laplace learning (Flores, Calder & Lerman 2022) on a cached weight matrix W:
compiled Gauss-Seidel sweeps (:func:`gssl.optim.neighbour_sums.plaplace_sweeps`), in reverse
Cuthill-McKee order on large problems."""

from __future__ import annotations

import numpy as np

from ..errors import SolverError
from . import graph_weights
from .graph_weights import kernel_graph, zero_diagonal_weights
from .reachability import require_reached
from .shared_operators import graph_operator

def plaplace_learning(W, labeled: np.ndarray, F: np.ndarray, p: float = 10.0, *,
                      tol: float = 1e-6, max_iter: int = 100000, checked: bool = False) -> tuple[np.ndarray, int, float]:
    """Game-theoretic p-Laplace learning (Flores, Calder & Lerman 2022): each column of U solves
    (1/p) L_rw u + (1 - 2/p) L_inf u = 0 off the labeled nodes, u = F on them (p = inf: the
    infinity-Laplace equation L_inf u = 0), where L_rw u is the
    weighted neighbour mean minus u and L_inf u = (max_j u_j + min_j u_j) / 2 - u over the
    neighbours (unweighted, GraphLearning's fast variant). That is the fixed point
    u = a * mean + (1 - a) * midrange, a = 1 / (p - 1), iterated by Gauss-Seidel sweeps over the
    nodes, the columns side by side (GraphLearning: the same sweeps, one class after the other),
    each column until a sweep changes it by <= tol
    (:func:`gssl.optim.neighbour_sums.plaplace_sweeps`, compiled). The sweeps visit the nodes
    in their order, as GraphLearning's, or, from RENUMBER_MIN_ENTRIES entries of U on
    (:mod:`gssl.optim.graph_weights`),
    in reverse Cuthill-McKee order (the same fixed point; built once per W inside a
    ``shared_graph_operators`` block). Returns (U, sweeps of the slowest column, the largest
    change of the columns' last sweeps)."""
    from .neighbour_sums import plaplace_sweeps

    if not p > 2:  # p = inf: a = 0, the midrange alone (the AMLE, gssl.optim.propagation)
        raise SolverError(f"p-Laplace learning needs p > 2, got p={p!r} (p = 2 is Laplace "
                          "learning)")
    Wc, d = zero_diagonal_weights(W)
    n = Wc.shape[0]
    free = np.ones(n, dtype=bool)
    free[labeled] = False
    if np.any(d[free] == 0):
        raise SolverError(f"{int((d[free] == 0).sum())} unlabeled node(s) have no edge; p-Laplace "
                          "learning cannot reach them: rebuild the graph with a larger k")
    if not checked:  # (the caller has made sure every component holds a label)
        require_reached(Wc, labeled)
    k = F.shape[1]
    renumber = n * k >= graph_weights.RENUMBER_MIN_ENTRIES  # read at call time: tests move it
    indptr, indices, data, perm, position = graph_operator(
        W, ("kernel_graph", renumber), lambda: kernel_graph(W, renumber))
    U = np.zeros((n, k))
    if perm is None:
        U[labeled] = F
        order = np.flatnonzero(free)
    else:
        U[position[labeled]] = F
        order = np.flatnonzero(free[perm])
    t, last = plaplace_sweeps(indptr, indices, data, order.astype(np.uint64), U, 1.0 / (p - 1.0),
                              float(tol), int(max_iter))
    return (U if perm is None else U[position]), int(t), float(last.max(initial=0.0))
