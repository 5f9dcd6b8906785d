"""Compiled (numba) kernel of volume MBO's volume-constrained label decision: the assignment.

``assign_within_bounds``: labels l maximizing sum_i A[i, l_i] with lower_c <= #{i: l_i = c} <=
upper_c, exactly, by successive shortest paths on the k classes (a min-cost flow whose nodes are
the classes: k is small, the rows many). Invariant: every row sits in a best class at the class
prices p, A[i, l_i] - p_{l_i} >= A[i, c] - p_c. Then the labels are optimal among all labelings
with the same class counts (LP duality), and moving rows along a path of classes s -> ... -> t,
one row per edge a -> b, costs sum (A_ia - A_ib) = dist(s, t) + p_s - p_t, where dist is the
shortest path in the reduced costs r(a -> b) = min over rows i of a of
(A_ia - p_a) - (A_ib - p_b) >= 0 (Dijkstra on k nodes). Each step takes the path that most reduces
the bound violation (a class over its upper bound giving, a class under its lower bound taking),
then the cheapest; with every bound met, a path only runs while it gains more than ``gain_tol``
(unequal bounds: a class may still give to another at a profit). The prices then drop by the
distances (capped at the target's): reduced costs stay >= 0, the path's become 0, so the moved
rows again sit in a best class. Each step moves one unit; from warm prices (the previous MBO
step's) few are needed. The minimum of each pair (a, b) comes from a heap of the rows of a keyed
by A_ia - A_ib (price-free, so a price change never reorders it); rows that leave a stay in it
as stale entries, dropped when they surface.

With equal bounds (volume MBO's default: exact class sizes) the result is an optimal assignment
(the argmax start at the given prices, then paths until every class is full); with unequal bounds
it is within m * gain_tol of the optimum. GraphLearning's C code (a forward-reverse auction with
eps-scaling) was read for the problem's setting only; the algorithm here is the textbook
successive-shortest-path method (Ahuja, Magnanti & Orlin, Network Flows, ch. 9) on the
transportation problem's class graph.

The other compiled loops of an MBO step are in :mod:`gssl.optim.mbo_step_kernels` (the noise, the
projection weights) and :mod:`gssl.optim.neighbour_sums` (the diffusion). The assignment's helpers
all live here: numba's on-disk cache is invalidated per source file. Cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["assign_within_bounds"]

# statuses of _augment
_DONE, _HEAPS_FULL, _TOO_MANY = 0, 1, 2


@njit(cache=True, nogil=True)
def _sift_down(keys, rows, base, size, pos, key, row):
    """Place (key, row) into the min-heap keys[base:base+size] starting at ``pos``."""
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and keys[base + child + 1] < keys[base + child]:
            child += 1
        if keys[base + child] >= key:
            break
        keys[base + pos], rows[base + pos] = keys[base + child], rows[base + child]
        pos = child
    keys[base + pos], rows[base + pos] = key, row


@njit(cache=True, nogil=True)
def _push(keys, rows, base, size, key, row):
    """Add (key, row) to the min-heap keys[base:base+size] (room for it is the caller's)."""
    pos = size
    while pos > 0:
        parent = (pos - 1) >> 1
        if keys[base + parent] <= key:
            break
        keys[base + pos], rows[base + pos] = keys[base + parent], rows[base + parent]
        pos = parent
    keys[base + pos], rows[base + pos] = key, row


@njit(cache=True, nogil=True)
def _top(keys, rows, hsize, base, h, labels, a):
    """Key of the smallest valid entry of heap h (rows still in class a), popping stale ones;
    inf when none is left."""
    size = hsize[h]
    while size > 0 and labels[rows[base]] != a:
        size -= 1
        if size > 0:
            _sift_down(keys, rows, base, size, 0, keys[base + size], rows[base + size])
    hsize[h] = size
    return keys[base] if size > 0 else np.inf


@njit(cache=True, nogil=True)
def _dijkstra(k, K, prices, counts, dist, pred, done):
    """Shortest paths in the reduced costs max(K[a, b] - p_a + p_b, 0) from the classes whose
    ``dist`` the caller set (their start values; inf elsewhere, ``pred`` -1 everywhere)."""
    for c in range(k):
        done[c] = False
    for _ in range(k):
        u = -1
        du = np.inf
        for c in range(k):
            if not done[c] and dist[c] < du:
                du = dist[c]
                u = c
        if u < 0:
            break
        done[u] = True
        if counts[u] == 0:
            continue
        for v in range(k):
            if done[v] or v == u or K[u, v] == np.inf:
                continue
            r = K[u, v] - prices[u] + prices[v]
            if r < 0.0:  # rounding: the reduced costs are >= 0
                r = 0.0
            if du + r < dist[v]:
                dist[v] = du + r
                pred[v] = u


@njit(cache=True, nogil=True)
def _best_path(K, prices, counts, lower, upper, gain_tol, dist, pred, done, best_dist, best_pred):
    """The path to take next: from a class that can give a row (count > lower) to another that
    can take one (count < upper), most reducing the bound violation, then cheapest; its
    distances and predecessors go to best_dist / best_pred, and the prices drop by the distances
    (capped at the end's): the reduced costs stay >= 0, the path's become 0. Returns (s, t), or
    (-1, -1) when no path is left (every bound met and none gains more than gain_tol).

    Equal bounds: every path runs from an over-full class to an under-full one (two disjoint
    sets, every path reducing the violation by 2), so one Dijkstra from all the over-full
    classes at once, each starting at its price, finds the cheapest (its loss dist + p_s - p_t
    is the distance found less p_t). Otherwise one Dijkstra per class that can give a row."""
    k = K.shape[0]
    equal = True
    for c in range(k):
        equal = equal and lower[c] == upper[c]
    best_s, best_t = -1, -1
    if equal:
        for c in range(k):
            best_dist[c] = prices[c] if counts[c] > upper[c] else np.inf
            best_pred[c] = -1
        _dijkstra(k, K, prices, counts, best_dist, best_pred, done)
        best_loss = np.inf
        for t in range(k):
            if counts[t] < upper[t] and best_dist[t] - prices[t] < best_loss:
                best_loss = best_dist[t] - prices[t]
                best_t = t
        if best_t < 0:
            return -1, -1
        best_s = best_t
        while best_pred[best_s] >= 0:
            best_s = best_pred[best_s]
    else:
        best_tier, best_loss = -1, np.inf
        for s in range(k):
            if counts[s] <= lower[s]:
                continue
            for c in range(k):
                dist[c] = np.inf
                pred[c] = -1
            dist[s] = 0.0
            _dijkstra(k, K, prices, counts, dist, pred, done)
            tier_s = 1 if counts[s] > upper[s] else 0
            for t in range(k):
                if t == s or counts[t] >= upper[t] or dist[t] == np.inf:
                    continue
                tier = tier_s + (1 if counts[t] < lower[t] else 0)
                loss = dist[t] + prices[s] - prices[t]  # sum of A_ia - A_ib along the path
                if tier > best_tier or (tier == best_tier and loss < best_loss):
                    best_tier, best_loss, best_s, best_t = tier, loss, s, t
                    for c in range(k):
                        best_dist[c] = dist[c]
                        best_pred[c] = pred[c]
        if best_s < 0 or (best_tier == 0 and best_loss >= -gain_tol):
            return -1, -1
    cut = best_dist[best_t]
    for c in range(k):  # reduced costs stay >= 0, the path's become 0
        prices[c] -= min(best_dist[c], cut)
    return best_s, best_t


@njit(cache=True, nogil=True)
def _path_arrays(k):
    """_best_path's work arrays (dist, pred, done, best_dist, best_pred) and on_path, all False."""
    return (np.empty(k), np.empty(k, np.int64), np.empty(k, np.bool_), np.empty(k),
            np.empty(k, np.int64), np.zeros(k, np.bool_))


_R = 8  # candidates kept per pair of classes in the first phase
_EAGER = 50  # from this many rows per pair of classes, the arg-max pass keeps the candidates


@njit(cache=True, nogil=True)
def _offer(bufk, bufr, bufmax, a, b, key, row):
    """Row ``row`` of class a, key A_ia - A_ib, into the R smallest candidates of pair (a, b)
    (it replaces the largest, if smaller)."""
    if key >= bufmax[a, b]:
        return
    worst = 0
    for q in range(1, _R):
        if bufk[a, b, q] > bufk[a, b, worst]:
            worst = q
    bufk[a, b, worst] = key
    bufr[a, b, worst] = row
    top = bufk[a, b, 0]
    for q in range(1, _R):
        if bufk[a, b, q] > top:
            top = bufk[a, b, q]
    bufmax[a, b] = top


@njit(cache=True, nogil=True)
def _row_minima(A, i, a, K, Krow):
    """Fold row i of class a into K[a, :] (the minima of A_ia - A_ib, Krow: their rows)."""
    for b in range(A.shape[1]):
        if b != a:
            key = A[i, a] - A[i, b]
            if key < K[a, b]:
                K[a, b] = key
                Krow[a, b] = i


@njit(cache=True, nogil=True)
def _least(bufk, bufr, labels, a, b, K, Krow):
    """K[a, b] and its row from the candidates of (a, b) still in class a; False if none is."""
    K[a, b] = np.inf
    Krow[a, b] = -1
    for q in range(_R):
        r = bufr[a, b, q]
        if r >= 0 and labels[r] == a and bufk[a, b, q] < K[a, b]:
            K[a, b] = bufk[a, b, q]
            Krow[a, b] = r
    return Krow[a, b] >= 0


@njit(cache=True, nogil=True)
def _augment_candidates(A, labels, counts, lower, upper, prices, gain_tol, max_moves, K, Krow,
                        bufk, bufr, bufmax, kept):
    """Successive shortest paths from the minima K of the current labels (given: the arg-max
    pass finds them). A row entering a class can only lower its minima. When the row of a
    pair's minimum leaves, the class is read for that pair once, keeping its R smallest keys as
    candidates; later the pair's minimum is the smallest candidate still in the class, a row
    entering is offered to the candidates, and the class is read again only when all R have
    left. (Every row left out of a pair's candidates had a key >= all those kept then, and a
    key only enters below the largest kept, so that bound only falls: while a candidate is still
    in the class, the smallest such is the minimum.) The rows are grouped by class (a counting
    sort) at the first read, the rows that move after it listed apart. No set-up beyond the
    first pass, and a path mostly costs some k R steps: this suits the few paths from warm
    prices. Returns (status, moves): _DONE, _TOO_MANY, or _HEAPS_FULL when the reads have cost
    more than building the heaps would (about 3 m k), or the list of moved rows is full (the
    heaps then take over)."""
    m, k = A.shape
    seg = np.zeros(k + 1, np.int64)
    order = np.empty(0, np.int64)
    grouped = False
    arrived = np.empty(m + k, np.int64)
    n_arrived = 0
    work, budget = 0, 3 * m * k
    dist, pred, done, best_dist, best_pred, on_path = _path_arrays(k)
    moves = 0
    while True:
        s, t = _best_path(K, prices, counts, lower, upper, gain_tol, dist, pred, done,
                          best_dist, best_pred)
        if s < 0:
            return _DONE, moves
        if moves >= max_moves:
            return _TOO_MANY, moves
        if work > budget or n_arrived + k > arrived.size:
            return _HEAPS_FULL, moves
        c = t
        while c != s:
            a = best_pred[c]
            row = Krow[a, c]
            labels[row] = c
            counts[a] -= 1
            counts[c] += 1
            arrived[n_arrived] = row
            n_arrived += 1
            on_path[a] = True
            for b in range(k):  # the row enters c: its keys can lower c's minima
                if b != c:
                    key = A[row, c] - A[row, b]
                    if kept[c, b] and key < bufmax[c, b]:
                        _offer(bufk, bufr, bufmax, c, b, key, row)
                    if key < K[c, b]:
                        K[c, b] = key
                        Krow[c, b] = row
            c = a
        for a in range(k):
            if not on_path[a]:
                continue
            on_path[a] = False
            for b in range(k):
                if b == a or (Krow[a, b] >= 0 and labels[Krow[a, b]] == a):
                    continue  # the pair's minimum is still in a
                if kept[a, b] and _least(bufk, bufr, labels, a, b, K, Krow):
                    continue
                if not grouped:  # no candidate left: read the class for this pair
                    grouped = True
                    for i in range(m):
                        seg[labels[i] + 1] += 1
                    for c in range(k):
                        seg[c + 1] += seg[c]
                    fill = seg[:k].copy()
                    order = np.empty(m, np.int64)
                    for i in range(m):
                        order[fill[labels[i]]] = i
                        fill[labels[i]] += 1
                    n_arrived = 0  # the grouping holds the rows as they are now
                    work += 2 * m
                bufmax[a, b] = np.inf
                for q in range(_R):
                    bufk[a, b, q] = np.inf
                    bufr[a, b, q] = -1
                for q in range(seg[a], seg[a + 1]):
                    i = order[q]
                    if labels[i] == a and A[i, a] - A[i, b] < bufmax[a, b]:
                        _offer(bufk, bufr, bufmax, a, b, A[i, a] - A[i, b], i)
                for q in range(n_arrived):
                    i = arrived[q]
                    if labels[i] == a and A[i, a] - A[i, b] < bufmax[a, b]:
                        _offer(bufk, bufr, bufmax, a, b, A[i, a] - A[i, b], i)
                work += seg[a + 1] - seg[a] + n_arrived
                kept[a, b] = True
                _least(bufk, bufr, labels, a, b, K, Krow)
        moves += 1


@njit(cache=True, nogil=True)
def _augment(A, labels, counts, lower, upper, prices, gain_tol, slack, max_moves, moves):
    """Successive shortest paths from the current labels with the minima K kept in heaps (room
    for ``slack`` rows entering each class). Returns (status, moves so far)."""
    m, k = A.shape
    cap = np.empty(k, np.int64)
    start = np.empty(k, np.int64)
    total = 0
    for a in range(k):
        cap[a] = counts[a] + slack
        start[a] = total
        total += k * cap[a]
    keys = np.empty(total, np.float64)
    rows = np.empty(total, np.int64)
    hsize = np.zeros(k * k, np.int64)
    for i in range(m):
        a = labels[i]
        for b in range(k):
            if b != a:
                h = a * k + b
                q = start[a] + b * cap[a] + hsize[h]
                keys[q] = A[i, a] - A[i, b]
                rows[q] = i
                hsize[h] += 1
    for a in range(k):
        for b in range(k):
            h = a * k + b
            base = start[a] + b * cap[a]
            size = hsize[h]
            for pos in range((size - 2) // 2, -1, -1):
                _sift_down(keys, rows, base, size, pos, keys[base + pos], rows[base + pos])
    K = np.full((k, k), np.inf)
    for a in range(k):
        for b in range(k):
            if b != a:
                K[a, b] = _top(keys, rows, hsize, start[a] + b * cap[a], a * k + b, labels, a)

    dist, pred, done, best_dist, best_pred, on_path = _path_arrays(k)
    while True:
        s, t = _best_path(K, prices, counts, lower, upper, gain_tol, dist, pred, done,
                          best_dist, best_pred)
        if s < 0:
            return _DONE, moves
        if moves >= max_moves:
            return _TOO_MANY, moves
        c = t
        while c != s:  # one row along every edge of the path, from its end back
            a = best_pred[c]
            on_path[a] = True
            on_path[c] = True
            row = rows[start[a] + c * cap[a]]  # the top of heap (a, c): K[a, c]'s row
            labels[row] = c
            counts[a] -= 1
            counts[c] += 1
            for b in range(k):
                if b != c:
                    h = c * k + b
                    if hsize[h] == cap[c]:
                        return _HEAPS_FULL, moves  # rebuilt from the labels with more room
                    _push(keys, rows, start[c] + b * cap[c], hsize[h], A[row, c] - A[row, b], row)
                    hsize[h] += 1
            c = a
        moves += 1
        for a in range(k):
            if on_path[a]:
                on_path[a] = False
                for b in range(k):
                    if b != a:
                        K[a, b] = _top(keys, rows, hsize, start[a] + b * cap[a], a * k + b,
                                       labels, a)


@njit(cache=True, nogil=True)
def assign_within_bounds(A, lower, upper, prices, gain_tol, max_moves):
    """Labels (int64, m) of the assignment of the rows of A (m, k) with class counts within
    [lower, upper] (feasible bounds: the caller checks), from the class ``prices`` (k, updated in
    place to the final ones). Returns (labels, moves, status): status 0 done, 2 more than
    ``max_moves`` paths were needed.

    The first paths keep each pair's minimum by its 8 smallest candidates, read from its class
    when first needed (cheap for the few paths a warm start needs); when the reads cost more
    than heaps of all the rows would (a cold start: thousands of paths), the heaps take over."""
    m, k = A.shape
    labels = np.empty(m, np.int64)
    counts = np.zeros(k, np.int64)
    K = np.full((k, k), np.inf)
    Krow = np.full((k, k), -1, np.int64)
    bufk = np.full((k, k, _R), np.inf)
    bufr = np.full((k, k, _R), -1, np.int64)
    bufmax = np.full((k, k), np.inf)
    eager = m >= _EAGER * k * k
    kept = np.full((k, k), eager)  # the pairs whose candidates have been read
    for i in range(m):  # the arg-max labels, and the minima K of each row's class with it
        best = 0
        v = A[i, 0] - prices[0]
        for c in range(1, k):
            w = A[i, c] - prices[c]
            if w > v:
                v = w
                best = c
        labels[i] = best
        counts[best] += 1
        _row_minima(A, i, best, K, Krow)
        if eager:
            for b in range(k):
                key = A[i, best] - A[i, b]
                if b != best and key < bufmax[best, b]:
                    _offer(bufk, bufr, bufmax, best, b, key, i)
    equal, excess = True, 0
    for c in range(k):
        equal = equal and lower[c] == upper[c]
        excess += max(counts[c] - upper[c], lower[c] - counts[c], 0)
    if equal and excess == 0:
        return labels, 0, _DONE
    status, moves = _augment_candidates(A, labels, counts, lower, upper, prices, gain_tol,
                                        max_moves, K, Krow, bufk, bufr, bufmax, kept)
    if status != _HEAPS_FULL:
        return labels, moves, status
    excess = 0
    for c in range(k):
        excess += max(counts[c] - upper[c], lower[c] - counts[c], 0)
    slack = excess + 16
    while True:
        status, moves = _augment(A, labels, counts, lower, upper, prices, gain_tol, slack,
                                 max_moves, moves)
        if status != _HEAPS_FULL:
            return labels, moves, status
        slack *= 2
