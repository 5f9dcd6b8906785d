"""MBO schemes on a graph: volume-constrained auction dynamics and multiclass MBO.

* Volume MBO (Jacobs, Merkurjev & Esedoglu, "Auction dynamics: a volume constrained MBO scheme",
  J. Comput. Phys. 354, 2018): alternate a diffusion of the class indicators with a
  thresholding step that is an assignment problem under class-volume bounds, solved exactly (to
  a tolerance eps) by an auction with eps-scaling (:func:`volume_assignment`).
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
WARM = 4.0**4  # warm prices start the eps-scaling at range / 256 (cold: range / 4)


def _advantage(V: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows of values V (prices taken off) and each row's class ``own``: the margin of own
    over the best other class, and that class."""
    rows = np.arange(V.shape[0])
    mine = V[rows, own]
    other = V.copy()
    other[rows, own] = -np.inf
    alt = other.argmax(axis=1)
    return mine - other[rows, alt], alt


def _evict(A, p, labels, cls, cap, eps) -> None:
    """Class ``cls`` holds more than ``cap`` rows: raise its price until the excess rows with the
    smallest margin leave for their next best class (the forward auction's bids, all at once).
    Every row stays eps-happy: those that stay had a margin >= the raise - eps."""
    members = np.flatnonzero(labels == cls)
    excess = members.size - cap
    margin, alt = _advantage(A[members] - p, labels[members])
    out = np.argpartition(margin, excess - 1)[:excess]
    p[cls] += margin[out].max() + eps
    labels[members[out]] = alt[out]


def _first_step(A, prices, eps) -> float:
    """The first eps-level: a quarter of the value range, lower from warm prices (the previous
    MBO step's, nearly right)."""
    finite = A[np.isfinite(A)]
    if not finite.size:
        return eps
    return max(float(np.ptp(finite)) / (WARM if prices is not None else 4.0), eps)


def _auction(A, caps, eps, prices, max_sweeps) -> tuple[np.ndarray, np.ndarray]:
    """Forward auction with eps-scaling for sum(caps) == len(A): every row to a class, class c
    taking exactly caps[c] rows, maximizing the total value (eps-optimal)."""
    k = A.shape[1]
    p = np.zeros(k) if prices is None else np.array(prices, dtype=np.float64)
    step = _first_step(A, prices, eps)
    while True:
        labels = np.argmax(A - p, axis=1)  # exactly happy rows; only the volumes are off
        for _ in range(max_sweeps):
            over = np.flatnonzero(np.bincount(labels, minlength=k) > caps)
            if not over.size:
                break  # none over, and the caps sum to the rows: every class is exactly full
            for c in over:
                if np.count_nonzero(labels == c) > caps[c]:
                    _evict(A, p, labels, c, caps[c], step)
        else:
            raise SolverError(f"the volume auction did not settle in {max_sweeps} sweeps at "
                              f"eps={step:g}")
        if step <= eps:
            return labels, p
        step = max(step / 4.0, eps)


def volume_assignment(A: np.ndarray, lower, upper, *, eps: float = 1e-7, prices=None,
                      max_sweeps: int = 100000) -> tuple[np.ndarray, np.ndarray]:
    """Labels l maximizing sum_i A[i, l_i] subject to lower_c <= #{i: l_i = c} <= upper_c.

    A forward auction with eps-scaling (Jacobs et al. 2018, section 4; Bertsekas' auction):
    class prices p, every row assigned to a class within eps of its best value A[i] - p,
    over-full classes raising their price by just enough to shed their excess rows, at
    eps-levels falling by 4 down to ``eps``. The result is within n * eps of the optimum (the
    tests check it against a linear program). Bounds that are not equalities become one: class c
    offers lower_c required and upper_c - lower_c optional places, and sum(upper) - n
    placeholder rows, worth 0 in an optional place and unable to take a required one, fill the
    optional places left over (exact, at the cost of those rows; a forward-reverse auction
    moving prices both ways, tried first, stopped short of the optimum on such bounds).
    ``prices`` warm-starts the prices (the previous MBO step's). Returns (labels, prices).
    """
    A = np.asarray(A, dtype=np.float64)
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
    if np.array_equal(lower, upper):
        return _auction(A, upper, eps, prices, max_sweeps)
    fill = int(upper.sum()) - n
    B = np.zeros((n + fill, 2 * k))
    B[:n, :k] = A
    B[:n, k:] = A
    B[n:, :k] = -np.inf  # placeholders never take a required place
    labels, p = _auction(B, np.r_[lower, upper - lower], eps, prices, max_sweeps)
    return labels[:n] % k, p


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
    Ws = _normalized_adjacency(W, "volume MBO")
    n, k = Ws.shape[0], int(volumes.size)
    rng = check_random_state(rng)
    free = codes < 0
    left = np.maximum(volumes - np.bincount(codes[~free], minlength=k), 0)
    lower = np.floor(volume_constraint * left).astype(np.int64)
    upper = np.floor((2.0 - volume_constraint) * left).astype(np.int64)
    upper[np.argmax(left)] += max(int(free.sum()) - int(upper.sum()), 0)  # rounding slack

    def diffuse(labels):
        psi = Ws @ (Ws @ one_hot(labels, k))
        return psi, float(psi.sum() - psi[np.arange(n), labels].sum())

    labels = voronoi_labels(W, codes) if start is None else np.asarray(start)
    prices, old = None, np.inf
    best = (np.inf, labels, None)
    it = 0
    for it in range(1, max_iter + 1):
        psi, energy = diffuse(labels)
        if temperature > 0 and energy < best[0]:
            best = (energy, labels, psi)
        if temperature > 0 and it == max_iter:
            break  # the last step's labels are scored, not moved again
        vals = psi[free] + (rng.normal(0.0, temperature, (int(free.sum()), k)) if temperature > 0 else 0.0)
        new, prices = volume_assignment(vals, lower, upper, eps=eps, prices=prices)
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
