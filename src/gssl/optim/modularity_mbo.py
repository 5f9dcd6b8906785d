"""Modularity MBO with fidelity (Hu, Laurent, Porter & Bertozzi 2013; Boyd, Bae, Tai & Bertozzi
2018): MBO steps that diffuse the class indicators by the modularity operator's heat kernel, in
the span of its lowest eigenvectors, pull the labeled nodes towards their labels and threshold.

The modularity operator is L + (gamma / m) d d^T (L = D - W the combinatorial Laplacian, d the
degrees, m = sum(d) / 2): the gradient of the graph total variation less gamma times the
modularity's null-model term (Hu et al. 2013, section 3). Its lowest eigenpairs come from
ARPACK's Lanczos iteration on a Chebyshev polynomial of the operator (GraphLearning 1.7.5 runs
ARPACK's ``which="SM"`` on the operator itself, which needs many more steps). GraphLearning was
read to settle what the papers leave open: 5 eigenpairs per class, the diffusion time (the geometric mean of 0.15 / ((gamma + 1)
max d) and log(||U_0|| / epsilon) / lambda_1), the fidelity steps.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError
from .graph_learning import one_hot
from .graph_weights import zero_diagonal_weights
from .shared_operators import graph_operator

DENSE_BELOW = 500  # nodes under which the eigenpairs come from a dense solve


def modularity_eigenpairs(W, n_eig: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_eig`` smallest eigenvalues of L + (gamma / m) d d^T and their eigenvectors
    (columns), ascending; built once per (W, n_eig, gamma) inside a ``shared_graph_operators``
    block (the draws of a cell share them)."""
    return graph_operator(W, ("modularity_eigenpairs", n_eig, gamma),
                          lambda: _eigenpairs(W, n_eig, gamma))


def _eigenpairs(W, n_eig: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of :func:`modularity_eigenpairs`: a dense solve on small graphs; else ARPACK's
    Lanczos iteration on a Chebyshev polynomial of the operator A = L + u u^T (u = sqrt(gamma /
    m) d), which needs no factorization: a sparse LU of L fills in beyond memory on 70,000-node
    kNN graphs. The polynomial p = T_m(c1 A + c0) maps [b, top] onto [-1, 1] (top >= A's largest
    eigenvalue by Gershgorin, b >= its n_eig-th smallest by :func:`_spectrum_ceiling`) and grows
    steeply below b, so that p(A)'s largest eigenvectors are A's lowest; the eigenvalues are
    A's Rayleigh quotients on them. A check follows: every eigenvalue found must lie below b
    (then none below them was missed); otherwise the shift-invert solve runs."""
    from .mbo import filtered_lanczos

    Wc, d = zero_diagonal_weights(W)
    n = d.size
    L = sp.csr_matrix(sp.diags(d) - Wc)
    u = np.sqrt(gamma / (0.5 * d.sum())) * d
    if n < DENSE_BELOW or n_eig >= n - 1:
        lam, vecs = np.linalg.eigh(L.toarray() + np.outer(u, u))
        return lam[:n_eig], vecs[:, :n_eig]
    top = 2.0 * d.max() + u @ u  # Gershgorin's bound of L, plus the rank-one term's eigenvalue
    b = _spectrum_ceiling(W, L, u, n_eig, top)
    if b < 0.5 * top:  # (higher, the polynomial's gain is small)
        # [b, top] -> [1, -1]
        X = filtered_lanczos(L, -2.0 / (top - b), (top + b) / (top - b), n_eig, _start(n), u)
        H = X.T @ (L @ X) + np.outer(X.T @ u, X.T @ u)  # Rayleigh-Ritz on the vectors found
        lam, Q = np.linalg.eigh(0.5 * (H + H.T))
        if lam[-1] < b:
            return lam, X @ Q
    return _shift_invert_eigenpairs(L, u, n_eig)


def _start(n: int) -> np.ndarray:
    return np.random.default_rng(0).uniform(-1.0, 1.0, n)


def _spectrum_ceiling(W, L, u, n_eig: int, top: float) -> float:
    """An upper bound of A's n_eig-th smallest eigenvalue (A = L + u u^T): the n_eig-th Ritz
    value of A on the span of (I - A / top) P, P's columns the indicators of the graph Voronoi
    cells of 3 n_eig fixed random nodes (nearly A-invariant where a cell's boundary is small).
    Ritz values are at least the eigenvalues of the same rank (Cauchy interlacing), so the bound
    holds whatever the cells; plus a hundredth, so that the eigenvalue stays strictly below it.
    ``top`` (no polynomial) if the small eigenproblem is singular."""
    from scipy.linalg import LinAlgError, eigh

    from .mbo import voronoi_labels

    n = L.shape[0]
    c = 3 * n_eig
    codes = np.full(n, -1)
    codes[np.random.default_rng(0).choice(n, c, replace=False)] = np.arange(c)
    cells = voronoi_labels(W, codes)
    hit = np.flatnonzero(cells >= 0)
    P = sp.csr_matrix((np.ones(hit.size), (hit, cells[hit])), shape=(n, c)).toarray()

    def apply(X):
        return L @ X + np.outer(u, u @ X)
    Y = P - apply(P) / top
    G, H = Y.T @ Y, Y.T @ apply(Y)
    try:
        theta = eigh(0.5 * (H + H.T), 0.5 * (G + G.T), eigvals_only=True)
    except LinAlgError:
        return top
    return float(theta[n_eig - 1]) * 1.01


def _shift_invert_eigenpairs(L, u, n_eig: int) -> tuple[np.ndarray, np.ndarray]:
    """ARPACK's shift-invert mode, each solve a sparse LU of L less a small shift and a
    Sherman-Morrison correction for the rank-one term: exact, but the LU fills in on large
    kNN graphs (the fallback of :func:`_eigenpairs`)."""
    from scipy.sparse.linalg import LinearOperator, eigsh, splu

    n = L.shape[0]
    d = np.asarray(L.diagonal())
    shift = -1e-4 * d.mean()  # below the spectrum (>= 0): L - shift I is positive definite
    lu = splu(sp.csc_matrix(L - shift * sp.identity(n, format="csc")))
    Mu = lu.solve(u)
    denom = 1.0 + u @ Mu

    def solve(x):  # (L + u u^T - shift I)^-1 x by Sherman-Morrison
        y = lu.solve(np.asarray(x, dtype=np.float64).ravel())
        return y - ((u @ y) / denom) * Mu

    op = LinearOperator((n, n), matvec=lambda x: L @ x + (u @ x) * u, dtype=np.float64)
    inv = LinearOperator((n, n), matvec=solve, dtype=np.float64)
    lam, vecs = eigsh(op, k=n_eig, sigma=shift, OPinv=inv, which="LM", v0=_start(n), tol=1e-10)
    order = np.argsort(lam)
    return lam[order], vecs[:, order]


def diffusion_time(lam: np.ndarray, d: np.ndarray, n_labeled: int, gamma: float,
                   epsilon: float) -> float:
    """GraphLearning's time step: the geometric mean of the stability bound 0.15 / ((gamma + 1)
    max d) and log(||U_0||_F / epsilon) / lambda_1, U_0 the labeled nodes' indicators
    (||U_0||_F = sqrt(#labeled)) and lambda_1 the lowest eigenvalue above round-off (one zero
    eigenvalue per graph component beyond the first; on a connected graph, the lowest)."""
    low = 0.15 / ((gamma + 1.0) * d.max())
    positive = lam[lam > 1e-10 * max(lam[-1], 1.0)]
    high = np.log(np.sqrt(n_labeled) / epsilon) / positive[0] if positive.size else 0.0
    if high <= 0:
        raise SolverError(f"modularity MBO's diffusion time is undefined: it needs a positive "
                          f"eigenvalue and epsilon = {epsilon} below sqrt(#labeled) = "
                          f"{np.sqrt(n_labeled):.3g}")
    return float(np.sqrt(low * high))


def modularity_mbo(W, codes: np.ndarray, n_classes: int, *, gamma: float = 0.5,
                   epsilon: float = 1.0, mu: float = 1.0, n_outer: int = 20, n_inner: int = 5,
                   n_eig: int | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Modularity MBO from the labeled nodes' indicators (the others zero): ``n_outer`` times

        U <- X exp(-dt Lambda) X^T U              (diffusion in the eigenvectors' span)
        U_J <- F + (1 - dt mu / n_inner)^n_inner (U_J - F)   (n_inner fidelity steps, J labeled)
        U <- one-hot of argmax U                 (thresholding; the labeled nodes too)

    X, Lambda: the ``n_eig`` (default 5 per class, as GraphLearning) lowest eigenpairs of the
    modularity operator, dt :func:`diffusion_time`. The fidelity steps of GraphLearning,
    U_J <- U_J - (dt / n_inner) mu (U_J - F), in closed form. Returns (labels, the last U before
    its thresholding, info: dt, steps taken, fixed_point: whether the labels repeated). The
    labels only depend on the last ones: once they repeat, the steps stop (GraphLearning runs
    all ``n_outer``, to the same labels).
    """
    n_eig = min(5 * n_classes if n_eig is None else n_eig, codes.size)
    lam, X = modularity_eigenpairs(W, n_eig, gamma)
    labeled = np.flatnonzero(codes >= 0)
    F = one_hot(codes[labeled], n_classes)
    dt = diffusion_time(lam, zero_diagonal_weights(W)[1], labeled.size, gamma, epsilon)
    decay = np.exp(-dt * lam)[:, None]
    keep = (1.0 - dt * mu / n_inner) ** n_inner
    n = codes.size
    A = decay * (X[labeled].T @ F)  # X^T U_0: U_0 is F on the labeled rows, zero elsewhere
    labels, settled = None, False
    for step in range(1, n_outer + 1):
        U = X @ A
        U[labeled] = F + keep * (U[labeled] - F)
        new = np.argmax(U, axis=1)
        settled = labels is not None and np.array_equal(new, labels)
        if settled:
            break  # a fixed point: the next steps start from these labels again
        labels = new
        # X^T of the one-hot labels: X's rows summed by label
        onehot = sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(n_classes, n))
        A = decay * (onehot @ X).T
    return new, U, {"dt": dt, "steps": step, "fixed_point": settled}
