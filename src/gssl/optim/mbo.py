"""MBO schemes on a graph: volume-constrained auction dynamics and multiclass MBO.

* Volume MBO (Jacobs, Merkurjev & Esedoglu, "Auction dynamics: a volume constrained MBO scheme",
  J. Comput. Phys. 354, 2018): alternate a diffusion of the class indicators with a
  thresholding step that is an assignment problem under class-volume bounds, solved exactly by
  successive shortest paths on the classes, warm-started from the last step's class prices
  (:func:`volume_assignment`, compiled in :mod:`gssl.optim.mbo_kernels`; the paper's auction
  with eps-scaling, which gssl ran before, cost up to thousands of sweeps at tight bounds).
* Multiclass MBO (Garcia-Cardona, Merkurjev, Bertozzi, Flenner & Percus, "Multiclass data
  segmentation using diffuse interface methods on graphs", IEEE TPAMI 36(8), 2014): semi-implicit
  heat steps with a fidelity term in the span of the normalized Laplacian's lowest eigenvectors,
  then projection onto the simplex's vertices.

GraphLearning 1.7.5 (its C code for volume MBO, its Python for multiclass MBO) was read only to
settle what the papers leave open: the diffusion kernel on a graph (W_s^2 with the symmetrically
normalized W_s = D^-1/2 W D^-1/2), the stopping rule and the temperature (Gaussian noise on the
diffused values, the lowest-energy labels kept). Where gssl differs it says so below.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ..errors import SolverError
from .graph_learning import _weights, one_hot, scale_symmetric
from .shared_operators import graph_operator


# -- the volume-constrained assignment -------------------------------------------------------
def volume_assignment(A: np.ndarray, lower, upper, *, eps: float = 1e-7, prices=None,
                      max_moves: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Labels l maximizing sum_i A[i, l_i] subject to lower_c <= #{i: l_i = c} <= upper_c.

    Successive shortest paths on the classes (:func:`gssl.optim.mbo_kernels.assign_within_bounds`,
    compiled): from the arg-max labels at the class prices, one row at a time moves along the
    cheapest path of classes from one with too many rows to one with too few, the prices
    following the path lengths so that every row stays in a best class. Equal bounds (exact
    class sizes): an optimal assignment. Unequal bounds: once every bound holds, paths between
    classes with room keep running while each gains more than ``eps``, so the result is within
    len(A) * eps of the optimum (the tests check both against a linear program). ``prices``
    warm-starts the class prices (the previous MBO step's: then few rows move). Jacobs et al.
    2018 solve the same problem by an auction with eps-scaling, which gssl used before: its price
    wars at tight bounds cost up to thousands of sweeps; these paths need no eps-scaling.
    Returns (labels, prices).
    """
    from .mbo_kernels import assign_within_bounds

    A = np.ascontiguousarray(A, dtype=np.float64)
    n, k = A.shape
    lower = np.asarray(lower, dtype=np.int64)
    upper = np.asarray(upper, dtype=np.int64)
    if k < 2:
        raise SolverError("a volume-constrained assignment needs at least 2 classes")
    if np.any(lower > upper) or lower.sum() > n or upper.sum() < n:
        raise SolverError(f"class volumes cannot hold {n} points: lower bounds {lower.tolist()} "
                          f"(sum {int(lower.sum())}), upper bounds {upper.tolist()} (sum "
                          f"{int(upper.sum())}); the lower bounds must sum to at most, the upper "
                          "to at least the number of unlabeled points")
    if not np.all(np.isfinite(A)):
        raise SolverError("the values of a volume-constrained assignment must be finite")
    p = np.zeros(k) if prices is None else np.array(prices, dtype=np.float64)
    cap = 10 * n + 1000 if max_moves is None else int(max_moves)
    labels, _, status = assign_within_bounds(A, lower, upper, p, float(eps), cap)
    if status != 0:
        raise SolverError(f"the volume-constrained assignment did not settle in {cap} moves")
    return labels, p


def class_volumes(priors: np.ndarray, n: int) -> np.ndarray:
    """Integer class sizes summing to n, proportional to ``priors`` (largest remainders)."""
    exact = np.asarray(priors, dtype=np.float64) / np.sum(priors) * n
    sizes = np.floor(exact).astype(np.int64)
    extra = n - int(sizes.sum())
    if extra:
        sizes[np.argsort(sizes - exact, kind="stable")[:extra]] += 1
    return sizes


def _normalized_adjacency(W, method: str) -> sp.csr_matrix:
    """W_s = D^-1/2 W D^-1/2 (zero diagonal) in the nodes' own order, built once per W inside a
    ``shared_graph_operators`` block (volume MBO's draws and the eigenpairs share it); SolverError
    naming ``method`` if a node has no edge (a failed build is not cached: every call raises)."""
    def build():
        Wc, d = _weights(W)
        if np.any(d == 0):
            raise SolverError(f"{int((d == 0).sum())} node(s) have no edge; {method} is undefined "
                              "there: rebuild the graph with a larger k")
        return scale_symmetric(Wc, 1.0 / np.sqrt(d))
    return graph_operator(W, "normalized_adjacency", build)


# -- volume MBO --------------------------------------------------------------------------------
def voronoi_labels(W: sp.csr_matrix, codes: np.ndarray) -> np.ndarray:
    """Each node takes the label of its nearest labeled node in the graph distance with edge
    length 1 / w_ij (hop count on a binary graph). Nodes no labeled node reaches keep -1.

    GraphLearning's C code takes the weight w_ij itself as the length, so that its Voronoi cells
    grow along the weakest edges; the inverse is the usual similarity-to-length map.
    """
    from scipy.sparse.csgraph import dijkstra

    labeled = np.flatnonzero(codes >= 0)
    lengths = sp.csr_matrix(W, dtype=np.float64, copy=True)
    lengths.data = 1.0 / lengths.data
    _, _, sources = dijkstra(lengths, directed=True, indices=labeled, min_only=True,
                             return_predecessors=True)
    out = np.full(codes.size, -1)
    hit = sources >= 0
    out[hit] = codes[sources[hit]]
    return out


def volume_mbo(W, codes: np.ndarray, volumes: np.ndarray, *, volume_constraint: float = 1.0,
               temperature: float = 0.1, max_iter: int = 100, tol: float = 1e-6,
               eps: float = 1e-7, rng=None, start=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Volume MBO (auction dynamics) from the Voronoi cells of the labeled nodes.

    Each step diffuses the class indicators U by psi = W_s (W_s U), W_s = D^-1/2 W D^-1/2, and
    re-labels the unlabeled nodes by the assignment maximizing sum_i psi[i, l_i] with class sizes
    (``volumes`` less the labeled nodes of each class) between ``volume_constraint`` and
    ``2 - volume_constraint`` times their target (:func:`volume_assignment`). The energy is the
    diffused mass across classes, sum_i sum_{c != l_i} psi_ic.

    ``temperature = 0``: stop once the energy falls by a relative ``tol`` or less (the labels of
    that step's assignment are returned). ``temperature > 0``: Gaussian noise of that standard
    deviation on psi before every assignment, ``max_iter`` steps, and the labels of lowest energy
    are returned. ``start``: labels to start from instead of the Voronoi cells.
    Returns (labels, psi of the returned labels, info dict: energy, iterations).
    """
    from .mbo_kernels import add_rows, assign_within_bounds, diffuse_changes, diffuse_indicators

    Ws = _normalized_adjacency(W, "volume MBO")
    n, k = Ws.shape[0], int(volumes.size)
    rng = check_random_state(rng)
    free = codes < 0
    left = np.maximum(volumes - np.bincount(codes[~free], minlength=k), 0)
    lower = np.floor(volume_constraint * left).astype(np.int64)
    upper = np.floor((2.0 - volume_constraint) * left).astype(np.int64)
    upper[np.argmax(left)] += max(int(free.sum()) - int(upper.sum()), 0)  # rounding slack
    free_rows = np.flatnonzero(free)
    m = free_rows.size
    if lower.sum() > m:
        raise SolverError(f"the class volumes ask for {int(lower.sum())} unlabeled points, there "
                          f"are {m}")
    indptr, indices = Ws.indptr.astype(np.uint64), Ws.indices.astype(np.uint64)
    WsT = Ws.T.tocsr()  # (its pattern: which rows a label reaches)
    tindptr, tindices = WsT.indptr.astype(np.uint64), WsT.indices.astype(np.uint64)
    nodes = np.arange(n)
    state = {"labels": None, "V": None, "psi": None, "mark": np.zeros(n, np.int64), "stamp": 1}

    def diffuse(labels):
        """psi = Ws (Ws U) of the labels (kept and brought up to date in place from the last
        call's: the same bits as summing it afresh) and the energy."""
        if state["labels"] is None:
            state["psi"], state["V"] = diffuse_indicators(indptr, indices, Ws.data, labels, k)
        else:
            diffuse_changes(indptr, indices, Ws.data, tindptr, tindices, state["labels"], labels,
                            state["V"], state["psi"], state["mark"], state["stamp"])
            state["stamp"] += 2
        state["labels"] = labels
        psi = state["psi"]
        return psi, float(psi.sum() - psi[nodes, labels].sum())

    labels = voronoi_labels(W, codes) if start is None else np.asarray(start, dtype=np.int64)
    prices, old = np.zeros(k), np.inf
    best = (np.inf, labels, None)
    it = 0
    for it in range(1, max_iter + 1):
        psi, energy = diffuse(labels)
        if temperature > 0 and energy < best[0]:
            best = (energy, labels, psi.copy())  # (psi changes in place)
        if temperature > 0 and it == max_iter:
            break  # the last step's labels are scored, not moved again
        if temperature > 0:
            vals = rng.normal(0.0, temperature, (m, k))
            add_rows(vals, psi, free_rows)
        else:
            vals = np.ascontiguousarray(psi[free_rows])
        # the assignment (volume_assignment's kernel; the bounds were checked above), warm
        # started from the last step's prices
        cap = 10 * m + 1000
        new, _, status = assign_within_bounds(vals, lower, upper, prices, float(eps), cap)
        if status != 0:
            raise SolverError(f"the volume-constrained assignment did not settle in {cap} moves")
        labels = labels.copy()
        labels[free] = new
        if temperature == 0:
            if energy == 0 or (old - energy) / energy < tol:
                break
            old = energy
    if temperature == 0:
        psi, energy = diffuse(labels)
        best = (energy, labels, psi)
    return best[1], best[2], {"energy": best[0], "iterations": it}


# -- multiclass MBO ----------------------------------------------------------------------------
def normalized_eigenpairs(W, n_eig: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_eig`` smallest eigenvalues of L_s = I - D^-1/2 W D^-1/2 and their eigenvectors
    (columns), ascending. GraphLearning takes the largest singular values of D^-1/2 W D^-1/2,
    which equal these where no eigenvalue of L_s is near 2 (a nearly bipartite component).
    The start vector is fixed, so the pairs depend on W alone: the splits of a cell share them
    (built once per W inside a ``shared_graph_operators`` block)."""
    return graph_operator(W, ("normalized_eigenpairs", n_eig), lambda: _eigenpairs(W, n_eig))


def _eigenpairs(W, n_eig: int) -> tuple[np.ndarray, np.ndarray]:
    from scipy.sparse.linalg import eigsh

    n = W.shape[0]
    S = _normalized_adjacency(W, "the normalized Laplacian")
    if n_eig >= n - 1:  # too few nodes for ARPACK: the dense solve
        mu, vecs = np.linalg.eigh(S.toarray())
        order = np.argsort(-mu)[:n_eig]
    else:
        v0 = np.random.default_rng(0).uniform(-1.0, 1.0, n)
        mu, vecs = eigsh(S, k=n_eig, which="LA", v0=v0, tol=1e-10)
        order = np.argsort(-mu)
    return 1.0 - mu[order], vecs[:, order]


def multiclass_mbo(W, codes: np.ndarray, n_classes: int, *, n_eig: int = 50, dt: float = 0.15,
                   mu: float = 50.0, n_inner: int = 6, n_outer: int = 10,
                   random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Multiclass MBO (Garcia-Cardona et al. 2014, section 4): from random vertices of the
    simplex (the labeled nodes at their labels), ``n_outer`` times run ``n_inner`` semi-implicit
    steps of length dt / n_inner,

        U <- X (I + (dt / n_inner) Lambda)^-1 X^T (U - (dt / n_inner) mu J (U - F)),

    in the span X of L_s's ``n_eig`` lowest eigenvectors (eigenvalues Lambda; J: the labeled
    nodes, F: their one-hot labels), then project every row onto its nearest vertex (one-hot
    arg-max). ``random_state`` draws the start as GraphLearning does from ``np.random.rand(C, n)``:
    with an integer seed both start alike. Returns (labels, the last diffused U).
    """
    rng = check_random_state(random_state)
    n = codes.size
    start = np.argmax(rng.random_sample((n_classes, n)), axis=0)  # first: GraphLearning's draw
    lam, X = normalized_eigenpairs(W, n_eig)
    labeled = codes >= 0
    start[labeled] = codes[labeled]
    U = one_hot(start, n_classes)
    F = one_hot(np.where(labeled, codes, 0), n_classes)
    h = dt / n_inner
    shrink = 1.0 / (1.0 + h * lam)
    J = labeled.astype(np.float64)[:, None] * (h * mu)
    for step in range(n_outer):
        for _ in range(n_inner):
            U = X @ (shrink[:, None] * (X.T @ (U - J * (U - F))))
        labels = np.argmax(U, axis=1)
        if step < n_outer - 1:  # the projection; the last diffused U is returned as the scores
            U = one_hot(labels, n_classes)
    return labels, U
