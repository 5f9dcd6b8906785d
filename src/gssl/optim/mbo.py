"""MBO schemes on a graph: volume MBO (Jacobs et al.'s "auction dynamics", its assignment
solved as a min-cost flow) and multiclass MBO.

* Volume MBO (Jacobs, Merkurjev & Esedoglu, "Auction dynamics: a volume constrained MBO scheme",
  J. Comput. Phys. 354, 2018): alternate a diffusion of the class indicators with a
  thresholding step that is an assignment problem under class-volume bounds, solved exactly by
  successive shortest paths on the classes, warm-started from the last step's class prices
  (:func:`volume_assignment`, compiled in :mod:`gssl.optim.mbo_kernels`; the paper's auction
  with eps-scaling, which gssl ran before, cost up to thousands of sweeps at tight bounds).
* Multiclass MBO (Garcia-Cardona, Merkurjev, Bertozzi, Flenner & Percus, "Multiclass data
  segmentation using diffuse interface methods on graphs", IEEE TPAMI 36(8), 2014): semi-implicit
  heat steps with a fidelity term in the span of the normalized Laplacian's lowest eigenvectors,
  then projection onto the simplex's vertices. The eigenpairs come from ARPACK's Lanczos
  iteration on a Chebyshev polynomial of W_s that sets the wanted eigenvalues apart
  (:func:`_eigenpairs`), the heat steps run on the eigenvector coefficients.

GraphLearning 1.7.5 (its C code for volume MBO, its Python for multiclass MBO) was read only to
settle what the papers leave open: the diffusion kernel on a graph (W_s^2 with the symmetrically
normalized W_s = D^-1/2 W D^-1/2), the stopping rule and the temperature (Gaussian noise on the
diffused values, the lowest-energy labels kept). Where gssl differs it says so below.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError
from .graph_learning import one_hot
from .graph_weights import scale_symmetric, zero_diagonal_weights
from .seeding import generator, legacy_random_state
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
        Wc, d = zero_diagonal_weights(W)
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
    """Volume MBO ("auction dynamics", the assignment a min-cost flow) from the Voronoi cells of
    the labeled nodes.

    Each step diffuses the class indicators U by psi = W_s (W_s U), W_s = D^-1/2 W D^-1/2, and
    re-labels the unlabeled nodes by the assignment maximizing sum_i psi[i, l_i] with class sizes
    (``volumes`` less the labeled nodes of each class) between ``volume_constraint`` and
    ``2 - volume_constraint`` times their target (:func:`volume_assignment`). The energy is the
    diffused mass across classes, sum_i sum_{c != l_i} psi_ic.

    ``temperature = 0``: stop once the energy falls by a relative ``tol`` or less (the labels of
    that step's assignment are returned). ``temperature > 0``: Gaussian noise of that standard
    deviation on psi before every assignment, ``max_iter`` steps, and the labels of lowest energy
    are returned; the noise comes from a ``numpy.random.Generator`` (``rng``: a seed, a Generator,
    or a RandomState that seeds one; None draws fresh entropy and leaves NumPy's global state
    alone), whose normals cost four fifths of a RandomState's (on digits, the 100 draws of m x k
    normals are a third of a fit). ``start``: labels to start from instead of the Voronoi cells.
    Returns (labels, psi of the returned labels, info dict: energy, iterations, energy_decrease:
    the last relative decrease, NaN with noise).
    """
    from .mbo_kernels import assign_within_bounds
    from .mbo_step_kernels import add_rows
    from .neighbour_sums import diffuse_changes, diffuse_indicators

    Ws = _normalized_adjacency(W, "volume MBO")
    n, k = Ws.shape[0], int(volumes.size)
    rng = generator(rng)
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
            vals = rng.standard_normal((m, k))
            add_rows(vals, psi, free_rows, float(temperature))
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
            decrease = 0.0 if energy == 0 else (old - energy) / energy
            if decrease < tol:
                break
            old = energy
    if temperature == 0:
        psi, energy = diffuse(labels)
        best = (energy, labels, psi)
    # the noiseless stop rule's last value (a solver's criteria_; inf after one step)
    return best[1], best[2], {"energy": best[0], "iterations": it,
                              "energy_decrease": decrease if temperature == 0 else np.nan}


# -- multiclass MBO ----------------------------------------------------------------------------
NO_RANK_ONE = np.empty(0)  # chebyshev_filter's u: no rank-one term
FILTER_DEGREE = 8  # degree of the Chebyshev polynomial the eigensolver's Lanczos iteration runs on


def normalized_eigenpairs(W, n_eig: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_eig`` smallest eigenvalues of L_s = I - D^-1/2 W D^-1/2 and their eigenvectors
    (columns), ascending. GraphLearning takes the largest singular values of D^-1/2 W D^-1/2,
    which equal these where no eigenvalue of L_s is near 2 (a nearly bipartite component).
    The start vectors are fixed, so the pairs depend on W alone: the splits of a cell share them
    (built once per W inside a ``shared_graph_operators`` block)."""
    return graph_operator(W, ("normalized_eigenpairs", n_eig), lambda: _eigenpairs(W, n_eig))


def _eigenpairs(W, n_eig: int) -> tuple[np.ndarray, np.ndarray]:
    """The eigenpairs of :func:`normalized_eigenpairs`: those of the largest eigenvalues of
    W_s = D^-1/2 W D^-1/2, by ARPACK's Lanczos iteration on a polynomial of W_s.

    W_s's largest eigenvalues crowd below 1 (on MNIST's 10-NN graph the 50th and 51st differ by
    1e-3 on a spectrum 1.6 wide), so that Lanczos on W_s itself needs some 600 products and,
    above all, as many steps of ARPACK's reorthogonalization against its 101 basis vectors,
    most of the time. On p(W_s) = T_m(c1 W_s + c0) instead, the Chebyshev polynomial of degree
    m = FILTER_DEGREE mapping [-1, a] onto [-1, 1], every eigenvalue of W_s in [-1, a] (its whole
    spectrum lies in [-1, 1]) has |p| <= 1 while those above a grow steeply and in order: for
    any a below the n_eig-th largest eigenvalue, p(W_s)'s largest eigenvectors are W_s's, and
    the wanted ones stand apart, so that ARPACK converges in about a fifth of the steps (each
    with m products). The eigenvalues are then W_s's Rayleigh quotients on the vectors found
    (one product with n_eig vectors and a small symmetric eigenproblem).

    The bound a comes from :func:`_spectrum_floor`: Ritz values never exceed the eigenvalues of
    the same rank (Cauchy interlacing), so the n_eig-th Ritz value of W_s on any subspace is a
    lower bound of its n_eig-th eigenvalue. A check follows: every eigenvalue found must exceed
    a (then no eigenvalue above them was missed); otherwise, and below 2 n_eig + 50 nodes, the
    solve runs on W_s itself as before. Both give the same pairs up to ARPACK's tolerance."""
    from scipy.sparse.linalg import eigsh

    n = W.shape[0]
    S = _normalized_adjacency(W, "the normalized Laplacian")
    if n_eig >= n - 1:  # too few nodes for ARPACK: the dense solve
        mu, vecs = np.linalg.eigh(S.toarray())
        order = np.argsort(-mu)[:n_eig]
        return 1.0 - mu[order], vecs[:, order]
    v0 = np.random.default_rng(0).uniform(-1.0, 1.0, n)
    a = _spectrum_floor(W, S, n_eig) if n >= 2 * n_eig + 50 else -1.0
    if a > -0.5:  # (lower, the polynomial's gain is small)
        # [-1, a] -> [-1, 1]
        X = filtered_lanczos(S, 2.0 / (a + 1.0), (1.0 - a) / (a + 1.0), n_eig, v0)
        H = X.T @ (S @ X)  # Rayleigh-Ritz on the vectors found
        mu, Q = np.linalg.eigh(0.5 * (H + H.T))
        if mu[0] > a:
            order = np.argsort(-mu)
            return 1.0 - mu[order], X @ Q[:, order]
    mu, vecs = eigsh(S, k=n_eig, which="LA", v0=v0, tol=1e-10)
    order = np.argsort(-mu)
    return 1.0 - mu[order], vecs[:, order]


def filtered_lanczos(M: sp.csr_matrix, c1: float, c0: float, n_eig: int, v0: np.ndarray,
                     u: np.ndarray = NO_RANK_ONE) -> np.ndarray:
    """The ``n_eig`` leading eigenvectors (n, n_eig) of the Chebyshev filter T_m(c1 A + c0) of
    A = M + u u^T (m = FILTER_DEGREE; :func:`gssl.optim.neighbour_sums.chebyshev_filter`), by
    ARPACK's Lanczos iteration from ``v0`` (tol 1e-10). With c1, c0 mapping A's unwanted part of
    the spectrum onto [-1, 1], they span A's wanted eigenvectors; the caller takes the eigenpairs
    as A's Rayleigh-Ritz pairs on them and checks them against its bound."""
    from scipy.sparse.linalg import LinearOperator, eigsh

    from .neighbour_sums import chebyshev_filter

    n = M.shape[0]
    indptr, indices = M.indptr.astype(np.uint32), M.indices.astype(np.uint32)
    bufs = (np.empty(n), np.empty(n), np.empty(n))

    def filtered(x):  # (ARPACK copies the result before the next call)
        return chebyshev_filter(indptr, indices, M.data, np.ascontiguousarray(x.ravel()),
                                FILTER_DEGREE, c0, c1, *bufs, u)
    _, X = eigsh(LinearOperator((n, n), matvec=filtered, dtype=np.float64), k=n_eig, which="LA",
                 v0=v0, tol=1e-10)
    return X


def _spectrum_floor(W, S, n_eig: int) -> float:
    """A lower bound of W_s's n_eig-th largest eigenvalue (S: W_s), a little below it on kNN
    graphs (on MNIST's 10-NN graph 0.78 for 0.90; Fashion-MNIST's 0.86 for 0.96): the n_eig-th
    Ritz value of S on the span of S P, P's columns D^1/2 1_C for the graph Voronoi cells C of
    3 n_eig fixed random nodes (:func:`voronoi_labels`), D^1/2 1_C being nearly S-invariant
    where the cell's boundary is small. Ritz values are at most the eigenvalues of the same
    rank, so the bound holds whatever the cells (Cauchy interlacing); less a hundredth of its
    distance to -1, so that the eigenvalue itself stays strictly above it. -1 if the small
    eigenproblem is singular."""
    from scipy.linalg import LinAlgError, eigh

    n = S.shape[0]
    c = 3 * n_eig
    seeds = np.random.default_rng(0).choice(n, c, replace=False)
    codes = np.full(n, -1)
    codes[seeds] = np.arange(c)
    cells = voronoi_labels(W, codes)
    hit = np.flatnonzero(cells >= 0)
    d = np.asarray(W.sum(axis=1)).ravel()
    P = sp.csr_matrix((np.sqrt(d[hit]), (hit, cells[hit])), shape=(n, c))
    Y = S @ P
    G = (Y.T @ Y).toarray()
    H = (Y.T @ (S @ Y)).toarray()
    try:
        theta = eigh(0.5 * (H + H.T), 0.5 * (G + G.T), eigvals_only=True)
    except LinAlgError:
        return -1.0
    floor = float(theta[c - n_eig])  # ascending: the n_eig-th largest
    return floor - 0.01 * (floor + 1.0)


def multiclass_mbo(W, codes: np.ndarray, n_classes: int, *, n_eig: int = 50, dt: float = 0.15,
                   mu: float = 50.0, n_inner: int = 6, n_outer: int = 10,
                   random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Multiclass MBO (Garcia-Cardona et al. 2014, section 4): from random vertices of the
    simplex (the labeled nodes at their labels), ``n_outer`` times run ``n_inner`` semi-implicit
    steps of length h = dt / n_inner,

        U <- X (I + h Lambda)^-1 X^T (U - h mu J (U - F)),

    in the span X of L_s's ``n_eig`` lowest eigenvectors (eigenvalues Lambda; J: the labeled
    nodes, F: their one-hot labels), then project every row onto its nearest vertex (one-hot
    arg-max). ``random_state`` draws the start as GraphLearning does from ``np.random.rand(C, n)``:
    with an integer seed both start alike. Returns (labels, the last diffused U).

    After the first step of an MBO step U = X A stays in the span, and the steps run on the
    coefficients A (n_eig, C): A <- (I + h Lambda)^-1 (A - h mu X_J^T (X_J A - F_J)), X_J the
    labeled nodes' rows. The n-row products are then two an MBO step (X^T U of the projection,
    X A for the arg-max) instead of two a semi-implicit step, as GraphLearning's: the same
    values up to rounding.
    """
    rng = legacy_random_state(random_state)
    n = codes.size
    start = np.argmax(rng.random_sample((n_classes, n)), axis=0)  # first: GraphLearning's draw
    lam, X = normalized_eigenpairs(W, n_eig)
    labeled = np.flatnonzero(codes >= 0)
    start[labeled] = codes[labeled]
    h = dt / n_inner
    shrink = (1.0 / (1.0 + h * lam))[:, None]
    XJ = X[labeled]
    FJ = one_hot(codes[labeled], n_classes)
    hmu = h * mu
    labels = start
    for step in range(n_outer):
        # the first step from the one-hot U of the labels: X^T U sums X's rows by label
        onehot = sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(n_classes, n))
        A = shrink * ((onehot @ X).T - hmu * (XJ.T @ (one_hot(labels[labeled], n_classes) - FJ)))
        for _ in range(n_inner - 1):
            A = shrink * (A - hmu * (XJ.T @ (XJ @ A - FJ)))
        U = X @ A
        labels = np.argmax(U, axis=1)
    return labels, U
