"""Starting points of the TV and Cheeger-cut iterations (Bresson & Zhang leave g0 open).

``label_start`` is g0 before normalization, by ``init``: "parzen" = the Parzen-window spread of
the labels K[:, lab] Yl; "eigenmap" = the semi-supervised Laplacian eigenmap
(``eigenmap_start``); "diffusion" / "diffusion_fiedler" = the labels propagated by one implicit
heat step (I + dt L)^-1 (start (b) of Bresson et al.'s MTV clustering). ``simplex_start`` is the
multiclass start on the simplex. ``best_of_starts`` runs a multiclass iteration from the
diffusion start and from its pairwise Fiedler refinement (``pairwise_fiedler_refine``) and keeps
the lower discrete energy. The normalized problems are non-convex: the start picks the basin.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components

from ..errors import SolverError
from .graph_ops import diffuse, min_conductance_sweep
from .mtv_step import discrete_energy
from .simplex import project_simplex

__all__ = ["INITS", "best_of_starts", "eigenmap_start", "label_start", "multiclass_from_init",
           "pairwise_fiedler_refine", "simplex_start"]

INITS = ("parzen", "eigenmap", "diffusion", "diffusion_fiedler")
_DIFFUSION = ("diffusion", "diffusion_fiedler")


def eigenmap_start(W, lab, Yl, n_vectors=None) -> np.ndarray:
    """Semi-supervised eigenmap (Belkin & Niyogi 2003) used as the starting point g0.

    U = the ``n_vectors`` (default: Yl's columns, at least 2) eigenvectors of the random-walk
    Laplacian I - D^-1 W with the smallest eigenvalues (the constant vector first, then the
    Fiedler vector ...), computed as D^-1/2 times those of the symmetric normalized Laplacian;
    g0 = U A with A the least-squares fit U[lab] A = Yl (exact interpolation with one label per
    class). Binary targets (one ±1 column): g0 is the Fiedler vector oriented and shifted by the
    labels. Deterministic (fixed Lanczos start vector)."""
    W = sp.csr_matrix(W)
    n = W.shape[0]
    Yl = np.asarray(Yl, dtype=np.float64).reshape(int(np.sum(lab)), -1)
    k = max(2, Yl.shape[1]) if n_vectors is None else int(n_vectors)
    d = np.asarray(W.sum(axis=1)).ravel()
    dis = 1.0 / np.sqrt(np.maximum(d, 1e-300))
    Lsym = sp.identity(n, format="csr") - sp.diags(dis) @ W @ sp.diags(dis)
    v0 = np.sqrt(np.maximum(d, 1e-300)) + 1e-3 * np.cos(np.arange(n))
    try:
        vals, vecs = spla.eigsh(Lsym.tocsc(), k=min(k, n - 1), sigma=-1e-3, which="LM", v0=v0)
    except (RuntimeError, spla.ArpackError) as exc:            # pragma: no cover - ARPACK failure
        raise SolverError(f"eigenmap start: eigsh failed ({exc})") from exc
    U = dis[:, None] * vecs[:, np.argsort(vals)]
    A, *_ = np.linalg.lstsq(U[lab], Yl, rcond=None)
    return U @ A


def label_start(init, K, W, lab, Yl, dt) -> np.ndarray:
    """g0 (n, C) before normalization from the labeled targets Yl (l, C), by ``init`` (see the
    module doc; ``dt``: the diffusion time step)."""
    if init == "eigenmap":
        return eigenmap_start(W, lab, Yl)
    if init in _DIFFUSION:
        F = np.zeros((lab.size, Yl.shape[1]))
        F[lab] = Yl
        return diffuse(W, F, dt=dt, max_iter=500)
    return K[:, lab] @ Yl


def simplex_start(init, K, W, lab, Y01, dt) -> np.ndarray:
    """Multiclass start on the simplex: the projection of g0, except for the diffusion starts,
    whose one-hot arg-max is used -- the propagated scores are tiny (one unit of mass per label
    spread over n nodes), so their projection is within ~1e-3 of the uniform point 1/C and the
    sphere step would turn that offset into the whole signal."""
    g0 = label_start(init, K, W, lab, Y01, dt)
    if init in _DIFFUSION:
        return np.eye(Y01.shape[1])[np.argmax(g0, axis=1)]
    return project_simplex(g0)


def best_of_starts(solve, start, W, D, lab, codes, n_classes):
    """``init: diffusion_fiedler``: run ``solve`` (one-hot start (n, C) -> run whose ``scores``
    are the simplex output) from the assignment ``start`` (labels imposed) and from its pairwise
    Fiedler refinement, and keep the final partition with the lower discrete energy (P)
    sum_r Cut(A_r, A_r^c) / min(lambda |A_r|, |A_r^c|), lambda = C - 1 -- the criterion
    Bresson et al.'s MTV uses to choose among its starts; the methods' own normalized
    objectives do not rank partitions by quality. Returns (run, energies, index kept)."""
    first = start.copy()
    first[lab] = codes[lab]
    starts = [first]
    refined = pairwise_fiedler_refine(W, first, lab, codes)
    if np.any(refined != first):
        starts.append(refined)
    best, energies = None, []
    for idx, assign in enumerate(starts):
        run = solve(np.eye(n_classes)[assign])
        energies.append(discrete_energy(D, np.argmax(run.scores, axis=1), n_classes))
        if best is None or energies[-1] < energies[best[0]]:
            best = (idx, run)
    return best[1], energies, best[0]


def multiclass_from_init(solve, init, K, W, D, lab, codes, n_classes, dt):
    """``solve`` (simplex start (n, C) -> run) from the ``init`` start; under
    "diffusion_fiedler" from two starts (``best_of_starts``). Returns (run, None) or
    (run, (start energies, index kept))."""
    S = simplex_start(init, K, W, lab, np.eye(n_classes)[codes[lab]], dt)
    if init != "diffusion_fiedler":
        return solve(S), None
    run, energies, chosen = best_of_starts(solve, np.argmax(S, axis=1), W, D, lab, codes,
                                           n_classes)
    return run, (energies, chosen)


def pairwise_fiedler_refine(W, assign, lab, codes) -> np.ndarray:
    """Refine a multiclass assignment one pair of classes at a time. For each pair (a, b), on
    each connected component of the subgraph of the nodes assigned to a or b: a component
    labeled by one class only goes to that class, one without labels is left as it is, and one
    with labels of both is split at the bottleneck -- the Fiedler vector oriented by its labels
    (``eigenmap_start``, +1 on a's labeled nodes, -1 on b's), cut at the threshold of lowest
    conductance among those that leave a's labeled nodes on one side and b's on the other
    (``min_conductance_sweep``; left as it is when no threshold does). This repairs the union of
    two classes that label propagation split by distance to the two labeled points (a labeled
    point near the boundary). Returns a copy; labels kept."""
    W = sp.csr_matrix(W)
    c = np.asarray(assign).copy()
    c[lab] = codes[lab]
    n_classes = int(codes.max()) + 1
    for a in range(n_classes):
        for b in range(a + 1, n_classes):
            S = np.flatnonzero((c == a) | (c == b))
            n_comp, comp = connected_components(W[S][:, S], directed=False)
            for k in range(n_comp):
                T = S[comp == k]
                has_a, has_b = np.any(codes[T] == a), np.any(codes[T] == b)
                if has_a and has_b:
                    split = _fiedler_split(W[T][:, T], codes[T], a, b) if T.size > 2 else None
                    if split is not None:
                        c[T] = split
                elif has_a or has_b:
                    c[T] = a if has_a else b
    return c


def _fiedler_split(WT, codes, a, b) -> np.ndarray | None:
    """Assignment (a or b per node) of a connected graph holding labels of both (codes -1
    elsewhere) by the sweep cut of its label-oriented Fiedler vector; None when no threshold
    separates a's labeled nodes from b's."""
    labT = codes >= 0
    yl = np.where(codes[labT] == a, 1.0, -1.0)
    order = np.argsort(-eigenmap_start(WT, labT, yl).ravel(), kind="stable")
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    lab_pos = pos[np.flatnonzero(labT)]
    lo, hi = lab_pos[yl > 0].max() + 1, lab_pos[yl < 0].min()
    if lo > hi:
        return None
    out = np.full(order.size, b)
    out[order[:min_conductance_sweep(WT, order, lo, hi)]] = a
    return out
