"""Graph Laplacians (sparse): unnormalized, symmetric normalized, random walk, LLE; integer powers."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError, GraphError

# the one list of Laplacian kinds: those of a weight matrix W (:func:`laplacian`), and every kind a
# graph may declare (LLE graphs add "lle", L_A = (I - V)^T (I - V) of their barycentric weights V);
# the config schema (gssl.pipeline.config.registries), the graph specs and the graph cache read these
LAPLACIANS = ("unnormalized", "normalized", "random_walk")
LAPLACIAN_KINDS = LAPLACIANS + ("lle",)


def _square_csr(M, what: str) -> sp.csr_matrix:
    M = sp.csr_matrix(M, dtype=np.float64)
    if M.shape[0] != M.shape[1]:
        raise GraphError(f"{what} must be square, got shape {M.shape}")
    return M


def _safe_inverse(values: np.ndarray) -> np.ndarray:
    """1/v where v > 0, else 0: isolated nodes get zero rows in D^{-1} W instead of NaN."""
    out = np.zeros_like(values, dtype=np.float64)
    np.divide(1.0, values, out=out, where=values > 0)
    return out


def laplacian(W, kind: str = "normalized") -> sp.csr_matrix:
    """L of ``kind`` for weights W.

    unnormalized: D - W
    normalized:   I - D^{-1/2} W D^{-1/2}
    random_walk:  I - D^{-1} W
    With D^{-1/2}, D^{-1} taken as 0 for zero degree, an isolated node's row is e_i (no NaN).
    Note scipy.sparse.csgraph.laplacian(normed=True) instead puts 0 on such a node's diagonal.
    """
    W = _square_csr(W, "W")
    d = np.asarray(W.sum(axis=1)).ravel()
    n = W.shape[0]
    if kind == "unnormalized":
        L = sp.diags(d) - W
    elif kind == "normalized":
        s = sp.diags(np.sqrt(_safe_inverse(d)))
        L = sp.identity(n) - s @ W @ s
    elif kind == "random_walk":
        L = sp.identity(n) - sp.diags(_safe_inverse(d)) @ W
    else:
        raise ConfigError(f"laplacian must be one of {list(LAPLACIANS)}, got {kind!r}")
    L = sp.csr_matrix(L)
    L.sort_indices()
    return L


def matrix_power(L, p: int) -> sp.csr_matrix:
    """L^p for an integer p >= 1 by repeated squaring (sparse throughout)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1:
        raise ConfigError(f"Laplacian power must be an integer >= 1, got {p!r}")
    base = _square_csr(L, "L")
    result = None
    p = int(p)
    while True:
        if p & 1:
            result = base if result is None else sp.csr_matrix(result @ base)
        p >>= 1
        if not p:
            break
        base = sp.csr_matrix(base @ base)
    result.sort_indices()
    return result


def lle_laplacian(V) -> sp.csr_matrix:
    """L_A = (I - V)^T (I - V) = I - V - V^T + V^T V for LLE weights V."""
    V = _square_csr(V, "V")
    n = V.shape[0]
    L = sp.identity(n, format="csr") - V - V.T + V.T @ V
    L = sp.csr_matrix(L)
    L.sort_indices()
    return L
