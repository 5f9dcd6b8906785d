"""Numerics of multiclass total variation clustering (Bresson, Laurent, Uminsky, von Brecht 2013).

Energy (2) of a relaxed partition F (N x R, rows on the simplex):

    E(F) = sum_r T(f_r) / B(f_r),   T(f) = ||D f||_1,   B(f) = ||f - med_lambda(f)||_{1,lambda}

with D the graph gradient operator (one row per edge i < j, (Df)_e = w_ij (f_i - f_j); see
``gssl.optim.graph_ops``), lambda = R - 1, the lambda-median (6) and the asymmetric l1 norm (5).

Convention: T counts every edge once (as the authors' reference code does), i.e. T is half the
symmetric sum of (3); for an indicator 1_A, T = Cut(A, A^c) and T / B = Cut / min{lambda|A|, |A^c|}
is exactly the term of the discrete energy (P) (Theorem 1 with the factor 2 of (3) removed).
The factor only rescales the time step of the outer iteration.

``mtv_minimize`` is Algorithm 1: the outer proximal-splitting step (14) with Delta = max_r B_r and
the accelerated Chambolle-Pock inner loop (appendix 6.2), stopped adaptively as soon as the weakened
energy-descent estimate (16) holds; every inner iterate is projected exactly onto the simplex (or
the simplex with fixed labeled rows, (8)), so the returned F is always feasible.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .simplex import project_simplex, theta_lower_bound

__all__ = ["lambda_median", "asymmetric_l1", "balance", "balance_subgradient", "mtv_energy",
           "discrete_energy", "indicator_matrix", "operator_norm", "MTVResult", "mtv_minimize"]


def _median_index(n: int, lam: float) -> int:
    """0-based index, in ascending order, of the (k+1)-st largest value, k = floor(N/(lam+1))."""
    k = int(np.floor(n / (lam + 1.0)))
    if not 0 <= k < n:
        raise ValueError(f"lambda-median undefined for N={n}, lambda={lam}")
    return n - 1 - k


def lambda_median(F: np.ndarray, lam: float) -> np.ndarray:
    """med_lambda (6) of each column of F (or of a vector): the (k+1)-st largest value,
    k = floor(N / (lambda + 1))."""
    F = np.asarray(F, dtype=np.float64)
    idx = _median_index(F.shape[0], lam)
    return np.partition(F, idx, axis=0)[idx]


def asymmetric_l1(H: np.ndarray, lam: float) -> np.ndarray:
    """||h||_{1,lambda} (5) of each column: sum of lambda*h where h >= 0 and -h where h < 0."""
    H = np.asarray(H, dtype=np.float64)
    return np.where(H >= 0, lam * H, -H).sum(axis=0)


def balance(F: np.ndarray, lam: float, med: np.ndarray | None = None) -> np.ndarray:
    """B(f_r) = ||f_r - med_lambda(f_r)||_{1,lambda} of each column (9).

    Computed as (lambda + 1) sum_i (f_i - med)^+ - sum_i (f_i - med), since |h|_lambda =
    lambda h^+ + h^- = (lambda + 1) h^+ - h (one pass over F instead of four)."""
    F = np.asarray(F, dtype=np.float64)
    med = lambda_median(F, lam) if med is None else med
    if F.ndim == 1:
        return float((lam + 1.0) * np.maximum(F - med, 0.0).sum() - (F.sum() - F.size * med))
    ones = np.ones(F.shape[0])
    H = F - med
    total = ones @ H
    np.maximum(H, 0.0, out=H)
    return (lam + 1.0) * (ones @ H) - total


def balance_subgradient(F: np.ndarray, lam: float, med: np.ndarray | None = None) -> np.ndarray:
    """The element v of dB(f) of Theorem 5, column by column: lambda above the median, -1 below,
    (n^- - lambda n^+) / n^0 on the entries equal to the median (so <v, 1> = 0)."""
    F = np.asarray(F, dtype=np.float64)
    vec = F.ndim == 1
    if vec:
        F = F[:, None]
    if med is None:
        med = lambda_median(F, lam)
    above, at = F > med, F == med
    n_plus, n_zero = above.sum(axis=0), at.sum(axis=0)  # n_zero >= 1: med is a value of f
    n_minus = F.shape[0] - n_plus - n_zero
    q = (n_minus - lam * n_plus) / n_zero
    V = np.where(above, lam, -1.0)
    V = np.where(at, q, V)
    return V[:, 0] if vec else V


def mtv_energy(D: sp.csr_matrix, F: np.ndarray, lam: float, DF: np.ndarray | None = None):
    """(T, B, E) per column: total variation ||D f_r||_1, balance B(f_r) and E = T / B
    (E = inf where B = 0, i.e. f_r constant: an empty or full cluster)."""
    F = np.asarray(F, dtype=np.float64)
    if DF is None:
        DF = D @ F
    T = np.abs(DF).sum(axis=0)
    B = balance(F, lam)
    with np.errstate(divide="ignore", invalid="ignore"):
        E = np.where(B > 0, T / np.where(B > 0, B, 1.0), np.inf)
    return T, B, E


def indicator_matrix(labels: np.ndarray, n_classes: int) -> np.ndarray:
    labels = np.asarray(labels)
    Z = np.zeros((labels.size, n_classes))
    Z[np.arange(labels.size), labels] = 1.0
    return Z


def discrete_energy(D: sp.csr_matrix, labels: np.ndarray, n_classes: int,
                    lam: float | None = None) -> float:
    """Energy (P) of the partition A_r = {labels == r}: sum_r Cut(A_r, A_r^c) / min{lambda|A_r|,
    |A_r^c|} (inf when a cluster is empty)."""
    lam = float(n_classes - 1) if lam is None else lam
    _, _, E = mtv_energy(D, indicator_matrix(labels, n_classes), lam)
    return float(E.sum())


def operator_norm(D: sp.spmatrix, tol: float = 1e-3, *, diagnostics: dict | None = None) -> float:
    """||D||_2 (largest singular value), slightly over-estimated (x1.01) so that the step sizes
    satisfy sigma*tau*||K||^2 <= 1.

    When ARPACK fails on D'D it returns the a-priori bound of
    :func:`gssl.optim.graph_ops.gradient_norm_bound` instead (larger, so the steps stay valid but
    smaller); ``diagnostics``, when given, gets ``norm_bound_fallback``: 1.0 then, else 0.0
    (MTVClustering puts it in its ``fit_metrics_``, logged as ``solver_norm_bound_fallback``)."""
    from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, eigsh

    def fell_back(value: bool) -> None:
        if diagnostics is not None:
            diagnostics["norm_bound_fallback"] = float(value)

    DtD = (D.T @ D).tocsr()
    if DtD.shape[0] < 3:
        fell_back(False)
        return float(np.sqrt(np.linalg.eigvalsh(DtD.toarray()).max())) * 1.01
    try:
        lmax = eigsh(DtD, k=1, which="LA", tol=tol, return_eigenvectors=False,
                     v0=np.ones(DtD.shape[0]) + np.arange(DtD.shape[0]) % 7)[0]
    # only ARPACK's own failures (no convergence, or an error code such as a failed Arnoldi
    # factorization); no shift sigma is given, so no factorization of D'D - sigma I can fail as
    # singular. Anything else (e.g. a ValueError for a bad argument) is a bug the caller must see.
    except (ArpackNoConvergence, ArpackError):
        from .graph_ops import gradient_norm_bound

        fell_back(True)
        return gradient_norm_bound(D)
    fell_back(False)
    return float(np.sqrt(max(lmax, 0.0)) * 1.01 + 1e-12)


@dataclass
class MTVResult:
    F: np.ndarray
    energy: float              # continuous energy (2) of F
    n_iter: int                # inner (primal-dual) iterations, the unit of max_iter
    n_outer: int
    converged: bool
    stop_reason: str
    history: list = field(default_factory=list)


def mtv_minimize(D: sp.csr_matrix, F0: np.ndarray, lam: float | None = None, *,
                 fixed: np.ndarray | None = None, norm: float | None = None,
                 rel_tol: float = 1e-4, max_iter: int = 2000, max_inner: int = 100,
                 eps: float = 1e-3, max_time: float | None = None,
                 record_history: bool = True, dual_dtype=np.float32) -> MTVResult:
    """Algorithm 1 from the feasible start F0 (projected onto C first).

    D: gradient operator (M x N CSR); fixed: boolean mask of labeled rows, whose rows of F0 must be
    the class indicators e_r (they never change); norm: ||D||_2 (computed when None).
    Outer stop: relative change of the energy between outer steps <= rel_tol; budget: max_iter
    inner iterations in total (the reference setting counts inner iterations) or max_time seconds.
    Inner stop: estimate (16) with epsilon = eps, or max_inner inner iterations.

    Cost of one inner iteration: three passes over the edges or nodes by the compiled kernels
    of ``gssl.optim.mtv_kernels`` (dual ascent with its clip; primal step with D'P, the exact
    simplex projection and the extrapolation; total variation of the new iterate) and one pass
    over F for the lambda-medians and balances. The dual variable P (edges x R, the largest
    array; |P| <= 1) is stored in ``dual_dtype`` (float32 by default: half the memory traffic,
    arithmetic in float64); the primal iterate, the projection, the energies and the stopping
    tests are float64, so every returned F is feasible and every accepted step satisfies (16)
    exactly as computed in float64.
    """
    # compiled kernels, imported here so that importing gssl.optim does not load numba
    from .mtv_kernels import (dual_ascent, median_balance, outer_step, primal_project,
                              total_variation_columns)

    t0 = time.perf_counter()
    D = sp.csr_matrix(D, dtype=np.float64)
    D.sort_indices()
    N, R = F0.shape
    L = operator_norm(D) if norm is None else float(norm)
    # nodes renumbered by reverse Cuthill-McKee: the endpoints of consecutive edges are close
    # in memory, which halves the cost of the edge passes once F outgrows the cache
    perm, ei, ej, w = _bandwidth_order(D)
    absw = np.abs(w)
    Dt = sp.csr_matrix((np.concatenate([w, -w]), (np.concatenate([ei, ej]),
                        np.tile(np.arange(ei.size), 2))), shape=(N, ei.size))
    Dt.sort_indices()                         # D' row by row: the primal step gathers, no scatter
    t_ptr, t_edge, t_val = Dt.indptr.astype(np.int64), Dt.indices.astype(np.int64), Dt.data
    lam = float(R - 1) if lam is None else float(lam)
    k_med = N - 1 - _median_index(N, lam)
    fixed = np.zeros(N, dtype=bool) if fixed is None else np.asarray(fixed, dtype=bool)[perm]
    F = project_simplex(np.array(F0, dtype=np.float64)[perm], axis=1,
                        fixed=fixed if fixed.any() else None)
    P = np.zeros((ei.size, R), dtype=np.dtype(dual_dtype))
    Fbar = np.empty((N, R))
    F_new = np.empty((N, R))
    FT, buf = np.empty((R, N)), np.empty((R, N))  # work buffers of the median selection
    theta_proj = theta_lower_bound(F)     # simplex thresholds, warm-started across iterations

    def energy(F):
        T = total_variation_columns(F, ei, ej, absw)
        med, B = median_balance(F, k_med, lam, FT, buf)
        with np.errstate(divide="ignore", invalid="ignore"):
            return T, B, np.where(B > 0, T / np.where(B > 0, B, 1.0), np.inf), med

    T, B, E, med = energy(F)
    if not np.all(np.isfinite(E)):
        raise ValueError("mtv_minimize: the initial F has a constant column (empty cluster); "
                         "start from a non-degenerate F0")
    tau = 1.0 / L
    total = float(E.sum())
    history = [{"iteration": 0, "outer": 0, "energy": total, "inner": 0,
                "seconds": time.perf_counter() - t0}] if record_history else []
    n_iter, n_outer = 0, 0
    converged, reason = False, "max_iter"
    while True:
        # outer step G = F + Delta * [dB(f_r) E_r / B_r]
        Delta = float(B.max())
        Gamma = Delta / B                                   # D_B
        G = outer_step(F, med, lam, Delta * E / B)
        sigma = 1.0 / (tau * (Gamma.max() * L) ** 2)
        F_outer, B_outer, E_outer = F.copy(), B, E
        np.multiply(F, sigma * Gamma, out=Fbar)             # Fbar carries sigma * D_B
        inner = 0
        descent = dist = np.nan
        while True:
            n_iter += 1
            inner += 1
            dual_ascent(P, Fbar, ei, ej, w)                 # P = clip(P + sigma K Fbar D_B)
            theta = 1.0 / np.sqrt(1.0 + 2.0 * tau)          # acceleration of the next step
            # primal step (F - tau K'P D_B + tau G) / (1 + tau), exact projection, and
            # Fbar = sigma' D_B ((1 + theta) F_new - theta F) for the next dual step
            dist = primal_project(F, F_new, G, F_outer, Fbar, theta_proj, fixed, t_ptr, t_edge,
                                  t_val, P, tau, tau * Gamma, theta,
                                  (sigma / theta) * Gamma)
            F, F_new = F_new, F
            tau *= theta
            sigma /= theta
            T, B, E, med = energy(F)
            if np.all(B > 0):
                descent = float(np.sum(Delta * (B / B_outer) * (E_outer - E)))
                if descent - (1.0 - eps) * dist > 0 or inner >= max_inner:
                    break
            elif inner >= max_inner:  # degenerate column: go back to the last outer iterate
                F = F_outer
                T, B, E, med = energy(F)
                reason = "degenerate column (empty cluster)"
                break
        n_outer += 1
        old, total = total, float(E.sum())
        if record_history:
            # descent = Delta * sum_r (B_r^{k+1}/B_r^k)(E_r^k - E_r^{k+1}), dist = |F^{k+1}-F^k|^2:
            # estimate (16) holds when descent >= (1 - eps) * dist
            history.append({"iteration": n_iter, "outer": n_outer, "energy": total,
                            "inner": inner, "descent": descent, "dist": dist,
                            "seconds": time.perf_counter() - t0})
        if reason.startswith("degenerate"):
            break
        if abs(old - total) <= rel_tol * abs(total):
            converged, reason = True, f"relative energy change <= {rel_tol:g}"
            break
        if n_iter >= max_iter:
            reason = f"max_iter ({max_iter} inner iterations)"
            break
        if max_time is not None and time.perf_counter() - t0 >= max_time:
            reason = f"max_time ({max_time:g} s)"
            break
    return MTVResult(F=F[np.argsort(perm)], energy=total, n_iter=n_iter, n_outer=n_outer,
                     converged=converged, stop_reason=reason, history=history)


def _edges_of(D: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, w) with (D g)_e = w_e (g_i - g_j) from a gradient operator (two opposite entries
    per row, ``graph_ops.gradient_operator``); anything else is rejected."""
    D = sp.csr_matrix(D)
    D.sort_indices()
    counts = np.diff(D.indptr)
    if D.shape[0] and (np.any(counts != 2) or not np.allclose(D.data[0::2], -D.data[1::2])):
        raise ValueError("mtv_minimize: D must be a graph gradient operator (each row w, -w on "
                         "two nodes); build it with gssl.optim.gradient_operator(W)")
    return (D.indices[0::2].astype(np.int64), D.indices[1::2].astype(np.int64),
            np.ascontiguousarray(D.data[0::2]))


def _bandwidth_order(D: sp.csr_matrix):
    """perm (new -> old node) by reverse Cuthill-McKee, and D's edges (i, j, w) renumbered and
    sorted by their lower endpoint (the same operator: (D g)_e = w_e (g_i - g_j))."""
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    ei, ej, w = _edges_of(D)
    N = D.shape[1]
    A = sp.csr_matrix((np.ones(ei.size), (ei, ej)), shape=(N, N))
    perm = reverse_cuthill_mckee((A + A.T).tocsr(), symmetric_mode=True).astype(np.int64)
    new = np.empty(N, dtype=np.int64)
    new[perm] = np.arange(N)
    i, j = new[ei], new[ej]
    order = np.lexsort((np.maximum(i, j), np.minimum(i, j)))
    return perm, i[order], j[order], np.ascontiguousarray(w[order])
