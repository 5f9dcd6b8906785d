"""Numerics of the label-propagation classics GraphLearning 1.7.5 offers beside Laplace and
Poisson learning, on a cached weight matrix W (``L = D - W``, self-loops dropped):

* the random walk of Zhou & Schoelkopf 2004: (I - alpha D^-1/2 W D^-1/2) U = Y, by block CG;
* the graph nearest neighbour: each node takes the class of the labeled node nearest in the
  graph's path length (Dijkstra);
* the centered kernel method of Mai & Couillet 2018: the harmonic extension of the centred labels
  for the centred kernel P W P / alpha, by block CG;
* the absolutely minimal Lipschitz extension (AMLE, the infinity-Laplace equation; Kyng, Rao,
  Sachdeva & Spielman 2015, Calder 2019): p-Laplace learning's Gauss-Seidel sweeps at p = inf.

GraphLearning was read only to settle details the papers leave open, each noted where it applies.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra
from scipy.sparse.linalg import LinearOperator, eigsh

from .block_cg import BlockCGResult, coupled_cg
from .graph_learning import identity_minus_cg, normalized_graph
from .graph_weights import zero_diagonal_weights
from .plaplace import plaplace_learning


def random_walk(W, Y: np.ndarray, alpha: float, *, tol: float, max_iter: int) -> BlockCGResult:
    """U of (I - alpha S) U = Y, S = D^-1/2 W D^-1/2 (Zhou & Schoelkopf 2004; the fixed point of
    label spreading's iteration F <- alpha S F + (1 - alpha) Y, up to the factor 1 - alpha, which
    no arg-max sees). GraphLearning solves the same system, (1 - alpha) I + alpha L_sym, by
    Jacobi-preconditioned CG; its diagonal is 1, so block CG without a preconditioner is the same."""
    return identity_minus_cg(normalized_graph(W), Y, tol=tol, max_iter=max_iter, alpha=alpha)


def nearest_labeled(W, labeled: np.ndarray, length: str = "weight") -> tuple[np.ndarray, np.ndarray]:
    """(index into ``labeled`` of each node's nearest labeled node, its path length) by Dijkstra
    from all labeled nodes at once. An edge's length is its weight w_ij (``"weight"``,
    GraphLearning's graph nearest neighbour, which reads the weights as lengths) or 1 / w_ij
    (``"inverse_weight"``: heavy edges short). Unreached nodes: index -1, length inf."""
    Wc, _ = zero_diagonal_weights(W)
    if length == "inverse_weight":
        Wc = sp.csr_matrix((1.0 / Wc.data, Wc.indices, Wc.indptr), shape=Wc.shape)
    dist, _, source = dijkstra(Wc, directed=True, indices=labeled, min_only=True,
                               return_predecessors=True)
    where = np.full(Wc.shape[0], -1)
    where[labeled] = np.arange(labeled.size)
    nearest = np.where(source >= 0, where[np.maximum(source, 0)], -1)
    return nearest, dist


def _centred_kernel(W):
    """x -> P W P x with P = I - 1 1' / n (column means removed), for (n,) or (n, k) x."""
    def apply(x):
        y = W @ (x - x.mean(axis=0))
        return y - y.mean(axis=0)
    return apply


def largest_eigenvalue(W, *, seed: int = 0) -> float:
    """|lambda| of P W P of largest modulus (Lanczos from a seeded start; GraphLearning: 100 power
    iterations from a random start)."""
    n = W.shape[0]
    op = LinearOperator((n, n), matvec=_centred_kernel(W), dtype=np.float64)
    v0 = np.random.default_rng(seed).random(n)
    return float(abs(eigsh(op, k=1, which="LM", v0=v0, return_eigenvectors=False)[0]))


def centered_kernel(W, labeled: np.ndarray, F: np.ndarray, alpha: float = 1.05, *, tol: float,
                    max_iter: int) -> tuple[BlockCGResult, float]:
    """Mai & Couillet's centered kernel method: U = K on the labeled nodes, K the one-hot labels
    minus their mean over the labeled nodes, and U = (A U) / a elsewhere, A = P W P the centred
    kernel, a = ``alpha`` x its largest |eigenvalue| (GraphLearning's choice of the paper's free
    scale). GraphLearning iterates that fixed point (rate 1 / alpha); the same solution is the
    SPD system (I - A / a)_uu U_u = (A K)_u / a, solved here by block CG. Returns (CG result with
    U in X, a)."""
    Wc, _ = zero_diagonal_weights(W)
    a = alpha * largest_eigenvalue(Wc)
    kernel = _centred_kernel(Wc)
    K = np.zeros((Wc.shape[0], F.shape[1]))
    K[labeled] = F - F.mean(axis=0)
    rhs = kernel(K) / a
    rhs[labeled] = 0.0

    def matvec(P):
        out = P - kernel(P) / a
        out[labeled] = 0.0
        return out
    cg = coupled_cg(matvec, rhs, tol=tol, max_iter=max_iter)
    cg.X[labeled] = K[labeled]
    return cg, a


def amle(W, labeled: np.ndarray, F: np.ndarray, *, tol: float, max_iter: int) -> tuple[np.ndarray, int, float]:
    """The AMLE of each column of F: u_i = (max_j u_j + min_j u_j) / 2 over i's neighbours off the
    labeled nodes (unweighted, GraphLearning's ``weighted=False``), by p-Laplace learning's
    Gauss-Seidel sweeps at p = inf. Returns (U, sweeps, largest change of the last sweeps)."""
    return plaplace_learning(W, labeled, F, np.inf, tol=tol, max_iter=max_iter, checked=True)
