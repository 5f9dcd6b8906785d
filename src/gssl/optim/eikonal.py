"""The graph p-eikonal equation (Calder & Ettehad 2022) by a fast marching method:

    sum_j w_ij (u_i - u_j)_+^p = f_i  off the boundary set,  u = 0 on it.

Nodes are accepted in the order of their values, as in Dijkstra's algorithm (the equation at a
node involves only its neighbours of smaller value, so an accepted value is final); a node's
tentative value solves its equation over its accepted neighbours, exactly for p = 1 (sorting
them), by bisection otherwise (GraphLearning 1.7.5's ``peikonal_fmm``, read to settle the solver
and its 30 bisection steps, which the paper leaves open). Compiled (numba, cached on disk); the
heap loop is sequential by nature.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

from .graph_weights import zero_diagonal_weights


@njit(cache=True)
def _local_solve(vals, wts, m, f, p, n_bisect):
    """The t with sum_k wts_k (t - vals_k)_+^p = f over the first m entries (the accepted
    neighbours' values and weights), which it sorts by value in place (a handful: insertion)."""
    for a in range(1, m):
        v, w, b = vals[a], wts[a], a
        while b > 0 and vals[b - 1] > v:
            vals[b], wts[b] = vals[b - 1], wts[b - 1]
            b -= 1
        vals[b], wts[b] = v, w
    if p == 1.0:
        sw, swu, t = 0.0, 0.0, np.inf
        for k in range(m):
            if vals[k] >= t:
                break
            sw += wts[k]
            swu += wts[k] * vals[k]
            t = (f + swu) / sw
        return t
    lo = vals[0]
    hi = lo + (f / wts[0]) ** (1.0 / p)  # the nearest neighbour alone reaches f there
    for _ in range(n_bisect):
        mid = 0.5 * (lo + hi)
        g = 0.0
        for k in range(m):
            if mid > vals[k]:
                g += wts[k] * (mid - vals[k]) ** p
        if g > f:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


@njit(cache=True)
def peikonal_fmm(indptr, indices, data, sources, f, p, n_bisect):
    """u (n,) of the p-eikonal equation with u = 0 at ``sources``; inf where none is reached."""
    n = indptr.size - 1
    u = np.full(n, np.inf)
    accepted = np.zeros(n, dtype=np.bool_)
    width = 1
    for i in range(n):
        width = max(width, indptr[i + 1] - indptr[i])
    vals = np.empty(width)
    wts = np.empty(width)
    heap = [(0.0, np.int64(0))]
    heap.pop()
    for s in sources:
        u[s] = 0.0
        heapq.heappush(heap, (0.0, np.int64(s)))
    while len(heap) > 0:
        val, i = heapq.heappop(heap)
        if accepted[i] or val > u[i]:
            continue  # stale entry
        accepted[i] = True
        for jj in range(indptr[i], indptr[i + 1]):
            j = indices[jj]
            if accepted[j]:
                continue
            m = 0
            for kk in range(indptr[j], indptr[j + 1]):
                if accepted[indices[kk]]:
                    vals[m] = u[indices[kk]]
                    wts[m] = data[kk]
                    m += 1
            t = _local_solve(vals, wts, m, f[j], p, n_bisect)
            if t < u[j]:
                u[j] = t
                heapq.heappush(heap, (t, np.int64(j)))
    return u


def peikonal(W, labeled: np.ndarray, codes: np.ndarray, n_classes: int, p: float = 1.0, *,
             n_bisect: int = 30) -> np.ndarray:
    """(n, C): column c the p-eikonal solution from the labeled nodes of class c (f = 1)."""
    Wc, _ = zero_diagonal_weights(W)
    f = np.ones(Wc.shape[0])
    U = np.empty((Wc.shape[0], n_classes))
    for c in range(n_classes):
        U[:, c] = peikonal_fmm(Wc.indptr, Wc.indices, Wc.data, labeled[codes[labeled] == c], f,
                               float(p), int(n_bisect))
    return U
