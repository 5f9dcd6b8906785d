"""Numerics of the graph-based learning methods of the last decade, on a cached weight matrix W.

* Laplace learning (Zhu, Ghahramani & Lafferty 2003): the harmonic extension of the labels,
  L_uu U_u = -L_ul F, by Jacobi-preconditioned conjugate gradients on the unlabeled block; with
  the reweightings of Shi, Osher & Zhu 2017 (WNLL) and Calder & Slepcev 2019 (properly weighted).
* Poisson learning (Calder, Cook, Thorpe & Slepcev, ICML 2020): L U = B with the centred labels
  as sources, solved by CG or by the paper's random-walk iteration and its mixing-time stop.
* The MBO step of PoissonMBO (same paper): explicit heat steps with the Poisson source, then a
  volume-constrained label projection.
* Game-theoretic p-Laplace learning (Flores, Calder & Lerman 2022).

The algorithms follow the papers; GraphLearning 1.7.5 (the authors' package) was read only to
settle details the papers leave open, each noted where it applies. ``L = D - W`` throughout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError
from .block_cg import BlockCGResult, coupled_cg
from .graph_weights import renumbered, scale_symmetric, zero_diagonal_weights
from .plaplace import plaplace_learning  # noqa: F401  (its home; the older import path)
from .reachability import (components, reached_nodes, require_reached,  # noqa: F401  (the same)
                           unreached_message)
from .shared_operators import graph_operator

REWEIGHTINGS = ("none", "wnll", "properly")
R_RULES = ("median_label_distance",)  # a data-driven radius for the properly weighted Laplacian
# from this many nodes the solves run in reverse Cuthill-McKee order: below it the (n, C) blocks of
# the products stay in the caches and the ordering would only cost
RENUMBER_MIN_NODES = 200_000


@dataclass(frozen=True)
class NormalizedGraph:
    """The operators of W that Laplace and Poisson learning share, in their solve order.

    ``W``: CSR float64 with a zero diagonal; ``d`` its degrees; ``s = d^-1/2`` (0 on a node
    without edges); ``Wn = S W S`` renumbered by ``perm`` (``Wn[a, b]`` is the weight of nodes
    ``perm[a]``, ``perm[b]``; ``perm`` None: the nodes' own order). From RENUMBER_MIN_NODES nodes
    the order is reverse Cuthill-McKee: neighbours then sit close in memory, and the product
    Wn P, most of the time of a solve, reads its rows of P from the caches instead of memory."""

    W: sp.csr_matrix
    d: np.ndarray
    s: np.ndarray
    Wn: sp.csr_matrix
    perm: np.ndarray | None
    position: np.ndarray | None  # node -> its place in the solve order (perm's inverse)

    def to_solve_order(self, A: np.ndarray) -> np.ndarray:
        return A if self.perm is None else A[self.perm]

    def to_node_order(self, A: np.ndarray) -> np.ndarray:
        if self.perm is None:
            return A
        out = np.empty_like(A)
        out[self.perm] = A
        return out


def _normalized_graph(W, renumber_min_nodes: float) -> NormalizedGraph:
    W, d = zero_diagonal_weights(W)
    s = np.zeros_like(d)
    np.divide(1.0, np.sqrt(d), out=s, where=d > 0)
    if W.shape[0] < renumber_min_nodes:
        return NormalizedGraph(W, d, s, scale_symmetric(W, s), None, None)
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    # the order depends on the pattern alone, which W and Wn share; scaling after the renumbering
    # reads s in the new order, close in memory (the same products, so the same bits)
    perm = reverse_cuthill_mckee(W, symmetric_mode=True).astype(np.intp)
    position = np.empty_like(perm)
    position[perm] = np.arange(perm.size)
    Wn = scale_symmetric(renumbered(W, perm, position), s[perm])
    return NormalizedGraph(W, d, s, Wn, perm, position)


def normalized_graph(W) -> NormalizedGraph:
    """W's NormalizedGraph, built once per W inside a ``shared_graph_operators`` block."""
    threshold = RENUMBER_MIN_NODES  # read at call time: tests and benchmarks move it
    return graph_operator(W, ("normalized_graph", threshold),
                          lambda: _normalized_graph(W, threshold))


def product_into(A: sp.csr_matrix, P: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[:] = A @ P`` for a CSR A and a C-contiguous float64 (n, k) block, without allocating.

    ``A @ P`` returns a fresh (n, k) array; above glibc's largest heap block (32 MiB: 10^6 nodes
    with 4 classes) each one is a new mapping whose pages fault and are zeroed on first touch,
    which cost a CG iteration more than its arithmetic at 2 x 10^6 nodes. This calls the kernel
    behind ``A @ P`` (scipy's ``csr_matvecs``) on a buffer kept across iterations: the same sums
    in the same order, so the same bits."""
    from scipy.sparse import _sparsetools

    for name, arr in (("P", P), ("out", out)):  # ravel() of any other would write into a copy
        if arr.dtype != np.float64 or not arr.flags.c_contiguous:
            raise ValueError(f"product_into: {name} must be a C-contiguous float64 array")
    if A.dtype != np.float64 or out.shape != (A.shape[0], P.shape[1]) or P.shape[0] != A.shape[1]:
        raise ValueError(f"product_into: a float64 {A.shape} matrix times P {P.shape} does not "
                         f"fit out {out.shape}")
    out.fill(0.0)
    _sparsetools.csr_matvecs(A.shape[0], A.shape[1], P.shape[1], A.indptr, A.indices, A.data,
                             P.ravel(), out.ravel())
    return out


def identity_minus_null_space(W, ng: NormalizedGraph) -> sp.csc_matrix:
    """An orthonormal basis (n, m) of the null space of I - Wn, in ng's solve order: d^1/2 on
    each connected component with an edge, normalized (m such components; a node without edges
    has a row of I alone, which is regular). Built once per W inside a shared_graph_operators
    block."""
    def build():
        comp = components(W)
        v = ng.to_solve_order(np.sqrt(ng.d))
        c = ng.to_solve_order(comp)
        norm2 = np.bincount(c, weights=v * v)
        keep = norm2 > 0
        column = np.cumsum(keep) - 1                    # component -> its column
        rows = np.flatnonzero(keep[c])
        vals = v[rows] / np.sqrt(norm2[c[rows]])
        return sp.csc_matrix((vals, (rows, column[c[rows]])), shape=(v.size, int(keep.sum())))
    return graph_operator(W, ("identity_minus_null_space", ng.perm is not None), build)


def identity_minus_cg(ng: NormalizedGraph, rhs: np.ndarray, *, tol: float, max_iter: int,
                      fixed: np.ndarray | None = None, null_space=None,
                      alpha: float = 1.0) -> BlockCGResult:
    """Block CG (the columns share one Krylov space, ``coupled_cg``) on (I - alpha Wn) X = rhs, in
    ng's solve order; X comes back in node order (``alpha`` < 1: the regular system of the random
    walk of Zhou & Schoelkopf).

    ``fixed``: nodes held at X = 0 (the labeled nodes of Laplace learning, whose rhs rows are
    0): the system is then the unlabeled block (I - Wn)_uu, solved on the whole index set with
    those rows of the product zeroed, so the splits of a cell share one matrix instead of each
    extracting its own block (the same numbers: the fixed nodes' zeros add nothing). The product
    is written into one buffer (coupled_cg uses it before asking for the next). ``null_space``:
    the basis of I - Wn's null space when nothing is held (``identity_minus_null_space``): the
    solution is then the one in the range, whatever the rounding."""
    Wn = ng.Wn
    held = None if fixed is None else (fixed if ng.position is None else ng.position[fixed])
    buf = np.empty(rhs.shape if rhs.ndim == 2 else (rhs.shape[0], 1))

    def matvec(P):
        product_into(Wn, np.ascontiguousarray(P), buf)
        if alpha != 1.0:
            np.multiply(buf, alpha, out=buf)
        np.subtract(P, buf, out=buf)
        if held is not None:
            buf[held] = 0.0
        return buf
    cg = coupled_cg(matvec, ng.to_solve_order(rhs), tol=tol, max_iter=max_iter,
                    null_space=null_space)
    cg.X = ng.to_node_order(cg.X)
    return cg


def one_hot(codes: np.ndarray, n_classes: int) -> np.ndarray:
    """(len(codes), C) indicator rows of class indices 0..C-1."""
    return (np.asarray(codes)[:, None] == np.arange(n_classes)).astype(np.float64)


# -- Laplace learning --------------------------------------------------------------------------
def reweight(W, labeled: np.ndarray, method: str = "none", X=None, *, r: float | str = 0.1,
             alpha: float = 2.0, zeta: float = 1e7) -> sp.csr_matrix:
    """W with more weight near the labeled nodes, W' = A W + W A for a diagonal A.

    ``wnll``: a_i = n / m on the m labeled nodes, 1 elsewhere (Shi, Osher & Zhu 2017, eq. (6)).
    ``properly``: a_i = 1 + (r / dist(x_i, labeled))^alpha with the distance clipped below at
    r / (zeta - 1)^(1/alpha), so a labeled node gets zeta (Calder & Slepcev 2019, section 2; the
    defaults r = 0.1, alpha = 2, zeta = 1e7 are GraphLearning's). Needs the features X.
    ``r="median_label_distance"``: the median distance of the unlabeled nodes to the labeled set.
    """
    if method == "none":  # W itself: the operators the splits of a cell share are keyed by it
        return W
    W = sp.csr_matrix(W, dtype=np.float64)
    n, m = W.shape[0], len(labeled)
    if method == "wnll":
        a = np.ones(n)
        a[labeled] = n / m
    elif method == "properly":
        if X is None:
            raise SolverError("the properly weighted Laplacian needs node features X (distances "
                              "to the labeled points); use reweighting 'none' or 'wnll' on a "
                              "graph-only dataset")
        from sklearn.neighbors import NearestNeighbors

        nn = NearestNeighbors(n_neighbors=1).fit(X[labeled])  # sparse X is fine (no dense copy)
        dist = nn.kneighbors(X)[0][:, 0]
        if isinstance(r, str):
            if r not in R_RULES:
                raise SolverError(f"r must be a positive number or one of {list(R_RULES)}, got {r!r}")
            free = np.setdiff1d(np.arange(n), labeled)
            r = float(np.median(dist[free])) if free.size else 1.0
        dist = np.maximum(dist, r / (zeta - 1.0) ** (1.0 / alpha))
        a = 1.0 + (r / dist) ** alpha
    else:
        raise SolverError(f"reweighting must be one of {list(REWEIGHTINGS)}, got {method!r}")
    A = sp.diags(a)
    return sp.csr_matrix(A @ W + W @ A)


def laplace_learning(W, labeled: np.ndarray, F: np.ndarray, *, tol: float = 1e-6,
                     max_iter: int = 10000, checked: bool = False) -> tuple[np.ndarray, BlockCGResult]:
    """Harmonic extension U (n, C) of the labeled rows F (m, C): L U = 0 off the labeled nodes.

    A connected component without a labeled node has no harmonic extension (its block of L is
    singular): it raises SolverError instead of returning the arbitrary zeros CG would give
    (``checked=True``: the caller has already made sure every component holds a label).
    """
    ng = normalized_graph(W)
    n = ng.W.shape[0]
    free = np.ones(n, dtype=bool)
    free[labeled] = False
    if np.any(ng.d[free] == 0):
        raise SolverError(f"{int((ng.d[free] == 0).sum())} unlabeled node(s) have no edge; Laplace "
                          "learning cannot reach them: rebuild the graph with a larger k")
    if not checked:
        require_reached(W, labeled)
    # Jacobi scaling S A S v = S b, S = diag(A)^-1/2 = D_uu^-1/2, and the stop measured on that
    # system: with the properly weighted Laplacian the degrees span seven decades, and a residual
    # relative to the unscaled right-hand side would stop at once on the heavy rows. S L_uu S is
    # (I - Wn)_uu, the unlabeled block of the normalized operator the splits share
    F_all = np.zeros((n, F.shape[1]))
    F_all[labeled] = F
    rhs = ng.s[:, None] * (ng.W @ F_all)                   # S (-L_ul F) = S W_ul F on the free rows
    rhs[labeled] = 0.0
    cg = identity_minus_cg(ng, rhs, tol=tol, max_iter=max_iter, fixed=labeled)
    U = ng.s[:, None] * cg.X
    U[labeled] = F
    cg.X = U[free]
    return U, cg


# -- Poisson learning --------------------------------------------------------------------------
def poisson_source(codes: np.ndarray, n_classes: int, comp: np.ndarray | None = None) -> np.ndarray:
    """B (n, C): y_j - mean(y) at each labeled node j (one-hot rows y), 0 elsewhere (eq. (9)).

    With ``comp`` (component index per node) the mean is taken within each connected component:
    L U = B then has a solution on a graph of several components (the paper's graph is
    connected, where both agree). A component without a labeled node gets no source."""
    labeled = np.flatnonzero(codes >= 0)
    Y = one_hot(codes[labeled], n_classes)
    B = np.zeros((codes.size, n_classes))
    if comp is None:
        B[labeled] = Y - Y.mean(axis=0)
        return B
    c = comp[labeled]
    sums = np.zeros((comp.max() + 1, n_classes))
    np.add.at(sums, c, Y)
    counts = np.bincount(c, minlength=comp.max() + 1)
    B[labeled] = Y - sums[c] / counts[c][:, None]
    return B


def poisson_cg(W, B: np.ndarray, *, tol: float = 1e-3, max_iter: int = 10000):
    """U with L U = B and sum_i d_i U_i = 0, by CG on the symmetric normalized system
    (I - D^-1/2 W D^-1/2) V = D^-1/2 B, U = D^-1/2 V (as GraphLearning does; the stop is each
    column's relative residual of that system, where GraphLearning stops on the absolute norm of
    all columns' residuals). V is projected orthogonal to the system's null space, d^1/2 on each
    connected component, so sum_i d_i U_i = 0 holds on each component to rounding, on every
    CPU. Returns (U, BlockCGResult)."""
    ng = normalized_graph(W)
    cg = identity_minus_cg(ng, ng.s[:, None] * B, tol=tol, max_iter=max_iter,
                           null_space=identity_minus_null_space(W, ng))
    return ng.s[:, None] * cg.X, cg


def poisson_random_walk(W, B: np.ndarray, labeled: np.ndarray, *, min_iter: int = 50,
                        max_iter: int = 1000) -> tuple[np.ndarray, int, bool]:
    """The paper's Algorithm 1: U <- U + D^-1 (B - L U) from U = 0, run until the random walk
    started at the labeled nodes has mixed, |p_T - d / sum(d)|_inf <= 1/n with
    p_{t+1} = W D^-1 p_t (at least ``min_iter``, at most ``max_iter`` steps). Returns
    (U, steps, whether the walk mixed)."""
    W, d = zero_diagonal_weights(W)
    n = W.shape[0]
    dinv = np.zeros_like(d)
    np.divide(1.0, d, out=dinv, where=d > 0)
    P = sp.csr_matrix(sp.diags(dinv) @ W)       # D^-1 W: U <- D^-1 B + D^-1 W U
    Db = dinv[:, None] * B
    p = np.zeros(n)
    p[labeled] = 1.0 / len(labeled)
    p_inf = d / d.sum()
    walk = sp.csr_matrix(W @ sp.diags(dinv))    # W D^-1
    U = np.zeros_like(B, dtype=np.float64)
    t = 0
    def mixed():
        return np.abs(p - p_inf).max() <= 1.0 / n

    while t < max_iter and (t < min_iter or not mixed()):
        U = Db + P @ U
        p = walk @ p
        t += 1
    return U, t, bool(mixed())


# -- MBO ---------------------------------------------------------------------------------------
def volume_label_projection(scores: np.ndarray, priors: np.ndarray, weights=None, *,
                            step: float = 0.1, tol: float = 1e-3, max_iter: int = 10000):
    """Labels argmax_j s_j u_ij whose class fractions match ``priors`` to ``tol``.

    The class weights s start at ``weights`` (or 1) and take gradient steps on the volume misfit,
    s <- s - step (fraction - prior), normalized by s_0, until max |fraction - prior| <= tol
    (Calder et al. 2020, the volume-constrained step of PoissonMBO; the scores are first mapped to
    [0, 1] as GraphLearning does, so that the weights act on non-negative numbers). Like
    GraphLearning, the loop takes its last weight step after the fractions met tol (PoissonMBO
    carries the weights on, so this keeps its labels step for step), so the returned labels may
    miss tol slightly; the misfit returned is that of those labels.
    Returns (labels, weights, misfit of the returned labels).
    """
    from .mbo_step_kernels import projection_weights

    u = np.asarray(scores, dtype=np.float64)
    u = u - u.min()
    top = u.max()
    u = u / top if top > 0 else u
    k = u.shape[1]
    w = np.ones(k) if weights is None else np.array(weights, dtype=np.float64)
    priors = np.asarray(priors, dtype=np.float64)
    # the steps, compiled: per step the labels' counts, w <- w - step (fraction - prior) and
    # w / w_0; the step is taken before the test, as in GraphLearning, whose PoissonMBO carries
    # these weights on: the same labels, step by step
    w, _ = projection_weights(np.ascontiguousarray(u), w, np.ascontiguousarray(priors),
                              float(step), float(tol), int(max_iter))
    labels = np.argmax(u * w, axis=1)
    misfit = float(np.abs(np.bincount(labels, minlength=k) / u.shape[0] - priors).max())
    return labels, w, misfit


def poisson_mbo(W, B: np.ndarray, labels0: np.ndarray, priors: np.ndarray, *, mu: float = 1.0,
                n_outer: int = 20, n_inner: int = 40):
    """PoissonMBO (Calder et al. 2020, Algorithm 2) from the Poisson labels ``labels0``.

    Each outer step runs ``n_inner`` explicit heat steps with the Poisson source,
    U <- U - dt (L U - mu B), dt = 1 / max degree (stable), from the indicator of the current
    labels, then projects onto labels with the class volumes ``priors``. The class weights of the
    projection carry over between outer steps. Returns (labels, last U, projection misfit).

    The heat steps are one compiled pass per step (:func:`gssl.optim.mbo_step_kernels.heat_steps`),
    from RENUMBER_MIN_ENTRIES entries of U on in reverse Cuthill-McKee order (built once per W
    inside a ``shared_graph_operators`` block); the projection counts labels, which the order
    does not change. The sums run in another order than U - dt (d U - W U) + dt mu B: the same
    U to rounding (1e-15 at Fashion-MNIST's 70,000 nodes).
    """
    from . import graph_weights
    from .mbo_step_kernels import heat_steps

    _, d = zero_diagonal_weights(W)
    n, k = B.shape
    if not d.max(initial=0.0) > 0:
        raise SolverError("PoissonMBO needs a graph with edges (every degree is 0)")
    renumber = n * k >= graph_weights.RENUMBER_MIN_ENTRIES  # read at call time: tests move it
    indptr, indices, data, perm, position = graph_operator(
        W, ("kernel_graph", renumber), lambda: graph_weights.kernel_graph(W, renumber))
    order = (lambda A: A) if perm is None else (lambda A: A[perm])
    dt = 1.0 / d.max()
    keep = order(1.0 - dt * d)
    src = np.ascontiguousarray(order((mu * dt) * B))
    labels, w, err = order(labels0), None, np.nan
    buf = np.empty((n, k))  # (a step's U is projected before the next step overwrites it)
    for _ in range(n_outer):
        U = heat_steps(indptr, indices, data, dt, keep, one_hot(labels, k), src, int(n_inner), buf)
        labels, w, err = volume_label_projection(U, priors, w)
    if perm is not None:
        labels, U = labels[position], U[position]
    return labels, U, err
