"""The SVM sub-step of Bresson & Zhang's splitting methods, solved through its dual.

f = argmin lam/2 |f|_K^2 + mu sum_i xi_i + r/2 |f - e|^2 (+ gamma/2 f'Lf), hinge constraints
y_i f_i >= 1 - xi_i on the labeled nodes only (unlabeled nodes have no y_i). With
A = lam I + r K (+ gamma L K) and G = K A^{-1} (the symmetric form the derivation gives; the paper
prints A^{-1} K, its transpose) the dual is (94)/(126)/(136):

    max_beta  a'beta - 1/2 beta' Q beta,  Q = Y G_LL Y,  a = 1 - r Y (G e)_L,
    s.t. y'beta = 0, 0 <= beta <= mu,

and f = G (r e + J'Y beta) (95)/(127)/(137). Columns of e are independent one-vs-all problems.
"""

from __future__ import annotations

import numpy as np

from .qp import qp_box_equality

__all__ = ["DualSVMStep"]


class DualSVMStep:
    """``step(e)`` returns f (n, C) for the targets Y (n, C; ±1 on the labeled rows).

    ``system``: A factored (``gssl.optim.linalg.KernelSystem``), whose ``solve(B)[1]`` is G B =
    K A^{-1} B; the dual of each column is warm-started from its previous
    solution (``betas``) and ``qp_iters`` counts the QP iterations over all calls.
    """

    def __init__(self, system, lab, Y, r, mu, qp_tol):
        self.G = lambda B: system.solve(B)[1]
        self.r, self.mu, self.qp_tol = r, mu, qp_tol
        self.lab = np.flatnonzero(lab)
        E = np.zeros((Y.shape[0], self.lab.size))
        E[self.lab, np.arange(self.lab.size)] = 1.0
        self.GJ = self.G(E)                                     # G J'  (n, l)
        GLL = self.GJ[self.lab]
        self.GLL = 0.5 * (GLL + GLL.T)
        self.Yl = Y[self.lab]
        self.betas = [None] * Y.shape[1]
        self.qp_iters = 0

    def __call__(self, e):
        r = self.r
        Ge = self.G(e)
        out = np.empty_like(e)
        for k in range(e.shape[1]):
            y = self.Yl[:, k]
            Q = y[:, None] * self.GLL * y[None, :]
            a = 1.0 - r * y * Ge[self.lab, k]
            beta, info = qp_box_equality(Q, a, y, 0.0, self.mu, tol=self.qp_tol,
                                         beta0=self.betas[k])
            self.betas[k] = beta
            self.qp_iters += info["iterations"]
            out[:, k] = r * Ge[:, k] + self.GJ @ (y * beta)
        return out
