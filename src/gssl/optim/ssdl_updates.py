"""The alternating updates of SSDL-GA (Tran et al., Algorithm 1), samples as rows.

Objective (eq. 4 of the paper, transposed), over codes A (N, p), dictionary D (p, d), classifier
W (C, p), b (C,) and class probabilities P (N_u, C) of the unlabeled samples (rows on the simplex):

    ||X - A D||^2 + lam ||A||_1 + beta ||(I - V) A||^2
      + gamma ( ||Q^l o (F_l - Y)||^2 + sum_k ||Q^u_k o P_k^{r/2} o (F_u - Y_k)||^2 )
      + mu (||W||^2 + ||b||^2),    F = A W^T + b,

with V the LLE barycentric weights among the training samples (tr(A^T L_A A) = ||K A||^2,
K = I - V, applied by sparse products only) and Q the active-point masks. For the unlabeled term
the masks reduce to Mpos = (F_u < 1), Mneg = (F_u > -1) and the weights wpos = P^r o Mpos
(target +1), wneg = (rowsum(P^r) - P^r) o Mneg (target -1), so the classifier update is one
weighted ridge regression with bias per class (closed form) and the probability update minimizes
sum_k P_jk^r e_jk per sample with e_jk = Epos_jk + sum_c Eneg_jc - Eneg_jk.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import ConfigError
from .dictionary_learning import (AUTHORS_INNER, init_dictionary, lasso_codes, quadratic_loss,
                                  update_dictionary)
from .fista import fista, l1_prox

__all__ = ["SSDLModel", "SubsetLoss", "probability_update"]


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


class SSDLModel:
    """State, objective and steps of one SSDL-GA fit (training samples only, labeled first: the
    paper's A = [A^l, A^u]); Ylab (N_l, C) ±1 one-vs-all targets, K the code regularizer (None
    when beta = 0). The dictionary-learning classifiers without the internal classifier use it
    with gamma = mu = 0."""

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
        sub = SubsetLoss(self, rows) if gamma else None

        xx = float(np.sum(Xr * Xr))

        def f(Ar):
            v = quadratic_loss(xx, Ar, G, XDt)
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

        def value_and_grad(Ar):
            """f(Ar) and grad(Ar), the same numbers, each product (Ar G, Kr Ar, Ar W') made once."""
            AG = Ar @ G
            v, g = quadratic_loss(xx, Ar, G, XDt, AG), 2.0 * (AG - XDt)
            if beta:
                R = Kr @ Ar if base is None else base + Kr @ Ar
                v += beta * float(np.sum(R * R))
                g += 2.0 * beta * (Kr.T @ R)
            if gamma:
                S = Ar @ W.T + b
                v += gamma * sub.loss(S)
                g += gamma * (sub.grad(S) @ W)
            return v, g

        if inner == "authors":
            res = fista(f, grad, l1_prox(self.lam), A[rows], max_iter=max_iter,
                        value_and_grad=value_and_grad, **AUTHORS_INNER["sparse_coding"])
        else:
            L0 = 2.0 * max(np.linalg.norm(G, 2), 1e-12)   # backtracking raises it as needed
            res = fista(f, grad, l1_prox(self.lam), A[rows], g=lambda Z: self.lam * np.abs(Z).sum(),
                        lipschitz=L0, max_iter=max_iter, tol=tol, monotone=True,
                        value_and_grad=value_and_grad)
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


    # ---- Algorithm 1 ----------------------------------------------------------------------
    def initialize(self, codes_lab, n_atoms, rng, sc_max_iter):
        """Section 4.2: the dictionary (``init_dictionary``), lasso codes, the classifier as a
        ridge fit on the labeled codes, uniform probabilities. Returns the codes A."""
        nl, N, C = self.nl, self.X.shape[0], self.C
        self.D = init_dictionary(self.X, np.arange(nl), np.arange(nl, N), codes_lab, n_atoms,
                                 self.alpha, rng)
        A = lasso_codes(self.X, self.D, self.lam, max_iter=sc_max_iter * 4)
        As = np.hstack([A[:nl], np.ones((nl, 1))])
        sol = np.linalg.solve(As.T @ As + (self.mu / self.gamma) * np.eye(As.shape[1]),
                              As.T @ self.Y)
        self.W, self.b = sol[:-1].T.copy(), sol[-1].copy()
        self.P = np.full((N - nl, C), 1.0 / C)
        return A

    def alternate(self, A, rng, *, sc_max_iter, dict_max_iter, batch_size, n_epochs, rule,
                  inner):
        """One outer iteration of Algorithm 1: masks and probabilities, sparse coding (whole set,
        or the appendix's random batches of ``batch_size`` for ``n_epochs`` passes), dictionary,
        classifier. Returns the codes and a record (objective after each step, seconds per
        step, FISTA iterations)."""
        rec, N = {}, self.X.shape[0]
        t = time.perf_counter()
        self.update_masks(A)
        if N > self.nl:
            self.P = probability_update(self.prob_costs(A), self.r)
        self.set_weights()
        rec["seconds_probabilities"] = time.perf_counter() - t
        rec["objective_start"] = self.objective(A)
        t = time.perf_counter()
        if batch_size is None or batch_size >= N:
            A, rec["sc_iterations"] = self.sparse_coding(A, None, sc_max_iter, inner=inner)
        else:
            n_it = 0
            for _ in range(n_epochs):
                order = rng.permutation(N)
                for s in range(0, N, batch_size):
                    A, k_it = self.sparse_coding(A, np.sort(order[s:s + batch_size]),
                                                 sc_max_iter, inner=inner)
                    n_it += k_it
            rec["sc_iterations"] = n_it
        rec["seconds_sparse_coding"] = time.perf_counter() - t
        rec["objective_after_sparse_coding"] = self.objective(A)
        t = time.perf_counter()
        res = update_dictionary(self.X, A, self.D, self.alpha, dict_max_iter, inner=inner)
        self.D = res.x
        rec["dict_iterations"] = res.n_iter
        rec["seconds_dictionary"] = time.perf_counter() - t
        rec["objective_after_dictionary"] = self.objective(A)
        t = time.perf_counter()
        self.classifier_update(A, rule)
        rec["seconds_classifier"] = time.perf_counter() - t
        rec["objective"] = self.objective(A)
        return A, rec


class SubsetLoss:
    """Classification loss restricted to some training rows (fixed masks)."""

    def __init__(self, m: SSDLModel, rows):
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
