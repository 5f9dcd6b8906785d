"""Semi-supervised dictionary learning with LLE graph regularization and active points (SSDL-GA),
after Tran et al.; USSDL is the same model with beta = 0. Also ``SparseCodingSVM`` (Table 4 of the
paper): a dictionary learned on the labeled samples only (eq. 7) with an optional knn or LLE
regularization of the codes, then an external one-vs-all linear SVM on the codes.

Layout: samples are rows. X (N, d), codes A (N, p), dictionary D (p, d) with atoms as rows
(||D_i||_2 <= alpha), reconstruction A @ D; classifier scores F = A W^T + b (N, C).
SSDL-GA objective (eq. 4 of the paper, transposed):

    ||X - A D||^2 + lam ||A||_1 + beta ||(I - V) A||^2
      + gamma ( ||Q^l o (F_l - Y)||^2 + sum_k ||Q^u_k o P_k^{r/2} o (F_u - Y_k)||^2 )
      + mu (||W||^2 + ||b||^2)

with V the LLE barycentric weights among the training samples (so tr(A L_A A^T) with
L_A = (I - V)^T (I - V) = I - V - V^T + V^T V, applied by sparse products only), Q the active-point
masks, P (N_u, C) class probabilities of the unlabeled samples (rows on the simplex).

For the unlabeled term the masks reduce to Mpos = (F_u < 1), Mneg = (F_u > -1) and the weights
wpos = P^r o Mpos (target +1), wneg = (rowsum(P^r) - P^r) o Mneg (target -1), so the classifier
update is one weighted ridge regression with bias per class (closed form) and the probability
update minimizes sum_k P_jk^r e_jk per sample with e_jk = Epos_jk + sum_c Eneg_jc - Eneg_jk.

Training uses only the training nodes (labeled + unlabeled). In the pipeline the test nodes are
excluded by ``train_mask`` and coded out of sample (eq. 6) against the training samples.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError, SolverError
from ..optim.fista import fista, l1_prox, project_l2_ball
from .base import SemiSupervisedClassifier, check_nonnegative, check_positive, require_features


# =============================================================================== numerics
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
    res = fista(lambda A: _quad(xx, A, G, XDt),
                lambda A: 2.0 * (A @ G - XDt), l1_prox(lam), A0, lipschitz=L0,
                max_iter=max_iter, tol=tol)
    return res.x


def _quad(xx, A, G, XDt):
    """||X - A D||^2 = ||X||^2 - 2 <A, X D^T> + <A G, A> with G = D D^T (p x p work, not p x d)."""
    return max(xx - 2.0 * float(np.vdot(A, XDt)) + float(np.vdot(A @ G, A)), 0.0)


def out_of_sample_codes(X_new, D, lam, rho, M, max_iter=200, tol=1e-6):
    """Eq. (6): argmin_a ||x - a D||^2 + rho ||a - m||^2 + lam ||a||_1 per row (rho scalar or (q,))."""
    rho = np.broadcast_to(np.asarray(rho, dtype=np.float64), (X_new.shape[0],))[:, None]
    G, XDt = D @ D.T, X_new @ D.T
    L0 = 2.0 * (max(np.linalg.norm(G, 2), 1e-12) + float(rho.max()))
    xx = float(np.sum(X_new * X_new))
    f = lambda A: _quad(xx, A, G, XDt) + float(np.sum(rho * (A - M) ** 2))
    grad = lambda A: 2.0 * (A @ G - XDt) + 2.0 * rho * (A - M)
    return fista(f, grad, l1_prox(lam), M.copy(), lipschitz=L0, max_iter=max_iter, tol=tol).x


def lle_targets(X_train, A_train, X_new, k, reg=1e-3):
    """m_i = sum_j lambda_ij a_j over the k nearest training samples of each new point (LLE weights)."""
    from sklearn.neighbors import NearestNeighbors

    k = min(k, X_train.shape[0])
    idx = NearestNeighbors(n_neighbors=k).fit(X_train).kneighbors(X_new, return_distance=False)
    w = _barycenter_new(X_train, X_new, idx, reg)
    return np.einsum("ik,ikp->ip", w, A_train[idx]), idx, w


def _barycenter_new(X_train, X_new, idx, reg):
    """Barycentric weights of new points over training neighbours (same rule as graphs.lle)."""
    k = idx.shape[1]
    W = np.empty(idx.shape)
    eye = np.eye(k)
    batch = max(1, (1 << 22) // max(1, k * X_train.shape[1]))
    for s in range(0, X_new.shape[0], batch):
        rows = slice(s, min(X_new.shape[0], s + batch))
        Z = X_train[idx[rows]] - X_new[rows][:, None, :]
        G = Z @ Z.transpose(0, 2, 1)
        tr = np.trace(G, axis1=1, axis2=2)
        G += np.where(tr > 0, reg * tr, reg)[:, None, None] * eye
        w = np.linalg.solve(G, np.ones((G.shape[0], k, 1)))[..., 0]
        W[rows] = w / w.sum(axis=1, keepdims=True)
    return W


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


def probability_update(E: np.ndarray, r: float) -> np.ndarray:
    """argmin_{P rows on the simplex} sum_jk P_jk^r E_jk (E >= 0, shape (N_u, C)).

    r = 1: one-hot at argmin_k E_jk. r > 1: P_jk proportional to E_jk^{-1/(r-1)}; a row with
    zero entries shares its mass equally among them (the limit).
    """
    E = np.maximum(np.asarray(E, dtype=np.float64), 0.0)
    n, C = E.shape
    if r == 1:
        P = np.zeros_like(E)
        P[np.arange(n), np.argmin(E, axis=1)] = 1.0
        return P
    zero = E <= 1e-300
    with np.errstate(divide="ignore"):
        # scale each row by its minimum positive entry before the power (no overflow)
        Epos = np.where(zero, np.inf, E)
        mins = Epos.min(axis=1, keepdims=True)
        mins = np.where(np.isfinite(mins), mins, 1.0)
        P = (Epos / mins) ** (-1.0 / (r - 1.0))
    P = P / P.sum(axis=1, keepdims=True)
    has_zero = zero.any(axis=1)
    if has_zero.any():
        P[has_zero] = zero[has_zero] / zero[has_zero].sum(axis=1, keepdims=True)
    return P


# =============================================================================== SSDL-GA core
class _Model:
    """State and objective pieces of one SSDL-GA fit (training samples only)."""

    def __init__(self, X, n_lab, Ylab, K, lam, alpha, beta, gamma, mu, r):
        self.X, self.nl, self.Y = X, n_lab, Ylab          # Y: (N_l, C) +-1
        self.K, self.lam, self.alpha = K, lam, alpha
        self.beta, self.gamma, self.mu, self.r = beta, gamma, mu, r
        self.C = Ylab.shape[1]

    # ---- masks / weights (fixed within an outer iteration) ------------------------------
    def scores(self, A):
        return A @ self.W.T + self.b

    def update_masks(self, A):
        F = self.scores(A)
        Fl, Fu = F[:self.nl], F[self.nl:]
        self.Ql = (self.Y * Fl < 1).astype(np.float64)
        self.Mpos = (Fu < 1).astype(np.float64)
        self.Mneg = (Fu > -1).astype(np.float64)

    def set_weights(self):
        Pr = self.P ** self.r
        self.wpos = Pr * self.Mpos
        self.wneg = (Pr.sum(axis=1, keepdims=True) - Pr) * self.Mneg

    def prob_costs(self, A):
        Fu = self.scores(A)[self.nl:]
        Epos = self.Mpos * (Fu - 1) ** 2
        Eneg = self.Mneg * (Fu + 1) ** 2
        return Epos + Eneg.sum(axis=1, keepdims=True) - Eneg

    # ---- objective (with current masks) -------------------------------------------------
    def class_loss(self, F):
        Fl, Fu = F[:self.nl], F[self.nl:]
        return (np.sum(self.Ql * (Fl - self.Y) ** 2) + np.sum(self.wpos * (Fu - 1) ** 2)
                + np.sum(self.wneg * (Fu + 1) ** 2))

    def class_grad_F(self, F):
        G = np.empty_like(F)
        Fl, Fu = F[:self.nl], F[self.nl:]
        G[:self.nl] = 2 * self.Ql * (Fl - self.Y)
        G[self.nl:] = 2 * (self.wpos * (Fu - 1) + self.wneg * (Fu + 1))
        return G

    def objective(self, A, D=None):
        D = self.D if D is None else D
        val = float(np.sum((self.X - A @ D) ** 2) + self.lam * np.abs(A).sum())
        if self.beta:
            val += self.beta * float(np.sum((self.K @ A) ** 2))
        if self.gamma:
            val += self.gamma * self.class_loss(self.scores(A))
        val += self.mu * (float(np.sum(self.W ** 2)) + float(np.sum(self.b ** 2)))
        return val

    # ---- steps --------------------------------------------------------------------------
    def sparse_coding(self, A, rows=None, max_iter=50, tol=1e-6, inner="mfista"):
        """FISTA on A[rows] (all rows when None) with the others fixed (batch coding of the appendix)."""
        X, D, W, b, beta, gamma = self.X, self.D, self.W, self.b, self.beta, self.gamma
        if rows is None:
            rows = np.arange(A.shape[0])
            Kr, base = (self.K, None) if beta else (None, None)
        else:
            Kr = base = None
            if beta:
                Kc = self.K[:, rows].tocsr()
                touched = np.flatnonzero(np.diff(Kc.indptr))
                Kr = Kc[touched]
                base = (self.K[touched] @ A) - Kr @ A[rows]
        Xr, G, XDt = X[rows], D @ D.T, X[rows] @ D.T
        sub = _SubLoss(self, rows) if gamma else None

        xx = float(np.sum(Xr * Xr))

        def f(Ar):
            v = _quad(xx, Ar, G, XDt)
            if beta:
                R = Kr @ Ar if base is None else base + Kr @ Ar
                v += beta * float(np.sum(R * R))
            if gamma:
                v += gamma * sub.loss(Ar @ W.T + b)
            return v

        def grad(Ar):
            g = 2.0 * (Ar @ G - XDt)
            if beta:
                R = Kr @ Ar if base is None else base + Kr @ Ar
                g += 2.0 * beta * (Kr.T @ R)
            if gamma:
                g += gamma * (sub.grad(Ar @ W.T + b) @ W)
            return g

        if inner == "authors":
            res = fista(f, grad, l1_prox(self.lam), A[rows], max_iter=max_iter,
                        **AUTHORS_INNER["sparse_coding"])
        else:
            L0 = 2.0 * max(np.linalg.norm(G, 2), 1e-12)   # backtracking raises it as needed
            res = fista(f, grad, l1_prox(self.lam), A[rows], g=lambda Z: self.lam * np.abs(Z).sum(),
                        lipschitz=L0, max_iter=max_iter, tol=tol, monotone=True)
        A = A.copy()
        A[rows] = res.x
        return A, res.n_iter

    def classifier_update(self, A, rule="exact"):
        """Weighted ridge with bias per class: min gamma sum w (f - t)^2 + mu (|w_c|^2 + b_c^2).

        rule "exact": the minimizer of (4)'s classifier subproblem (masks and P fixed): unlabeled
        sample j enters class c's ridge with weight wpos + wneg and target (wpos - wneg) / weight.
        rule "wang": the update of the authors' released code (ktran1/SSDL, SSDL_GU.py,
        ``multi_binary_classifier_update_original_Wang``, after Wang et al.'s USSDL): unlabeled
        sample j counts for class c only when all its C masks are on (-1 < f_jc < 1), then with
        weight sum_k P_jk^r and target sum_k P_jk^r y_jc(k) / weight; samples with only some masks
        on are left out (so this is not the subproblem's minimizer)."""
        N, p = A.shape
        As = np.hstack([A, np.ones((N, 1))])
        Wn = np.empty((self.C, p))
        bn = np.empty(self.C)
        reg = (self.mu / self.gamma) * np.eye(p + 1)
        if rule == "wang":
            Pr = self.P ** self.r
            both = self.Mpos * self.Mneg                       # all C masks of (j, c) on
            rs = Pr.sum(axis=1, keepdims=True)
            w_u, t_u = both * rs, both * (2.0 * Pr - rs)       # sum_k Pr y_jc(k) = Pr_c - (rs - Pr_c)
        elif rule == "exact":
            w_u, t_u = self.wpos + self.wneg, self.wpos - self.wneg
        else:
            raise ConfigError(f"classifier update rule must be 'exact' or 'wang', got {rule!r}")
        for c in range(self.C):
            omega = np.concatenate([self.Ql[:, c], w_u[:, c]])
            num = np.concatenate([self.Ql[:, c] * self.Y[:, c], t_u[:, c]])
            M = As.T @ (As * omega[:, None]) + reg
            sol = np.linalg.solve(M, As.T @ num)
            Wn[c], bn[c] = sol[:p], sol[p]
        self.W, self.b = Wn, bn


class _SubLoss:
    """Classification loss restricted to some training rows (fixed masks)."""

    def __init__(self, m: _Model, rows):
        lab = rows < m.nl
        self.li, self.ui = np.flatnonzero(lab), np.flatnonzero(~lab)
        self.Ql = m.Ql[rows[lab]]
        self.Y = m.Y[rows[lab]]
        self.wpos = m.wpos[rows[~lab] - m.nl]
        self.wneg = m.wneg[rows[~lab] - m.nl]

    def loss(self, F):
        Fl, Fu = F[self.li], F[self.ui]
        return float(np.sum(self.Ql * (Fl - self.Y) ** 2) + np.sum(self.wpos * (Fu - 1) ** 2)
                     + np.sum(self.wneg * (Fu + 1) ** 2))

    def grad(self, F):
        G = np.empty_like(F)
        G[self.li] = 2 * self.Ql * (F[self.li] - self.Y)
        Fu = F[self.ui]
        G[self.ui] = 2 * (self.wpos * (Fu - 1) + self.wneg * (Fu + 1))
        return G


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


# =============================================================================== estimators
class _MaskedFitMixin:
    """fit(..., train_mask=None, predict_mask=None): nodes outside train_mask never enter learning;
    nodes in predict_mask but not in train_mask are coded out of sample; other nodes get zero
    scores (their labels in transduction_ are meaningless). Both default to every node."""

    def fit(self, X, y, n_classes=None, validation=None, train_mask=None, predict_mask=None, *,
            graph=None):
        from ..graphs import as_graph

        graph = as_graph(X, graph)
        n = graph.n_nodes
        self._train_mask = (np.ones(n, bool) if train_mask is None
                            else np.asarray(train_mask, bool).copy())
        self._predict_mask = (np.ones(n, bool) if predict_mask is None
                              else np.asarray(predict_mask, bool).copy())
        if self._train_mask.shape != (n,) or self._predict_mask.shape != (n,):
            raise SolverError(f"train_mask / predict_mask must have one entry per node ({n})")
        y = np.asarray(y)
        if (y[~self._train_mask] != -1).any():
            raise SolverError("labeled nodes must lie inside train_mask")
        return super().fit(graph, y, n_classes=n_classes, validation=validation)  # a Graph now

    def _decision_new(self, X_new):
        X_new = np.asarray(X_new.toarray() if sp.issparse(X_new) else X_new, dtype=np.float64)
        return self._code_new(X_new) @ self.coef_.T + self.intercept_

    def _all_scores(self, graph, X, train_idx, train_scores):
        n = graph.n_nodes
        scores = np.zeros((n, self.classes_.size))
        scores[train_idx] = train_scores
        outside = self._predict_mask.copy()
        outside[train_idx] = False
        new = np.flatnonzero(outside)
        if new.size:
            t0 = time.perf_counter()
            scores[new] = self._decision_new(X[new])
            self.timings_["out_of_sample"] = time.perf_counter() - t0
        return scores


class SSDLGA(_MaskedFitMixin, SemiSupervisedClassifier):
    """SSDL-GA (Tran et al.): dictionary, sparse codes, LLE code regularization (beta), internal
    semi-supervised linear classifier with active points and class probabilities (gamma, mu, r).
    beta = 0 gives USSDL.

    Parameters: n_atoms (p), lam (l1 weight), alpha (atom norm bound), beta, gamma, mu, k (LLE
    neighbours among the training samples), r (activation exponent >= 1), lle_reg, max_iter
    (outer iterations), tol (relative objective change between outer iterations),
    sc_max_iter / dict_max_iter (FISTA iterations per step, the paper fixes 50), batch_size
    (None: whole-set sparse coding; an int: the appendix's random batches), n_epochs (batch
    passes per outer iteration), classifier_update ("exact": the minimizer of the paper's
    classifier subproblem, default; "wang": the authors' released code's update, see
    ``_Model.classifier_update``), inner_solver ("mfista": monotone FISTA, 50 iterations per
    sparse-coding / dictionary step, default; "authors": the released code's plain FISTA with
    its early stop, see ``AUTHORS_INNER``), random_state.

    Fitted: dictionary_ (p, d), codes_ (N_train, p), coef_ (C, p), intercept_ (C,),
    probabilities_ (N_u, C), train_indices_, history_ (per outer iteration: objective after each
    step, seconds per step, FISTA iterations), timings_.
    """

    def __init__(self, n_atoms=200, lam=0.3, alpha=1.0, beta=0.5, gamma=0.5, mu=1.0, k=8, r=1.7,
                 lle_reg=1e-3, max_iter=20, tol=1e-4, sc_max_iter=50, dict_max_iter=50,
                 batch_size=None, n_epochs=1, classifier_update="exact", inner_solver="mfista",
                 random_state=None):
        self.n_atoms = n_atoms
        self.lam = lam
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.mu = mu
        self.k = k
        self.r = r
        self.lle_reg = lle_reg
        self.max_iter = max_iter
        self.tol = tol
        self.sc_max_iter = sc_max_iter
        self.dict_max_iter = dict_max_iter
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.classifier_update = classifier_update
        self.inner_solver = inner_solver
        self.random_state = random_state

    def check_params(self):
        name = "ssdl_ga"
        if self.classifier_update not in ("exact", "wang"):
            raise ConfigError(f"{name}: classifier_update must be one of ['exact', 'wang'], got "
                              f"{self.classifier_update!r}")
        if self.inner_solver not in ("mfista", "authors"):
            raise ConfigError(f"{name}: inner_solver must be one of ['mfista', 'authors'], got "
                              f"{self.inner_solver!r}")
        for key in ("n_atoms", "k", "max_iter", "sc_max_iter", "dict_max_iter", "n_epochs"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ConfigError(f"{name}: {key} must be an integer >= 1, got {v!r}")
        if self.batch_size is not None and (isinstance(self.batch_size, bool) or not isinstance(
                self.batch_size, (int, np.integer)) or self.batch_size < 1):
            raise ConfigError(f"{name}: batch_size must be null or an integer >= 1, got "
                              f"{self.batch_size!r}")
        check_positive(name, lam=self.lam, alpha=self.alpha, gamma=self.gamma, mu=self.mu)
        check_nonnegative(name, beta=self.beta, lle_reg=self.lle_reg, tol=self.tol)
        if isinstance(self.r, bool) or not isinstance(self.r, (int, float)) or self.r < 1:
            raise ConfigError(f"{name}: r must be a number >= 1, got {self.r!r}")

    # ------------------------------------------------------------------------------------
    def _fit(self, graph, codes, n_classes):
        X = require_features(graph, "ssdl_ga")
        X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        rng = np.random.default_rng(self.random_state)
        self.timings_ = {}
        t0 = time.perf_counter()
        lab = np.flatnonzero((codes >= 0) & self._train_mask)
        unl = np.flatnonzero((codes < 0) & self._train_mask)
        train = np.concatenate([lab, unl])     # labeled first, as in the paper's A = [A^l, A^u]
        self.train_indices_ = train
        Xt = X[train]
        nl, C = lab.size, n_classes
        Y = 2.0 * (codes[lab][:, None] == np.arange(C)) - 1.0
        # LLE weights among the training samples (the graph's V when it covers exactly them)
        K = None
        if self.beta:
            V = None
            gV = getattr(graph, "V", None)
            if (gV is not None and train.size == graph.n_nodes
                    and int((graph.params or {}).get("k", -1)) == self.k):
                V = sp.csr_matrix(gV)[train][:, train]
            if V is None:
                from ..graphs.lle import lle_weights

                V = lle_weights(Xt, min(self.k, Xt.shape[0] - 1), self.lle_reg)
            K = lle_operator(V)
        self.timings_["lle"] = time.perf_counter() - t0
        m = _Model(Xt, nl, Y, K, self.lam, self.alpha, self.beta, self.gamma, self.mu, self.r)
        # ---- initialization (section 4.2)
        t0 = time.perf_counter()
        m.D = init_dictionary(Xt, np.arange(nl), np.arange(nl, train.size), codes[lab],
                              self.n_atoms, self.alpha, rng)
        A = lasso_codes(Xt, m.D, self.lam, max_iter=self.sc_max_iter * 4)
        As = np.hstack([A[:nl], np.ones((nl, 1))])
        sol = np.linalg.solve(As.T @ As + (self.mu / self.gamma) * np.eye(As.shape[1]), As.T @ Y)
        m.W, m.b = sol[:-1].T.copy(), sol[-1].copy()
        m.P = np.full((train.size - nl, C), 1.0 / C)
        self.timings_["init"] = time.perf_counter() - t0
        # ---- alternate updates (Algorithm 1)
        prev = None
        self.converged_, self.stop_reason_ = False, f"max_iter={self.max_iter} reached"
        nu = train.size - nl
        for it in range(1, self.max_iter + 1):
            rec = {"iteration": it}
            t = time.perf_counter()
            m.update_masks(A)
            if nu:
                m.P = probability_update(m.prob_costs(A), self.r)
            m.set_weights()
            rec["seconds_probabilities"] = time.perf_counter() - t
            rec["objective_start"] = m.objective(A)
            t = time.perf_counter()
            if self.batch_size is None or self.batch_size >= train.size:
                A, rec["sc_iterations"] = m.sparse_coding(A, None, self.sc_max_iter,
                                                          inner=self.inner_solver)
            else:
                n_it = 0
                for _ in range(self.n_epochs):
                    order = rng.permutation(train.size)
                    for s in range(0, train.size, self.batch_size):
                        A, k_it = m.sparse_coding(A, np.sort(order[s:s + self.batch_size]),
                                                  self.sc_max_iter, inner=self.inner_solver)
                        n_it += k_it
                rec["sc_iterations"] = n_it
            rec["seconds_sparse_coding"] = time.perf_counter() - t
            rec["objective_after_sparse_coding"] = m.objective(A)
            t = time.perf_counter()
            res = update_dictionary(Xt, A, m.D, self.alpha, self.dict_max_iter,
                                    inner=self.inner_solver)
            m.D = res.x
            rec["dict_iterations"] = res.n_iter
            rec["seconds_dictionary"] = time.perf_counter() - t
            rec["objective_after_dictionary"] = m.objective(A)
            t = time.perf_counter()
            m.classifier_update(A, self.classifier_update)
            rec["seconds_classifier"] = time.perf_counter() - t
            obj = m.objective(A)
            rec["objective"] = obj
            self.history_.append(rec)
            self.n_iter_ = it
            if prev is not None and abs(prev - obj) <= self.tol * max(abs(prev), 1e-12):
                self.converged_ = True
                self.stop_reason_ = f"relative objective change <= tol={self.tol}"
                break
            prev = obj
        self.dictionary_, self.codes_ = m.D, A
        self.coef_, self.intercept_ = m.W, m.b
        self.probabilities_ = m.P
        self._X_train = Xt
        return self._all_scores(graph, X, train, A @ m.W.T + m.b)

    def _code_new(self, X_new):
        if self.beta:
            M, _, _ = lle_targets(self._X_train, self.codes_, X_new, self.k, self.lle_reg)
        else:
            M = np.zeros((X_new.shape[0], self.dictionary_.shape[0]))
        return out_of_sample_codes(X_new, self.dictionary_, self.lam, self.beta, M,
                                   max_iter=4 * self.sc_max_iter)

    def transform(self, X_new):
        """Out-of-sample sparse codes (eq. 6) of new points."""
        return self._code_new(np.asarray(X_new, dtype=np.float64))


class SparseCodingSVM(_MaskedFitMixin, SemiSupervisedClassifier):
    """Table 4 of Tran et al.: dictionary and codes learned on the labeled samples only (eq. 7)
    with the code regularization ``graph_reg`` (none: plain sparse coding, beta ignored; knn: heat
    kNN Laplacian; lle: LLE Laplacian), the Laplacian scaled to trace N_l (omega); an external
    one-vs-all linear SVM on the codes, C chosen from ``Cs`` by ``cv``-fold CV; other nodes coded
    out of sample with the same regularization (LLE targets, or heat-weighted kNN means for knn)."""

    def __init__(self, graph_reg="lle", n_atoms=128, lam=0.5, alpha=1.0, beta=1.0, k=8,
                 sigma=None, lle_reg=1e-3, Cs=(0.1, 1.0, 10.0), cv=5, max_iter=20, tol=1e-4,
                 sc_max_iter=50, dict_max_iter=50, random_state=None):
        self.graph_reg = graph_reg
        self.n_atoms = n_atoms
        self.lam = lam
        self.alpha = alpha
        self.beta = beta
        self.k = k
        self.sigma = sigma
        self.lle_reg = lle_reg
        self.Cs = Cs
        self.cv = cv
        self.max_iter = max_iter
        self.tol = tol
        self.sc_max_iter = sc_max_iter
        self.dict_max_iter = dict_max_iter
        self.random_state = random_state

    def check_params(self):
        name = "sc_svm"
        if self.graph_reg not in ("none", "knn", "lle"):
            raise ConfigError(f"{name}: graph_reg must be one of ['none', 'knn', 'lle'], got "
                              f"{self.graph_reg!r}")
        for key in ("n_atoms", "k", "max_iter", "sc_max_iter", "dict_max_iter", "cv"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ConfigError(f"{name}: {key} must be an integer >= 1, got {v!r}")
        check_positive(name, lam=self.lam, alpha=self.alpha)
        check_nonnegative(name, beta=self.beta, lle_reg=self.lle_reg, tol=self.tol)
        if self.sigma is not None:
            check_positive(name, sigma=self.sigma)
        if not self.Cs or any(not (isinstance(c, (int, float)) and c > 0) for c in self.Cs):
            raise ConfigError(f"{name}: Cs must be a non-empty list of positive numbers, got {self.Cs!r}")

    def _fit(self, graph, codes, n_classes):
        from sklearn.model_selection import GridSearchCV, StratifiedKFold
        from sklearn.svm import LinearSVC

        X = require_features(graph, "sc_svm")
        X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        rng = np.random.default_rng(self.random_state)
        self.timings_ = {}
        lab = np.flatnonzero(codes >= 0)
        Xl, nl = X[lab], lab.size
        beta = 0.0 if self.graph_reg == "none" else float(self.beta)
        K, self.omega_, self.sigma_ = None, 1.0, None
        if beta:
            if self.graph_reg == "lle":
                from ..graphs.lle import lle_weights

                K = lle_operator(lle_weights(Xl, min(self.k, nl - 1), self.lle_reg))
            else:
                K, _, self.sigma_ = knn_laplacian_operator(Xl, min(self.k, nl - 1), self.sigma)
            tr = float(K.multiply(K).sum())              # tr(K^T K) = tr(L_A)
            self.omega_ = nl / tr if tr > 0 else 1.0
        Y = 2.0 * (codes[lab][:, None] == np.arange(n_classes)) - 1.0
        m = _Model(Xl, nl, Y, K, self.lam, self.alpha, beta * self.omega_, 0.0, 0.0, 1.0)
        m.W, m.b = np.zeros((n_classes, self.n_atoms)), np.zeros(n_classes)
        m.D = init_dictionary(Xl, np.arange(nl), np.arange(0), codes[lab], self.n_atoms,
                              self.alpha, rng)
        A = lasso_codes(Xl, m.D, self.lam, max_iter=self.sc_max_iter * 4)
        prev = None
        self.converged_, self.stop_reason_ = False, f"max_iter={self.max_iter} reached"
        for it in range(1, self.max_iter + 1):
            A, n_sc = m.sparse_coding(A, None, self.sc_max_iter)
            m.D = update_dictionary(Xl, A, m.D, self.alpha, self.dict_max_iter).x
            obj = m.objective(A)
            self.history_.append({"iteration": it, "objective": obj, "sc_iterations": n_sc})
            self.n_iter_ = it
            if prev is not None and abs(prev - obj) <= self.tol * max(abs(prev), 1e-12):
                self.converged_, self.stop_reason_ = True, f"relative objective change <= tol={self.tol}"
                break
            prev = obj
        self.dictionary_, self.codes_, self._X_train = m.D, A, Xl
        n_splits = int(min(self.cv, np.bincount(codes[lab]).min()))
        svm = LinearSVC(random_state=0, max_iter=20000)
        if n_splits >= 2 and len(self.Cs) > 1:
            search = GridSearchCV(svm, {"C": list(self.Cs)},
                                  cv=StratifiedKFold(n_splits, shuffle=True, random_state=0))
            search.fit(A, codes[lab])
            self.svm_, self.C_ = search.best_estimator_, float(search.best_params_["C"])
        else:
            self.C_ = float(self.Cs[0])
            self.svm_ = svm.set_params(C=self.C_).fit(A, codes[lab])
        coef = np.asarray(self.svm_.coef_)
        icpt = np.asarray(self.svm_.intercept_)
        if n_classes == 2:
            coef, icpt = np.vstack([-coef, coef]), np.r_[-icpt, icpt]
        self.coef_, self.intercept_ = coef, icpt
        return self._all_scores(graph, X, lab, A @ coef.T + icpt)

    def _code_new(self, X_new):
        p = self.dictionary_.shape[0]
        beta = 0.0 if self.graph_reg == "none" else float(self.beta) * self.omega_
        if not beta:
            return out_of_sample_codes(X_new, self.dictionary_, self.lam, 0.0,
                                       np.zeros((X_new.shape[0], p)), max_iter=4 * self.sc_max_iter)
        if self.graph_reg == "lle":
            M, _, _ = lle_targets(self._X_train, self.codes_, X_new, self.k, self.lle_reg)
            rho = beta
        else:  # sum_j 1/2 w_j ||a - a_j||^2 = 1/2 (sum w) ||a - m||^2 + const, m = weighted mean
            from sklearn.neighbors import NearestNeighbors

            k = min(self.k, self._X_train.shape[0])
            dist, idx = NearestNeighbors(n_neighbors=k).fit(self._X_train).kneighbors(X_new)
            w = np.exp(-dist ** 2 / (2 * self.sigma_ ** 2))
            sw = np.maximum(w.sum(axis=1), 1e-300)
            M = np.einsum("ik,ikp->ip", w / sw[:, None], self.codes_[idx])
            rho = 0.5 * beta * sw
        return out_of_sample_codes(X_new, self.dictionary_, self.lam, rho, M,
                                   max_iter=4 * self.sc_max_iter)
