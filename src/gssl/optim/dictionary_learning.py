"""Sparse coding and dictionary updates of the dictionary-learning classifiers (samples are rows).

X (N, d), codes A (N, p), dictionary D (p, d) with atoms as rows (||D_i||_2 <= alpha),
reconstruction A @ D. ``lasso_codes``: argmin_A ||X - A D||^2 + lam ||A||_1; ``update_dictionary``:
the projected dictionary step of Tran et al.'s Algorithm 1; ``out_of_sample_codes``: their eq. (6)
with code targets from ``lle_targets``; ``init_dictionary``: their section 4.2. The code
regularizers: ``lle_operator`` (K = I - V, tr(A^T L_A A) = ||K A||^2 with L_A = (I - V)^T (I - V))
and ``knn_laplacian_operator`` (the incidence matrix of a heat kNN graph, K^T K = L).
Everything runs on FISTA (``gssl.optim.fista``); ``AUTHORS_INNER`` holds the settings of the
authors' released code.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .fista import fista, l1_prox, project_l2_ball

__all__ = ["AUTHORS_INNER", "init_dictionary", "knn_laplacian_operator", "lasso_codes",
           "lle_operator", "lle_targets", "out_of_sample_codes", "quadratic_loss",
           "update_dictionary"]


def lle_operator(V: sp.spmatrix) -> sp.csr_matrix:
    """K = I - V (CSR) so that tr(A^T L_A A) = ||K A||^2 with L_A = K^T K."""
    n = V.shape[0]
    return sp.csr_matrix(sp.identity(n, format="csr") - sp.csr_matrix(V))


def knn_laplacian_operator(X: np.ndarray, k: int, sigma: float | None = None):
    """(K, omega) with K^T K = L = Dg - W of the symmetric kNN heat graph (W_ij = exp(-d^2/2s^2)),
    as the incidence matrix scaled by sqrt(w_ij) (one row per edge); sigma None = mean kNN distance.
    """
    from ..graphs.knn import knn_distances

    dist, idx = knn_distances(X, k)
    s = float(np.mean(dist)) if sigma is None else float(sigma)
    n = X.shape[0]
    rows = np.repeat(np.arange(n), idx.shape[1])
    W = sp.csr_matrix((np.exp(-dist.ravel() ** 2 / (2 * s * s)), (rows, idx.ravel())), shape=(n, n))
    W = W.maximum(W.T)
    E = sp.triu(W, k=1).tocoo()
    m = E.nnz
    sq = np.sqrt(E.data)
    K = sp.csr_matrix((np.concatenate([sq, -sq]), (np.r_[np.arange(m), np.arange(m)],
                                                 np.r_[E.row, E.col])), shape=(m, n))
    return K, W, s


def lasso_codes(X, D, lam, A0=None, max_iter=200, tol=1e-6, lipschitz=None):
    """argmin_A ||X - A D||^2 + lam ||A||_1 by FISTA (rows independent, solved together)."""
    G, XDt = D @ D.T, X @ D.T
    A0 = np.zeros((X.shape[0], D.shape[0])) if A0 is None else A0
    L0 = lipschitz or 2.0 * max(np.linalg.norm(G, 2), 1e-12)
    xx = float(np.sum(X * X))

    def value_and_grad(A):  # one A G product for both
        AG = A @ G
        return quadratic_loss(xx, A, G, XDt, AG), 2.0 * (AG - XDt)

    res = fista(lambda A: quadratic_loss(xx, A, G, XDt),
                lambda A: 2.0 * (A @ G - XDt), l1_prox(lam), A0, lipschitz=L0,
                max_iter=max_iter, tol=tol, value_and_grad=value_and_grad)
    return res.x


def quadratic_loss(xx, A, G, XDt, AG=None):
    """||X - A D||^2 = ||X||^2 - 2 <A, X D^T> + <A G, A> with G = D D^T (p x p work, not p x d);
    ``AG``: the product A G where the caller has it already."""
    AG = A @ G if AG is None else AG
    return max(xx - 2.0 * float(np.vdot(A, XDt)) + float(np.vdot(AG, A)), 0.0)


def out_of_sample_codes(X_new, D, lam, rho, M, max_iter=200, tol=1e-6):
    """Eq. (6): argmin_a ||x - a D||^2 + rho ||a - m||^2 + lam ||a||_1 per row (rho scalar or (q,))."""
    rho = np.broadcast_to(np.asarray(rho, dtype=np.float64), (X_new.shape[0],))[:, None]
    G, XDt = D @ D.T, X_new @ D.T
    L0 = 2.0 * (max(np.linalg.norm(G, 2), 1e-12) + float(rho.max()))
    xx = float(np.sum(X_new * X_new))
    f = lambda A: quadratic_loss(xx, A, G, XDt) + float(np.sum(rho * (A - M) ** 2))
    grad = lambda A: 2.0 * (A @ G - XDt) + 2.0 * rho * (A - M)
    return fista(f, grad, l1_prox(lam), M.copy(), lipschitz=L0, max_iter=max_iter, tol=tol).x


def lle_targets(X_train, A_train, X_new, k, reg=1e-3):
    """m_i = sum_j lambda_ij a_j over the k nearest training samples of each new point (LLE weights)."""
    from sklearn.neighbors import NearestNeighbors

    from ..graphs.lle import barycenter_weights

    k = min(k, X_train.shape[0])
    idx = NearestNeighbors(n_neighbors=k).fit(X_train).kneighbors(X_new, return_distance=False)
    w = barycenter_weights(X_train, idx, reg, points=X_new)
    return np.einsum("ik,ikp->ip", w, A_train[idx]), idx, w


def update_dictionary(X, A, D0, alpha, max_iter=50, tol=1e-6, lipschitz=None, inner="mfista"):
    """min_{||D_i|| <= alpha} ||X - A D||^2 by projected FISTA with backtracking (monotone).

    inner="authors": the released code's variant instead (plain FISTA, L0 = 1, eta = 1.5, stop
    when the extrapolated points change by < 1e-3 in max-abs, return the extrapolated point,
    which may leave the ball slightly); see ``AUTHORS_INNER``."""
    AtA, AtX = A.T @ A, A.T @ X
    xx = float(np.sum(X * X))
    f = lambda D: max(xx - 2.0 * np.vdot(D, AtX) + np.vdot(D, AtA @ D), 0.0)
    grad = lambda D: 2.0 * (AtA @ D - AtX)
    prox = lambda V, step: project_l2_ball(V, alpha, axis=1)
    if inner == "authors":
        return fista(f, grad, prox, project_l2_ball(D0, alpha, axis=1), max_iter=max_iter,
                     **AUTHORS_INNER["dictionary"])
    L0 = lipschitz or 2.0 * max(np.linalg.norm(AtA, 2), 1e-12)
    res = fista(f, grad, prox, project_l2_ball(D0, alpha, axis=1), g=lambda D: 0.0,
                lipschitz=L0, max_iter=max_iter, tol=tol, monotone=True)
    return res


# FISTA settings of the authors' released code (github.com/ktran1/SSDL, SSDL_GU.py: sparse coding
# and dictionary update): plain FISTA, L0 = 1, eta = 1.5, stop when the extrapolated iterate
# changes by less than ``tol`` in max-abs, return the extrapolated iterate.
AUTHORS_INNER = {
    "sparse_coding": dict(lipschitz=1.0, eta=1.5, tol=0.005, stop="maxabs", output="y"),
    "dictionary": dict(lipschitz=1.0, eta=1.5, tol=1e-3, stop="maxabs", output="y"),
}


def init_dictionary(X, lab_idx, unl_idx, codes_lab, p, alpha, rng):
    """Section 4.2: p > N_l: every labeled sample then random unlabeled ones; else a random labeled
    sample of each class in turn until p; atoms scaled onto the sphere of radius alpha."""
    nl = lab_idx.size
    if p > nl:
        pool = unl_idx if unl_idx.size else lab_idx
        extra = rng.choice(pool, size=p - nl, replace=(p - nl) > pool.size)
        rows = np.concatenate([lab_idx, extra])
    else:
        per_class = [rng.permutation(lab_idx[codes_lab == c]) for c in np.unique(codes_lab)]
        rows, i = [], 0
        while len(rows) < p:
            for pc in per_class:
                if i < pc.size and len(rows) < p:
                    rows.append(pc[i])
            i += 1
        rows = np.asarray(rows)
    D = np.array(X[rows], dtype=np.float64)
    norms = np.linalg.norm(D, axis=1, keepdims=True)
    D = D * (alpha / np.where(norms > 0, norms, 1.0))
    if np.any(norms == 0):
        D[norms[:, 0] == 0] = rng.normal(size=(int((norms == 0).sum()), X.shape[1]))
        D = project_l2_ball(D, alpha) * 1.0
    return D
