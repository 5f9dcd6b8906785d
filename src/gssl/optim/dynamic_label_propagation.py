"""Dynamic label propagation (Wang, Tu & Tsotsos 2013): label propagation whose transition
operator is itself updated each step by the label similarities of the last one.

With P = D^-1 W (W without self-loops), the scheme of the paper's Algorithm 1 (as GraphLearning
1.7.5 runs it, its ``T`` steps from P_0 = P) is, at step t,

    V_t = P U_t,   U_{t+1} = P_t U_t (labeled rows reset to their labels),
    P_{t+1} = P P_t P^T + alpha V_t V_t^T + lambda I.

P_t is dense; GraphLearning forms it (n^3 work a step, and it refuses graphs above 5,000 nodes).
Here P_t is never formed: P_t X is applied by its recursion, P_t X = P (P_{t-1} (P^T X)) +
alpha V_{t-1} (V_{t-1}^T X) + lambda X, t sparse products with n x C blocks on each side, so the
whole scheme costs O(T^2) products with P and runs on graphs of any size.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError
from .graph_learning import one_hot
from .graph_weights import zero_diagonal_weights


def dynamic_label_propagation(W, codes: np.ndarray, n_classes: int, *, alpha: float = 0.05,
                              lam: float = 0.1, n_steps: int = 2) -> np.ndarray:
    """The scores U_T (n, C) of ``n_steps`` steps of dynamic label propagation from the labeled
    nodes' indicators (the other rows zero)."""
    Wc, d = zero_diagonal_weights(W)
    if np.any(d == 0):
        raise SolverError(f"{int((d == 0).sum())} node(s) have no edge; dynamic label "
                          "propagation's P = D^-1 W is undefined there")
    P = sp.csr_matrix(sp.diags(1.0 / d) @ Wc)
    PT = P.T.tocsr()
    labeled = np.flatnonzero(codes >= 0)
    F = one_hot(codes[labeled], n_classes)
    U = np.zeros((codes.size, n_classes))
    U[labeled] = F
    V: list[np.ndarray] = []  # V_t = P U_t, the rank-C terms of P_{t+1}
    for t in range(n_steps):
        V.append(P @ U)
        U = _apply(t, U, P, PT, V, alpha, lam)
        U[labeled] = F
    return U


def _apply(t: int, X: np.ndarray, P, PT, V: list, alpha: float, lam: float) -> np.ndarray:
    """P_t X by the recursion P_t X = P (P_{t-1} (P^T X)) + alpha V_{t-1} (V_{t-1}^T X) +
    lambda X, P_0 = P."""
    if t == 0:
        return P @ X
    return (P @ _apply(t - 1, PT @ X, P, PT, V, alpha, lam)
            + alpha * (V[t - 1] @ (V[t - 1].T @ X)) + lam * X)
