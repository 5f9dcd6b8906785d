"""Compiled (numba) kernels that sum over the neighbours of every node of a graph in CSR.

* ``plaplace_sweeps``: game-theoretic p-Laplace learning's Gauss-Seidel sweeps. Every free node
  in turn, all classes at once,

      u_i <- (a / d_i) sum_j w_ij u_j + ((1 - a) / 2) (max_j u_j + min_j u_j),   a = 1 / (p - 1),

  reading the values its predecessors in the sweep have just written (Gauss-Seidel, as
  GraphLearning's C code; a Jacobi sweep, which reads only the last sweep's, needs about 1.8
  times as many sweeps to the same fixed point on the digits graph). The classes are
  independent problems: each stops after its first sweep that changes it by <= tol (as
  GraphLearning's, which solves one class after the other), which on digits saves about a third
  of the class-sweeps over running every class as long as the slowest.
* ``diffuse_indicators`` / ``diffuse_changes``: volume MBO's diffusion psi = W_s (W_s U) of the
  one-hot U of the labels, the second product summed in the order of scipy's CSR product (the
  same bits); ``diffuse_changes`` brings it to new labels by summing again only the rows they
  reach (the same bits again).
* ``chebyshev_filter``: T_m(c1 W_s + c0) x, the polynomial multiclass MBO's eigensolver runs
  its Lanczos iteration on.

The first two read a node's neighbour list once for four classes, with twelve independent
running sums, maxima and minima (:func:`_sums4`: not one long dependency chain per class;
numba's loop vectorizer does not apply to these loops and its SLP vectorizer is off by default,
so this is scalar code with instruction-level parallelism). Each sum runs over the row in CSR
order from 0.0, as scipy's product does. The one helper serves both: inlined, the maxima and
minima the diffusion does not use are dropped by LLVM. They live in one file with their callers
because numba's on-disk cache is invalidated per source file (a change to a helper in another
file would leave its callers' cached machine code stale). Compiled once and cached on disk
(``cache=True``); one thread (the sweeps are sequential).

Index arrays are unsigned (uint64, or uint32 where the bytes streamed count), so that no index
needs numba's test for a negative one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["plaplace_sweeps", "diffuse_indicators", "diffuse_changes", "chebyshev_filter"]


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _sums4(p0, p1, indices, data, U, c0, c1, c2, c3):
    """Over the neighbours j of a row (its entries p0..p1 - 1), in CSR order: sum_j w_ij U[j, c],
    max_j U[j, c] and min_j U[j, c] for the four columns c0..c3 (a column may repeat, for fewer
    than four; a row without entries gives sums 0, maxima -inf and minima inf). Returns
    (s0, s1, s2, s3, h0, h1, h2, h3, l0, l1, l2, l3). The caller reads the row's bounds once
    for all its groups of columns (read here, they cost p-Laplace's sweeps a fifth more time)."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    h0 = -np.inf
    h1 = -np.inf
    h2 = -np.inf
    h3 = -np.inf
    l0 = np.inf
    l1 = np.inf
    l2 = np.inf
    l3 = np.inf
    for jj in range(p0, p1):
        j = indices[jj]
        w = data[jj]
        x0 = U[j, c0]
        x1 = U[j, c1]
        x2 = U[j, c2]
        x3 = U[j, c3]
        s0 += w * x0
        s1 += w * x1
        s2 += w * x2
        s3 += w * x3
        h0 = max(h0, x0)
        h1 = max(h1, x1)
        h2 = max(h2, x2)
        h3 = max(h3, x3)
        l0 = min(l0, x0)
        l1 = min(l1, x1)
        l2 = min(l2, x2)
        l3 = min(l3, x3)
    return s0, s1, s2, s3, h0, h1, h2, h3, l0, l1, l2, l3


# -- p-Laplace learning --------------------------------------------------------------------------
@njit(cache=True, nogil=True, boundscheck=False)
def plaplace_sweeps(indptr, indices, data, free, U, a, tol, max_iter):
    """Gauss-Seidel sweeps over the nodes ``free`` (each with an edge) of the p-Laplace fixed
    point on U (n, C) in place; W in CSR (``indptr``, ``indices``, ``free``: uint64). A class
    whose sweep changed it by <= tol is done (its later sweeps are skipped, as GraphLearning
    stops each class on its own). The classes still running go four at a time, those left over
    one at a time (the helper with the one class four times: LLVM folds the copies; padding the
    last group instead cost a fifth more time). Returns (sweeps of the slowest class, the
    largest change of each class's last sweep)."""
    C = U.shape[1]
    m = free.size
    ad = np.empty(m)
    for kk in range(m):
        i = free[kk]
        d = 0.0
        for jj in range(indptr[i], indptr[i + 1]):
            d += data[jj]
        ad[kk] = a / d
    b = 0.5 * (1.0 - a)
    active = np.arange(C)
    n_active = C
    change = np.zeros(C)
    last = np.zeros(C)
    it = 0
    while it < max_iter and n_active > 0:
        for q in range(n_active):
            change[active[q]] = 0.0
        for kk in range(m):
            i = free[kk]
            p0 = indptr[i]
            p1 = indptr[i + 1]
            f = ad[kk]
            groups = n_active // 4 * 4
            for g in range(0, groups, 4):
                c0 = active[g]
                c1 = active[g + 1]
                c2 = active[g + 2]
                c3 = active[g + 3]
                s0, s1, s2, s3, h0, h1, h2, h3, l0, l1, l2, l3 = _sums4(
                    p0, p1, indices, data, U, c0, c1, c2, c3)
                n0 = f * s0 + b * (h0 + l0)
                n1 = f * s1 + b * (h1 + l1)
                n2 = f * s2 + b * (h2 + l2)
                n3 = f * s3 + b * (h3 + l3)
                change[c0] = max(change[c0], abs(n0 - U[i, c0]))
                change[c1] = max(change[c1], abs(n1 - U[i, c1]))
                change[c2] = max(change[c2], abs(n2 - U[i, c2]))
                change[c3] = max(change[c3], abs(n3 - U[i, c3]))
                U[i, c0] = n0
                U[i, c1] = n1
                U[i, c2] = n2
                U[i, c3] = n3
            for g in range(groups, n_active):
                c = active[g]
                s0, s1, s2, s3, h0, h1, h2, h3, l0, l1, l2, l3 = _sums4(
                    p0, p1, indices, data, U, c, c, c, c)
                new = f * s0 + b * (h0 + l0)
                change[c] = max(change[c], abs(new - U[i, c]))
                U[i, c] = new
        it += 1
        kept = 0
        for q in range(n_active):
            c = active[q]
            last[c] = change[c]
            if change[c] > tol:
                active[kept] = c
                kept += 1
        n_active = kept
    return it, last


# -- volume MBO's diffusion ----------------------------------------------------------------------
@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _v_row(indptr, indices, data, labels, V, i):
    """V[i] = (Ws U)[i]: row i's weights gathered by its neighbours' labels, in CSR order."""
    for c in range(V.shape[1]):
        V[i, c] = 0.0
    for jj in range(indptr[i], indptr[i + 1]):
        lab = labels[indices[jj]]
        if lab >= 0:  # (-1: a node no label reached, a zero row of U)
            V[i, lab] += data[jj]


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _psi_row(indptr, indices, data, V, psi, i):
    """psi[i] = (Ws V)[i]: for each class, w_ij V_jc summed over the row in CSR order, as
    scipy's product does; four classes at a time (the last one to three in one group padded by
    repeating the last class), in registers."""
    k = V.shape[1]
    p0 = indptr[i]
    p1 = indptr[i + 1]
    fours = k // 4 * 4
    for c in range(0, fours, 4):
        s0, s1, s2, s3, _, _, _, _, _, _, _, _ = _sums4(p0, p1, indices, data, V, c, c + 1,
                                                       c + 2, c + 3)
        psi[i, c] = s0
        psi[i, c + 1] = s1
        psi[i, c + 2] = s2
        psi[i, c + 3] = s3
    if fours < k:
        c = fours
        s0, s1, s2, _, _, _, _, _, _, _, _, _ = _sums4(p0, p1, indices, data, V, c,
                                                       min(c + 1, k - 1), min(c + 2, k - 1),
                                                       k - 1)
        psi[i, c] = s0
        if c + 1 < k:
            psi[i, c + 1] = s1
        if c + 2 < k:
            psi[i, c + 2] = s2


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _diffuse_rows(indptr, indices, data, labels, V, psi):
    """Every row of V = Ws U and then of psi = Ws V, in place."""
    for i in range(indptr.size - 1):
        _v_row(indptr, indices, data, labels, V, i)
    for i in range(indptr.size - 1):
        _psi_row(indptr, indices, data, V, psi, i)


@njit(cache=True, nogil=True, boundscheck=False)
def diffuse_indicators(indptr, indices, data, labels, k):
    """psi = Ws (Ws U) with U the one-hot (n, k) indicator of ``labels`` and Ws given in CSR
    (``indptr``, ``indices``: uint64).

    V = Ws U gathers each row's weights by its neighbours' labels; psi = Ws V sums, for each
    entry (i, c), w_ij V_jc over the row's neighbours in CSR order, as scipy's product does: the
    same sums in the same order, so ``Ws @ (Ws @ U)`` to the bit (the tests check it), with no
    store per term and no single dependency chain per class. Returns (psi, V)."""
    n = indptr.size - 1
    V = np.empty((n, k))
    psi = np.empty((n, k))
    _diffuse_rows(indptr, indices, data, labels, V, psi)
    return psi, V


@njit(cache=True, nogil=True, boundscheck=False)
def diffuse_changes(indptr, indices, data, tindptr, tindices, old, labels, V, psi, mark, stamp):
    """Bring psi = Ws (Ws U) and V = Ws U (of the labels ``old``) in place to ``labels``: the
    rows of V whose neighbours changed label are summed again, then the rows of psi whose
    neighbours' V rows were (``tindptr``, ``tindices``: the transpose's pattern, uint64). Each
    row is summed afresh, the sums in the same order, so the result is diffuse_indicators's to
    the bit. An MBO step changes a few labels (on digits some 1.5 % of the nodes, whose
    two-step neighbourhoods hold half the nodes); past n / 8 changed labels every row is summed.
    ``mark`` (n, int64) holds stamps; ``stamp`` and stamp + 1 must not have been used before.
    Returns the rows of psi summed."""
    n = indptr.size - 1
    changed = 0
    for s in range(n):
        if old[s] != labels[s]:
            changed += 1
    if changed * 8 > n:
        _diffuse_rows(indptr, indices, data, labels, V, psi)
        return n
    rows = np.empty(n, np.int64)
    n_rows = 0
    for s in range(n):
        if old[s] != labels[s]:
            for jj in range(tindptr[s], tindptr[s + 1]):
                j = tindices[jj]  # row j of Ws has column s: V[j] depends on s's label
                if mark[j] != stamp:
                    mark[j] = stamp
                    rows[n_rows] = j
                    n_rows += 1
    for q in range(n_rows):
        _v_row(indptr, indices, data, labels, V, rows[q])
    again = np.empty(n, np.int64)
    n_again = 0
    for q in range(n_rows):
        j = rows[q]
        for jj in range(tindptr[j], tindptr[j + 1]):
            i = tindices[jj]
            if mark[i] != stamp + 1:
                mark[i] = stamp + 1
                again[n_again] = i
                n_again += 1
    for q in range(n_again):
        _psi_row(indptr, indices, data, V, psi, again[q])
    return n_again


# -- multiclass MBO's eigensolver ----------------------------------------------------------------
@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _row_dot(indptr, indices, data, x, i):
    """(S x)[i], summed over the row in CSR order."""
    s = 0.0
    for jj in range(indptr[i], indptr[i + 1]):
        s += data[jj] * x[indices[jj]]
    return s


@njit(cache=True, nogil=True, boundscheck=False)
def chebyshev_filter(indptr, indices, data, x, degree, c0, c1, out, prev, cur, u):
    """T_degree(c1 (S + u u^T) + c0 I) x for S in CSR (``indptr``, ``indices``: uint32, half the
    bytes of uint64 to stream: at 70,000 nodes the product is bound by memory) and a rank-one
    term u u^T (``u`` empty: none) by the three-term recurrence T_0 = x, T_1 = (c1 S + c0) x,
    T_j+1 = 2 (c1 S + c0) T_j - T_j-1, one pass over S per degree (degree >= 1). ``out``,
    ``prev``, ``cur``: (n,) float64 buffers; the result is one of them (the next call overwrites
    it). The MBO eigensolvers run their Lanczos iteration on this polynomial
    (:func:`gssl.optim.mbo.normalized_eigenpairs`: S = W_s; modularity MBO's: S = L, u u^T its
    null-model term)."""
    n = x.size
    ux = _dot(u, x)
    for i in range(n):
        prev[i] = x[i]
        s = _row_dot(indptr, indices, data, x, i)
        if u.size:
            s += ux * u[i]
        cur[i] = c1 * s + c0 * x[i]
    for _ in range(degree - 1):
        ux = _dot(u, cur)
        for i in range(n):
            s = _row_dot(indptr, indices, data, cur, i)
            if u.size:
                s += ux * u[i]
            out[i] = 2.0 * (c1 * s + c0 * cur[i]) - prev[i]
        prev, cur, out = cur, out, prev
    return cur


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _dot(u, x):
    """u . x (0 for an empty u)."""
    s = 0.0
    for i in range(u.size):
        s += u[i] * x[i]
    return s

