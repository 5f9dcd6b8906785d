"""Compiled (numba) kernels of the MTV inner loop: one pass over memory per step.

The NumPy formulation of an inner iteration of Algorithm 1 needs about fifteen passes over N x R
and M x R arrays (three sparse products, clip, scalings, axpys, the simplex projection's Newton
passes, |D F| and its column sums, the median selection); profiled, it cost about 2x its three
sparse products. Here each step is one loop that reads its inputs once:

* ``dual_ascent``    P <- clip(P + D Fbar, -1, 1), edge by edge (Fbar already carries sigma D_B);
* ``primal_project`` row n of (F - tau (D'P) D_B + tau G) / (1 + tau), projected onto the simplex
  (Michelot/Newton, warm-started), the extrapolated sigma D_B ((1 + theta) F_new - theta F) for the
  next dual step, and ||F_new - F_outer||^2, in one pass over the nodes (D' P through D's
  transpose in CSR form, so no scatter);
* ``total_variation_columns`` sum_e w_e |F_i - F_j| per column, one pass over the edges;
* ``median_balance`` the lambda-median and balance B of every column (one pass counting the
  positive entries, a selection only for the columns with more than k of them);
* ``outer_step`` G = F + V diag(c) with V the Theorem 5 subgradient;
* ``project_row`` the exact Euclidean projection of one row onto the probability simplex by
  Newton's method on phi(theta) = sum_r (z_r - theta)^+ - 1 (Michelot's algorithm as a root
  search: the tangent of the convex, decreasing, piecewise-linear phi lies below it, so one step
  from any theta with an active entry lands at or below the root; from there the active set only
  shrinks and the row is exact once it stops changing, at most R steps; a warm start from the
  previous threshold is usually one step away), inlined into the primal step; ``project_rows`` is
  its row loop behind ``gssl.optim.simplex.project_simplex_rows``.

All compiled code lives in this one module on purpose: numba's on-disk cache is invalidated per
source file, so a kernel inlined from another file could stay stale after an edit.
Each kernel is tested against its definition in ``gssl.optim.mtv_step`` / ``gssl.optim.simplex``
(``tests/test_mtv.py``). Kernels run on numba's thread pool (``numba.set_num_threads``; the
workflow sets it to the job's ``threads``) and are deterministic for any thread count: sums are
taken over a fixed number of chunks and then added in chunk order. Compiled once and cached on
disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["dual_ascent", "primal_project", "total_variation_columns", "median_balance",
           "outer_step", "project_row", "project_rows"]

_CHUNKS = 32    # fixed partition of the loops that sum: the result does not depend on threads


@njit(cache=True, nogil=True, inline="always")
def _chunk(c, n_chunks, n):
    return c * n // n_chunks, (c + 1) * n // n_chunks


@njit(cache=True, nogil=True, parallel=True)
def dual_ascent(P, Fbar, ei, ej, w):
    """P_e <- clip(P_e + w_e (Fbar_i - Fbar_j), -1, 1) for every edge e = (i, j), in place."""
    M, R = P.shape
    for e in prange(M):
        i, j, we = ei[e], ej[e], w[e]
        for r in range(R):
            v = P[e, r] + we * (Fbar[i, r] - Fbar[j, r])
            if v > 1.0:
                v = 1.0
            elif v < -1.0:
                v = -1.0
            P[e, r] = v


@njit(cache=True, nogil=True, inline="always")
def _active(z, th):
    """Number of entries above th and the sum of their excess: (|A|, sum_A (z - th))."""
    cnt = 0
    s = 0.0
    for r in range(z.size):
        if z[r] > th:
            cnt += 1
            s += z[r] - th
    return cnt, s


@njit(cache=True, nogil=True, inline="always")   # a call per row costs more than the row
def project_row(z, x, th0):
    """x = (z - theta)^+ on the simplex by Newton's method from th0; returns theta."""
    R = z.size
    th = th0
    cnt, s = _active(z, th)
    if cnt == 0:                       # warm start above every entry: restart from below
        th = max((z.sum() - 1.0) / R, z.max() - 1.0)
        cnt, s = _active(z, th)
    for _ in range(R + 2):
        th += (s - 1.0) / cnt
        cnt_new, s = _active(z, th)
        if cnt_new == cnt:
            break
        cnt = cnt_new
    for r in range(R):
        v = z[r] - th
        x[r] = v if v > 0.0 else 0.0
    return th


@njit(cache=True, nogil=True, parallel=True)
def project_rows(Z, out, theta):
    """out_n = projection of Z_n for every row, theta_n (start in, threshold out) in place."""
    for n in prange(Z.shape[0]):
        theta[n] = project_row(Z[n], out[n], theta[n])


@njit(cache=True, nogil=True, parallel=True)
def primal_project(F, F_new, G, F_outer, Fbar, theta, fixed, t_ptr, t_edge, t_val, P,
                   tau, gamma_tau, extrap, sg):
    """One primal step of the accelerated primal-dual loop, node by node.

    F_new_n = Pi_simplex((F_n - gamma_tau * (D'P)_n + tau G_n) / (1 + tau)), gamma_tau = tau D_B
    (labeled rows, fixed[n], keep F_n); Fbar_n = sg * ((1 + extrap) F_new_n - extrap F_n) with
    sg = sigma D_B of the next dual step; theta (per row) warm-starts and receives the simplex
    thresholds. D' in CSR form: the entries of row n are (t_edge[k], t_val[k]),
    k in [t_ptr[n], t_ptr[n+1]). Returns ||F_new - F_outer||^2."""
    N, R = F.shape
    a = 1.0 / (1.0 + tau)
    n_chunks = min(_CHUNKS, N)
    part = np.zeros(n_chunks)
    for c in prange(n_chunks):
        lo, hi = _chunk(c, n_chunks, N)
        z = np.empty(R)
        dist = 0.0
        for n in range(lo, hi):
            x = F_new[n]
            if fixed[n]:
                x[:] = F[n]
            else:
                z[:] = 0.0
                for k in range(t_ptr[n], t_ptr[n + 1]):
                    e, v = t_edge[k], t_val[k]
                    for r in range(R):
                        z[r] += v * P[e, r]
                for r in range(R):
                    z[r] = a * (F[n, r] - gamma_tau[r] * z[r] + tau * G[n, r])
                theta[n] = project_row(z, x, theta[n])
            for r in range(R):
                Fbar[n, r] = sg[r] * ((1.0 + extrap) * x[r] - extrap * F[n, r])
                d = x[r] - F_outer[n, r]
                dist += d * d
        part[c] = dist
    return part.sum()


@njit(cache=True, nogil=True, parallel=True)
def total_variation_columns(F, ei, ej, w):
    """T_r = sum_e w_e |F_ir - F_jr| (every edge once)."""
    R = F.shape[1]
    M = ei.size
    n_chunks = max(1, min(_CHUNKS, M))
    part = np.zeros((n_chunks, R))
    for c in prange(n_chunks):
        lo, hi = _chunk(c, n_chunks, M)
        for e in range(lo, hi):
            i, j, we = ei[e], ej[e], w[e]
            for r in range(R):
                part[c, r] += we * abs(F[i, r] - F[j, r])
    T = np.zeros(R)
    for c in range(n_chunks):
        T += part[c]
    return T


@njit(cache=True, nogil=True)
def _select(a, kth):
    """a[kth] of the ascending order, by Hoare's quickselect in place (median-of-three pivot);
    numba's np.partition is several times slower on these sizes."""
    lo, hi = 0, a.size - 1
    while hi > lo:
        mid = (lo + hi) >> 1
        if a[mid] < a[lo]:
            a[mid], a[lo] = a[lo], a[mid]
        if a[hi] < a[lo]:
            a[hi], a[lo] = a[lo], a[hi]
        if a[hi] < a[mid]:
            a[hi], a[mid] = a[mid], a[hi]
        pivot = a[mid]
        i, j = lo, hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if kth <= j:
            hi = j
        elif kth >= i:
            lo = i
        else:
            break
    return a[kth]


@njit(cache=True, nogil=True, parallel=True)
def median_balance(F, k, lam, FT, buf):
    """(med, B) per column: med = the (k+1)-st largest value (the lambda-median (6) with
    k = floor(N / (lambda + 1))), B = (lambda + 1) sum (f - med)^+ - sum (f - med) (9).

    On the simplex most entries are exactly 0: with at most k positive entries and none negative
    the median is 0; otherwise a selection among the positive entries (or the whole column, when
    it has negative entries). The last sum is taken entrywise, so a constant column gives B = 0
    exactly. FT and buf (R x N) are work buffers: F is transposed once so that every column pass
    is contiguous, and the columns are independent."""
    N, R = F.shape
    n_chunks = min(_CHUNKS, N)
    npos_part = np.zeros((n_chunks, R), dtype=np.int64)
    neg_part = np.zeros((n_chunks, R), dtype=np.bool_)
    for c in prange(n_chunks):
        lo, hi = _chunk(c, n_chunks, N)
        for n in range(lo, hi):
            for r in range(R):
                v = F[n, r]
                FT[r, n] = v
                npos_part[c, r] += v > 0.0
                neg_part[c, r] |= v < 0.0
    med = np.zeros(R)
    B = np.empty(R)
    for r in prange(R):
        npos = 0
        neg = False
        for c in range(n_chunks):
            npos += npos_part[c, r]
            neg |= neg_part[c, r]
        col = FT[r]
        work = buf[r]
        if neg:
            work[:] = col
            med[r] = _select(work, N - 1 - k)
        elif npos > k:
            m = 0
            for n in range(N):                 # branch-free gather of the positive entries
                work[m] = col[n]
                m += col[n] > 0.0
            med[r] = _select(work[:m], m - 1 - k)
        hplus = 0.0
        total = 0.0
        mr = med[r]
        for n in range(N):
            h = col[n] - mr
            total += h
            hplus += max(h, 0.0)
        B[r] = (lam + 1.0) * hplus - total
    return med, B


@njit(cache=True, nogil=True, parallel=True)
def outer_step(F, med, lam, c):
    """G = F + V diag(c), V the element of dB of Theorem 5 (``balance_subgradient``): lambda
    above the median, -1 below, q = (n^- - lambda n^+) / n^0 on the entries equal to it."""
    N, R = F.shape
    n_chunks = min(_CHUNKS, N)
    plus_part = np.zeros((n_chunks, R))
    zero_part = np.zeros((n_chunks, R))
    for ch in prange(n_chunks):
        lo, hi = _chunk(ch, n_chunks, N)
        for n in range(lo, hi):
            for r in range(R):
                if F[n, r] > med[r]:
                    plus_part[ch, r] += 1.0
                elif F[n, r] == med[r]:
                    zero_part[ch, r] += 1.0
    n_plus = plus_part.sum(axis=0)         # exact integer counts
    n_zero = zero_part.sum(axis=0)
    q = (N - n_plus - n_zero - lam * n_plus) / n_zero   # n_zero >= 1: med is a value of f
    G = np.empty_like(F)
    for n in prange(N):
        for r in range(R):
            f = F[n, r]
            if f > med[r]:
                G[n, r] = f + lam * c[r]
            elif f == med[r]:
                G[n, r] = f + q[r] * c[r]
            else:
                G[n, r] = f - c[r]
    return G
