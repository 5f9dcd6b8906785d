"""Compiled (numba) kernel of game-theoretic p-Laplace learning: Gauss-Seidel sweeps.

``plaplace_sweeps`` updates every free node in turn, all classes at once,

    u_i <- (a / d_i) sum_j w_ij u_j + ((1 - a) / 2) (max_j u_j + min_j u_j),   a = 1 / (p - 1),

reading the values its predecessors in the sweep have just written (Gauss-Seidel, as
GraphLearning's C code; a Jacobi sweep, which reads only the last sweep's, needs about 1.8 times
as many sweeps to the same fixed point on the digits graph). The classes are independent
problems: each stops after its first sweep that changes it by <= tol (as GraphLearning's, which
solves one class after the other), which on digits saves about a third of the class-sweeps over
running every class as long as the slowest. A sweep reads a node's neighbour list once for the
classes still running, four at a time with twelve independent running sums, maxima and minima
(not one long dependency chain per class; numba's loop vectorizer does not apply to this loop
and its SLP vectorizer is off by default, so this is scalar code with instruction-level
parallelism).

Compiled once and cached on disk (``cache=True``); one thread (the sweep is sequential).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["plaplace_sweeps"]


@njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _one(indptr, indices, data, U, i, c, f, b):
    """The update of node i in class c alone (the classes left over from the groups of four)."""
    p0 = indptr[i]
    h = U[indices[p0], c]
    lo = h
    s = 0.0
    for jj in range(p0, indptr[i + 1]):
        x = U[indices[jj], c]
        s += data[jj] * x
        h = max(h, x)
        lo = min(lo, x)
    return f * s + b * (h + lo)


@njit(cache=True, nogil=True, boundscheck=False)
def plaplace_sweeps(indptr, indices, data, free, U, a, tol, max_iter):
    """Gauss-Seidel sweeps over the nodes ``free`` (each with an edge) of the p-Laplace fixed
    point on U (n, C) in place; W in CSR (``indptr``, ``indices``, ``free``: uint64, so that no
    index needs numba's test for a negative one). A class whose sweep changed it by <= tol is
    done (its later sweeps are skipped, as GraphLearning stops each class on its own). Returns
    (sweeps of the slowest class, the largest change of each class's last sweep)."""
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
        groups = n_active // 4 * 4
        for kk in range(m):
            i = free[kk]
            p0 = indptr[i]
            p1 = indptr[i + 1]
            f = ad[kk]
            for g in range(0, groups, 4):
                c0 = active[g]
                c1 = active[g + 1]
                c2 = active[g + 2]
                c3 = active[g + 3]
                j = indices[p0]
                h0 = U[j, c0]
                h1 = U[j, c1]
                h2 = U[j, c2]
                h3 = U[j, c3]
                l0, l1, l2, l3 = h0, h1, h2, h3
                s0 = 0.0
                s1 = 0.0
                s2 = 0.0
                s3 = 0.0
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
                new = _one(indptr, indices, data, U, i, c, f, b)
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
