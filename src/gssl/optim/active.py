"""Numerics of graph-based active learning: uncertainty measures of class scores, and the
Gaussian-process acquisitions on a low-rank prior covariance from Laplacian eigenpairs.

The model (Ji & Han 2012; Ma, Garnett & Schneider 2013; Miller & Bertozzi 2021; Miller & Calder
2023): a Gaussian prior on the node function with covariance ``Sigma = V C V^T``, where the
columns of V (n, r) are the eigenvectors of the ``r`` smallest eigenvalues ``lam`` of the
normalized graph Laplacian and ``C = diag(1 / (lam + shift))`` (r, r). Observing node k with
noise variance ``gamma2`` conditions the prior: with ``v = V[k]`` and ``c = C v``,

    C <- C - c c^T / (gamma2 + v^T c)          (a rank-one update, O(r^2))

which is Sigma's own update ``Sigma - Sigma e_k e_k^T Sigma / (gamma2 + Sigma_kk)`` written in
the eigenbasis. Every quantity of a candidate k reads ``c_k = C V[k]``:

* VOpt (variance reduction): ``||Sigma e_k||^2 / (gamma2 + Sigma_kk) = ||c_k||^2 / (gamma2 + v_k^T c_k)``
  (V has orthonormal columns).
* Sigma-optimality (reduction of the summed covariance): ``(1^T Sigma e_k)^2 / (gamma2 + Sigma_kk)
  = (s^T c_k)^2 / (...)`` with ``s = V^T 1``.
* Model change: ``unc_k ||c_k|| / (gamma2 + v_k^T c_k)``; model change + VOpt:
  ``unc_k ||c_k||^2 / (...)``, ``unc_k`` an uncertainty measure of the node's scores.

GraphLearning 1.7.5 (the authors' package) was read for its conventions, which these functions
keep (its tests in tests/test_active.py): the uncertainty measures' exact forms (below), the
prior ``shift`` 1e-11 and ``gamma2 = 0.01`` of its examples. One difference: its low-rank
Sigma-opt sums the entries of ``c_k`` (``1^T c_k``, as if ``V^T 1`` were all ones); here the sum
is Sigma's, ``(V^T 1)^T c_k``, which is what its full-covariance form computes.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dger

UNCERTAINTY_MEASURES = ("smallest_margin", "largest_margin", "least_confidence", "entropy", "norm")


def _softmax(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise softmax p of u and each row's largest p (= 1 / the row's sum of exp(u - max)).
    Row sums as a product with ones (BLAS): numpy's reduction over a few columns is slower."""
    e = np.exp(u - _extremes(u)[0][:, None])
    s = e @ np.ones(u.shape[1])
    return e / s[:, None], 1.0 / s


def _extremes(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The largest, second largest and smallest score of each row (exact), a column at a time:
    a few classes per row make numpy's row-wise sort or reduction several times slower."""
    first, second, low = u[:, 0].copy(), np.full(u.shape[0], -np.inf), u[:, 0].copy()
    for j in range(1, u.shape[1]):
        col = u[:, j]
        np.maximum(second, np.minimum(first, col), out=second)
        np.maximum(first, col, out=first)
        np.minimum(low, col, out=low)
    return first, second, low


def uncertainty(scores: np.ndarray, measure: str = "smallest_margin") -> np.ndarray:
    """Uncertainty of each row of class scores (m, C); larger = less certain.

    * ``smallest_margin``: ``1 - (u_(1) - u_(2))``, the two largest scores;
    * ``largest_margin``: ``1 - (u_(1) - u_(C))``, largest minus smallest;
    * ``least_confidence``: ``1 - u_(1)``;
    * ``entropy``: ``max p - sum p log(p + 1e-5)`` with ``p`` the softmax of the scores
      (GraphLearning's form: the entropy, floored inside the log, plus the top probability);
    * ``norm``: ``||p - e_argmax||``, the distance of the softmax to its one-hot label.

    The margins and least confidence read the raw scores (GraphLearning's convention: they
    suit scores in [0, 1] such as Laplace learning's).
    """
    u = np.asarray(scores, dtype=np.float64)
    if u.ndim != 2 or u.shape[1] < 2:
        raise ValueError(f"uncertainty: scores must be (m, C) with C >= 2 classes, got {u.shape}")
    if measure in ("smallest_margin", "largest_margin", "least_confidence"):
        first, second, low = _extremes(u)
        if measure == "smallest_margin":
            return 1.0 - (first - second)
        return 1.0 - (first - low) if measure == "largest_margin" else 1.0 - first
    p, p_max = _softmax(u)
    if measure == "entropy":
        return p_max - (p * np.log(p + 1e-5)) @ np.ones(u.shape[1])
    if measure == "norm":
        top = np.argmax(u, axis=1)
        p[np.arange(top.size), top] -= 1.0
        return np.sqrt(np.einsum("ij,ij->i", p, p))
    raise ValueError(f"uncertainty: unknown measure {measure!r}; known: {UNCERTAINTY_MEASURES}")


def prior_covariance(eigenvalues: np.ndarray, shift: float) -> np.ndarray:
    """``C = diag(1 / (lam + shift))`` (r, r): the prior covariance in the eigenbasis."""
    return np.diag(1.0 / (np.asarray(eigenvalues, dtype=np.float64) + shift))


def covariance_columns(C: np.ndarray, V: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``c_k = C V[k]`` for every k in ``nodes`` (columns of an (r, m) block) and ``v_k^T c_k``
    (m,): the eigenbasis form of Sigma's columns and diagonal at those nodes."""
    Vk = V[nodes]                      # (m, r)
    CV = C @ Vk.T                      # (r, m)
    return CV, np.einsum("mr,rm->m", Vk, CV)


def vopt_values(C, V, nodes, gamma2: float) -> np.ndarray:
    """VOpt: ``||c_k||^2 / (gamma2 + v_k^T c_k)``."""
    CV, diag = covariance_columns(C, V, nodes)
    return np.einsum("rm,rm->m", CV, CV) / (gamma2 + diag)


def sigma_opt_values(C, V, nodes, gamma2: float, V_sum: np.ndarray | None = None) -> np.ndarray:
    """Sigma-optimality: ``(s^T c_k)^2 / (gamma2 + v_k^T c_k)`` with ``s = V^T 1`` (``V_sum``,
    computed when not given)."""
    CV, diag = covariance_columns(C, V, nodes)
    s = V.sum(axis=0) if V_sum is None else V_sum
    return (s @ CV) ** 2 / (gamma2 + diag)


def model_change_values(C, V, nodes, gamma2: float, unc: np.ndarray, power: int = 1) -> np.ndarray:
    """Model change (``power`` 1: ``unc_k ||c_k|| / (...)``) or model change + VOpt (``power`` 2:
    ``unc_k ||c_k||^2 / (...)``), ``unc`` the candidates' uncertainties."""
    CV, diag = covariance_columns(C, V, nodes)
    norm2 = np.einsum("rm,rm->m", CV, CV)
    return unc * (np.sqrt(norm2) if power == 1 else norm2) / (gamma2 + diag)


def condition_on(C: np.ndarray, V: np.ndarray, nodes, gamma2: float) -> np.ndarray:
    """Condition the prior on observing ``nodes`` one after another: the rank-one update of the
    module's docstring for each, in place on C (returned). O(r^2) per node.

    C -= c c^T / (gamma2 + v.c) is one BLAS rank-one update (dger) in place: C is symmetric, so
    its transpose (Fortran order, what BLAS writes into) is C itself. The layout is checked once
    (a query's update is a few microseconds, the per-call checks were a third of it); C of
    another layout is updated on a C-ordered float64 copy, then copied back."""
    work = C if C.flags.c_contiguous and C.dtype == np.float64 else np.ascontiguousarray(C, dtype=np.float64)
    into = work.T
    if not (isinstance(nodes, (list, tuple)) or isinstance(nodes, np.ndarray) and nodes.ndim == 1):
        nodes = np.atleast_1d(nodes)  # (a node alone; lists and 1-d arrays as they are: no copy)
    for k in nodes:
        v = V[k]
        c = work @ v
        dger(-1.0 / (gamma2 + v @ c), c, c, a=into, overwrite_a=1)
    if work is not C:
        C[...] = work
    return C
