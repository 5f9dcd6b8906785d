"""Modularity MBO with fidelity (Hu, Laurent, Porter & Bertozzi 2013; Boyd, Bae, Tai & Bertozzi
2018): MBO steps that diffuse the class indicators by the modularity operator's heat kernel, in
the span of its lowest eigenvectors, pull the labeled nodes towards their labels and threshold.

The modularity operator is L + (gamma / m) d d^T (L = D - W the combinatorial Laplacian, d the
degrees, m = sum(d) / 2): the gradient of the graph total variation less gamma times the
modularity's null-model term (Hu et al. 2013, section 3). Its lowest eigenpairs come from ARPACK's
shift-invert mode, each solve a sparse LU of L less a small shift and a Sherman-Morrison
correction for the rank-one term (GraphLearning 1.7.5 runs ARPACK's ``which="SM"`` on the
operator itself, which needs many more steps). GraphLearning was read to settle what the papers
leave open: 5 eigenpairs per class, the diffusion time (the geometric mean of 0.15 / ((gamma + 1)
max d) and log(||U_0|| / epsilon) / lambda_1), the fidelity steps.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError
from .graph_learning import _weights, one_hot
from .shared_operators import graph_operator

DENSE_BELOW = 500  # nodes under which the eigenpairs come from a dense solve


def modularity_eigenpairs(W, n_eig: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_eig`` smallest eigenvalues of L + (gamma / m) d d^T and their eigenvectors
    (columns), ascending; built once per (W, n_eig, gamma) inside a ``shared_graph_operators``
    block (the draws of a cell share them)."""
    return graph_operator(W, ("modularity_eigenpairs", n_eig, gamma),
                          lambda: _eigenpairs(W, n_eig, gamma))


def _eigenpairs(W, n_eig: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    from scipy.sparse.linalg import LinearOperator, eigsh, splu

    Wc, d = _weights(W)
    n = d.size
    c = gamma / (0.5 * d.sum())
    L = sp.csc_matrix(sp.diags(d) - Wc)
    if n < DENSE_BELOW or n_eig >= n - 1:
        lam, vecs = np.linalg.eigh(L.toarray() + c * np.outer(d, d))
        return lam[:n_eig], vecs[:, :n_eig]
    shift = -1e-4 * d.mean()  # below the spectrum (>= 0): L - shift I is positive definite
    lu = splu(sp.csc_matrix(L - shift * sp.identity(n, format="csc")))
    Md = lu.solve(d)
    denom = 1.0 + c * (d @ Md)

    def solve(x):  # (L + c d d^T - shift I)^-1 x by Sherman-Morrison
        y = lu.solve(np.asarray(x, dtype=np.float64).ravel())
        return y - (c * (d @ y) / denom) * Md

    op = LinearOperator((n, n), matvec=lambda x: L @ x + c * (d @ x) * d, dtype=np.float64)
    inv = LinearOperator((n, n), matvec=solve, dtype=np.float64)
    v0 = np.random.default_rng(0).uniform(-1.0, 1.0, n)
    lam, vecs = eigsh(op, k=n_eig, sigma=shift, OPinv=inv, which="LM", v0=v0, tol=1e-10)
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
    dt = diffusion_time(lam, _weights(W)[1], labeled.size, gamma, epsilon)
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
