"""Total-variation and Cheeger-cut classifiers of Bresson & Zhang ("TV-SVM"), binary and multiclass.

Binary (two classes, y = ±1 on labeled nodes, label = sign of the output; +1 = class 1):
  TVRLS       eq. (21)-(27)   tv_rls
  CheegerRLS  eq. (29)-(38)   cheeger_rls
  TVSVM       eq. (73)-(80)   tv_svm        (h-step: diagonal dual QP (75), solved exactly)
  CheegerSVM  eq. (84)-(96)   cheeger_svm   (SVM(g): dense dual QP (94), projected method)
Multiclass (C > 2, outputs on the probability simplex, label = argmax):
  TVRLS       eq. (107)-(111),  CheegerRLS eq. (114)-(123),  TVSVM eq. (139)-(143),
  CheegerSVM  eq. (145)-(154),  LapRLSSimplex eq. (99)-(103) (lap_rls_simplex),
  LapSVMSimplex eq. (124)-(131) (lap_svm_mc).
Binary RLS (3), Lap-RLS (8), SVM (46)-(48) and Lap-SVM (53)-(56) are the existing solvers
``rls``, ``lap_rls`` (gamma_A = lambda/eta, gamma_I = gamma/eta), ``svm`` and ``lapsvm_dual``
(gamma_A = lambda/2, gamma_I = gamma/2).

Conventions the paper leaves open (documented in docs/reproduction.md (TV-SVM section)):
  * graph TV ||Dg|| counts each edge once (``gssl.optim.graph_ops``); the ROF sub-problems are
    solved by ``gssl.optim.rof_prox`` (accelerated Chambolle-Pock with a duality-gap stop);
  * hinge constraints apply to the labeled nodes only (unlabeled nodes have no y_i);
  * the dual matrices use G = K A^{-1} (A = lambda I + r K [+ gamma L K]), the symmetric form that
    the derivation gives (the paper prints A^{-1} K, its transpose);
  * the start g0 (not in the paper): ``init: parzen`` = the Parzen-window spread of the labels
    K[:, lab] y_lab, ``init: eigenmap`` = the semi-supervised Laplacian eigenmap
    (``eigenmap_start``), or ``init: diffusion`` = the labels propagated by (I + dt L)^-1 (the
    start (b) of Bresson et al.'s MTV clustering; multiclass: its one-hot arg-max), or, for the
    multiclass TV and Cheeger iterations, ``init: diffusion_fiedler`` = two runs, from the
    diffusion start and from its pairwise Fiedler refinement, the lower discrete energy kept;
    normalized like the iterates; multipliers start at 0 and follow the standard augmented
    Lagrangian update (the paper writes it for the binary case only). The
    normalized problems are non-convex: the Parzen start (a split by kernel distance to the labeled
    points) lands on some draws in the basin of an unbalanced cut;
  * binary TV methods (normalized): the ADMM runs from g0 and from the mirrored start -g0 and the
    lower final objective is kept (``restarted_`` = the mirrored run won), then the sign of the
    final point with the lower label term; binary Cheeger methods keep the mirror image
    (labels kept) when its Cheeger ratio is lower (``mirrored_``);
  * ``normalize=True`` applies the paper's sphere projection g <- N g / ||g|| (binary TV methods
    also subtract the mean); multiclass scores are the simplex points before that rescaling.
Every iterative method records its objective per outer iteration in ``history_`` and stops when
the relative change of its main iterate falls below ``tol`` (stop_reason "relative change") or
after ``max_iter`` iterations ("max_iter").
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components

from ..errors import ConfigError, SolverError
from ..kernels import kernel_matrix, validate_kernel
from ..optim.graph_ops import (diffuse, gradient_norm_bound, gradient_operator,
                               min_conductance_sweep)
from ..optim.mtv_step import discrete_energy
from ..optim.qp import qp_box_equality, qp_diagonal
from ..optim.simplex import project_simplex
from ..optim.tv import rof_prox
from .base import SemiSupervisedClassifier, check_nonnegative, check_positive, require_features

_DEFAULT_KERNEL = {"kind": "rbf", "sigma": "median"}
_INITS = ("parzen", "eigenmap", "diffusion", "diffusion_fiedler")


def cheeger_energy(D, f) -> np.ndarray | float:
    """Cheeger ratio ||D f||_1 / sum_i |f_i - median(f)| (column-wise for f (n, C))."""
    f = np.asarray(f, dtype=np.float64)
    num = np.abs(D @ f).sum(axis=0)
    den = np.abs(f - np.median(f, axis=0)).sum(axis=0)
    out = num / np.maximum(den, 1e-300)
    return float(out) if f.ndim == 1 else out


def sphere(v, radius, zero_mean=False):
    """The paper's normalization: v <- radius v / ||v|| per column, then optionally v - mean(v)."""
    v = np.asarray(v, dtype=np.float64)
    nrm = np.linalg.norm(v, axis=0)
    v = radius * v / np.maximum(nrm, 1e-300)
    if zero_mean:
        v = v - v.mean(axis=0)
    return v


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


def pairwise_fiedler_refine(W, assign, lab, codes) -> np.ndarray:
    """Refine a multiclass assignment one pair of classes at a time (start of ``init:
    diffusion_fiedler``). For each pair (a, b), on each connected component of the subgraph of
    the nodes assigned to a or b: a component labeled by one class only goes to that class, one
    without labels is left as it is, and one with labels of both is split at the bottleneck --
    the Fiedler vector oriented by its labels (``eigenmap_start``, +1 on a's labeled nodes, -1 on
    b's), cut at the threshold of lowest conductance among those that leave a's labeled nodes on
    one side and b's on the other (``min_conductance_sweep``; left as it is when no threshold
    does). This repairs the union of two classes that label propagation split by distance to the
    two labeled points (a labeled point near the boundary). Returns a copy; labels kept."""
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


class _TVBase(SemiSupervisedClassifier):
    """Shared parameters, checks and set-up (kernel, gradient operator, targets)."""

    _name = "TV"

    def _check_common(self):
        validate_kernel(self.kernel)
        if getattr(self, "radius", "n") not in ("n", "sqrt_n"):
            raise ConfigError(f"{self._name}: radius must be 'n' (the paper's sphere of radius N) "
                              f"or 'sqrt_n' (entries of size ~1, the scale of the ±1 labels), "
                              f"got {self.radius!r}")
        if getattr(self, "output", "f") not in ("f", "g"):
            raise ConfigError(f"{self._name}: output must be 'f' (the RKHS function, as the paper "
                              f"classifies) or 'g' (the TV-regularized split variable), "
                              f"got {self.output!r}")
        check_positive(self._name, lam=self.lam, tol=self.tol, prox_tol=self.prox_tol)
        for name in ("max_iter", "prox_max_iter"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ConfigError(f"{self._name}: {name} must be an integer >= 1, got {v!r}")
        if getattr(self, "init", "parzen") not in _INITS:
            raise ConfigError(f"{self._name}: init must be 'parzen' (g0 = K[:, labeled] y), "
                              f"'eigenmap' (semi-supervised Laplacian eigenmap), 'diffusion' "
                              f"(labels propagated by (I + dt L)^-1) or 'diffusion_fiedler' "
                              f"(multiclass: diffusion and its pairwise Fiedler refinement, "
                              f"lower discrete energy kept), got {self.init!r}")
        check_positive(self._name, diffusion_dt=getattr(self, "diffusion_dt", 1.0))
        if not isinstance(self.normalize, bool):
            raise ConfigError(f"{self._name}: normalize must be true or false, "
                              f"got {self.normalize!r}")

    def _setup(self, graph, codes, n_classes, pm_one_multiclass=False):
        if n_classes == 2 and getattr(self, "init", "parzen") == "diffusion_fiedler":
            raise ConfigError(f"{self._name}: init 'diffusion_fiedler' is a multiclass start; "
                              f"for two classes use 'eigenmap' (the oriented Fiedler vector)")
        X = require_features(graph, self._name)
        t0 = time.perf_counter()
        self.K_ = K = kernel_matrix(X, None, self.kernel)
        self.D_ = D = gradient_operator(graph.W)
        self._W = graph.W
        self._normD = gradient_norm_bound(D)
        lab = codes >= 0
        n = codes.size
        if n_classes == 2:
            Y = np.zeros((n, 1))
            Y[lab, 0] = np.where(codes[lab] == 1, 1.0, -1.0)
        else:
            Y = np.zeros((n, n_classes))
            Y[lab] = (codes[lab, None] == np.arange(n_classes)).astype(float)
            if pm_one_multiclass:
                Y[lab] = 2.0 * Y[lab] - 1.0
        self._setup_seconds = time.perf_counter() - t0
        return K, D, lab, Y

    _pm_one_multiclass = False  # multiclass targets in {-1, +1} instead of {0, 1}

    def _fit(self, graph, codes, n_classes):
        """Binary or multiclass iteration (TV-RLS, TV-SVM; the other methods override this)."""
        K, D, lab, Y = self._setup(graph, codes, n_classes,
                                   pm_one_multiclass=self._pm_one_multiclass)
        self._start()
        if n_classes == 2:
            out = self._binary(K, D, lab, Y[:, 0])
        else:
            out = self._solve_multi(lambda: self._multi(K, D, lab, Y), K, D, lab, Y)
        self._finish()
        return out

    def _solve_multi(self, solve, K, D, lab, Y):
        """The multiclass run ``solve()`` (returns the (n, C) simplex output), from two starts
        under ``init: diffusion_fiedler`` (``_best_of_starts``)."""
        if getattr(self, "init", "parzen") == "diffusion_fiedler":
            return self._best_of_starts(solve, K, D, lab, Y)
        return solve()

    def _best_of_starts(self, solve, K, D, lab, Y):
        """``init: diffusion_fiedler``: run the multiclass iteration from the one-hot diffusion
        start and from its pairwise Fiedler refinement (``pairwise_fiedler_refine``) and keep the
        final partition with the lower discrete energy (P) sum_r Cut(A_r, A_r^c) /
        min(lambda |A_r|, |A_r^c|), lambda = C - 1 -- the criterion Bresson et al.'s MTV uses to
        choose among its starts; the method's own normalized objective does not rank the
        partitions by quality (docs/reproduction.md). ``start_energies_`` holds the energies,
        ``start_chosen_`` the index of the kept run (0 = diffusion); both go to the run's metrics
        (``fit_metrics_``)."""
        n_classes = Y.shape[1]
        Y01 = (Y[lab] > 0).astype(float)
        codes = np.full(lab.size, -1)
        codes[lab] = np.argmax(Y01, axis=1)
        first = np.argmax(self._simplex_start(K, lab, Y01), axis=1)
        first[lab] = codes[lab]
        starts = [first]
        refined = pairwise_fiedler_refine(self._W, first, lab, codes)
        if np.any(refined != first):
            starts.append(refined)
        best, prox_total, self.start_energies_ = None, 0, []
        for idx, start in enumerate(starts):
            self._start()
            self._start_override = np.eye(n_classes)[start]
            out = solve()
            prox_total += self._prox_iters
            energy = discrete_energy(D, np.argmax(out, axis=1), n_classes)
            self.start_energies_.append(energy)
            if best is None or energy < best[0]:
                best = (energy, idx, out, self.history_, self.n_iter_, self.converged_,
                        self.stop_reason_, getattr(self, "dual_coef_", None),
                        getattr(self, "_F_last", None))
        self._start_override = None
        (_, self.start_chosen_, out, self.history_, self.n_iter_, self.converged_,
         self.stop_reason_, self.dual_coef_, self._F_last) = best
        if self.dual_coef_ is None:
            del self.dual_coef_
        self._prox_iters = prox_total
        self.fit_metrics_ = {"start_chosen": self.start_chosen_,
                             **{f"start_energy_{i}": e for i, e in enumerate(self.start_energies_)}}
        return out

    def _g0(self, K, lab, Yl):
        """Starting point before normalization: Parzen spread of the labels K[:, lab] Yl, the
        semi-supervised eigenmap of the graph (``init: eigenmap``), or the labels propagated by one
        implicit heat step (I + dt L)^-1 (``init: diffusion``, the start (b) of Bresson et al.'s
        MTV clustering, dt = ``diffusion_dt``)."""
        init = getattr(self, "init", "parzen")
        if init == "eigenmap":
            return eigenmap_start(self._W, lab, Yl)
        if init in ("diffusion", "diffusion_fiedler"):
            F = np.zeros((lab.size, Yl.shape[1]))
            F[lab] = Yl
            return diffuse(self._W, F, dt=self.diffusion_dt, max_iter=500)
        return K[:, lab] @ Yl

    def _simplex_start(self, K, lab, Y01):
        """Multiclass start on the simplex: the projection of g0, except for ``init: diffusion``,
        whose one-hot arg-max is used -- the propagated scores are tiny (one unit of mass per
        label spread over n nodes), so their projection is within ~1e-3 of the uniform point 1/C
        and the sphere step would turn that offset into the whole signal."""
        if getattr(self, "_start_override", None) is not None:       # _best_of_starts
            return self._start_override.copy()
        g0 = self._g0(K, lab, Y01)
        if getattr(self, "init", "parzen") in ("diffusion", "diffusion_fiedler"):
            return np.eye(Y01.shape[1])[np.argmax(g0, axis=1)]
        return project_simplex(g0)

    def _rad(self, n):
        return float(n) if getattr(self, "radius", "n") == "n" else float(np.sqrt(n))

    def _prox(self, z, gamma, r, p0=None):
        g, info = rof_prox(self.D_, z, gamma, r, tol=self.prox_tol, max_iter=self.prox_max_iter,
                           p0=p0, norm_D=self._normD)
        self._prox_iters += info["iterations"]
        return g, info["p"]

    def _start(self):
        self._prox_iters = 0
        self.history_ = []
        self.converged_, self.stop_reason_ = False, "max_iter"

    def _record(self, it, objective, change, **extra):
        self.history_.append({"iteration": it, "objective": float(objective),
                              "relative_change": float(change), **extra})
        self.n_iter_ = it
        if change < self.tol:
            self.converged_, self.stop_reason_ = True, "relative change"
            return True
        return False

    def _binary_result(self, run, g0, lab, yl, data_term):
        """Run the binary ADMM from g0 and, for the normalized (non-convex, sign-symmetric)
        problem, again from the mirrored start -g0; keep the run with the lower objective (the
        iteration keeps the orientation of its start, and with one label per class both labeled
        nodes can lie in one cluster, so the start's orientation can be wrong -- the wrong one
        ends with the labeled nodes carved out as islands or on the wrong side, at a higher
        objective). Then keep the sign of the final point with the lower label term
        (``_orientation``). Returns the (n, 2) scores."""
        self.restarted_ = False
        res = run(g0)
        if self.normalize:
            first = (self.history_, self.n_iter_, self.converged_, self.stop_reason_)
            self.history_, self.converged_, self.stop_reason_ = [], False, "max_iter"
            res2 = run(-g0)
            if res2["objective"] < res["objective"]:
                res, self.restarted_ = res2, True
            else:
                self.history_, self.n_iter_, self.converged_, self.stop_reason_ = first
        sgn = _orientation(data_term, res["f"][lab])
        self.dual_coef_ = sgn * res["alpha"]
        out = sgn * (res["f"] if self.output == "f" else res["g"])
        return np.column_stack([-out, out])

    def _split_step(self, f, h, l1, l2, p, norm):
        """The g-step of the binary TV ADMMs (TV-RLS (25)-(27), TV-SVM (77)-(80)):
        g = norm(prox of gamma TV at (r1 f + l1 + r2 h + l2) / (r1 + r2)), then the multiplier
        updates l1 += r1 (f - g), l2 += r2 (h - g) in place. Returns (g, prox dual)."""
        r1, r2 = self.r1, self.r2
        z = (r1 * f + l1 + r2 * h + l2) / (r1 + r2)
        gbar, p = self._prox(z, self.gamma, r1 + r2, p)
        g = norm(gbar)
        l1 += r1 * (f - g)
        l2 += r2 * (h - g)
        return g, p

    def _record_split(self, it, obj, g_new, g_old, f):
        """Record one binary ADMM iteration (relative change of g, constraint |f - g| / n)."""
        return self._record(it, obj, _rel_change(g_new, g_old),
                            constraint=float(np.linalg.norm(f - g_new) / f.size))

    def _finish(self):
        self.prox_iterations_ = self._prox_iters
        del self.K_
        self.__dict__.pop("_W", None)


def _rel_change(new, old):
    return float(np.linalg.norm(new - old) / max(np.linalg.norm(old), 1e-300))


def _orientation(data_term, f_lab) -> float:
    """+1 or -1: the sign of the binary solution with the lower objective.

    The normalized binary problems are symmetric under (f, g, h, alpha) -> -(f, g, h, alpha)
    (sphere and zero mean are, the RKHS norm and the TV are even); only the label term is not.
    The ADMM keeps the orientation of its start, so the final point and its mirror image are both
    stationary and we keep the one whose label term (hence objective) is lower -- this matters
    when a start put a labeled point on the wrong side of the cut."""
    return -1.0 if data_term(-f_lab) < data_term(f_lab) else 1.0


def _chol(A, name):
    try:
        return sla.cho_factor(A, check_finite=False)
    except (sla.LinAlgError, ValueError) as exc:
        raise SolverError(f"{name}: lambda I + r K is not positive definite ({exc}); "
                          f"increase lam") from exc


# ---------------------------------------------------------------------------------------------
class TVRLS(_TVBase):
    """TV-based RLS. Binary: ADMM (21)-(27) with splittings f = g = h (r1, r2). Multiclass:
    (107)-(110) with r = r1, simplex projection and sphere normalization of g."""

    _name = "TVRLS"

    # defaults: the paper's multiclass setting (lam, gamma, radius sqrt(n)) with the diffusion start
    # (tvsvm_usps.yaml); they reach 90 / 92 / 96 % on scikit-learn's digits at 1 / 5 / 10 labels
    def __init__(self, kernel=_DEFAULT_KERNEL, eta=1.0, lam=0.01, gamma=2.0,  # noqa: B006
                 r1=1.0, r2=1.0, normalize=True, radius="sqrt_n", output="f", init="diffusion",
                 diffusion_dt=10.0,
                 max_iter=100, tol=1e-4, prox_tol=1e-4, prox_max_iter=500):
        self.kernel, self.eta, self.lam, self.gamma, self.init = kernel, eta, lam, gamma, init
        self.diffusion_dt = diffusion_dt
        self.r1, self.r2, self.normalize, self.output = r1, r2, normalize, output
        self.radius = radius
        self.max_iter, self.tol, self.prox_tol, self.prox_max_iter = (max_iter, tol, prox_tol,
                                                                      prox_max_iter)

    def check_params(self):
        self._check_common()
        check_positive(self._name, eta=self.eta, r1=self.r1, r2=self.r2)
        check_nonnegative(self._name, gamma=self.gamma)

    def _binary(self, K, D, lab, y):
        n = y.size
        eta, lam, gam, r1, r2 = self.eta, self.lam, self.gamma, self.r1, self.r2
        cho = _chol(lam * np.eye(n) + r1 * K, self._name)
        norm = ((lambda v: sphere(v, self._rad(n), zero_mean=True)) if self.normalize
                else (lambda v: v))
        Jd = lab.astype(float)

        def run(g):
            l1, l2, p = np.zeros(n), np.zeros(n), None
            for it in range(1, self.max_iter + 1):
                alpha = sla.cho_solve(cho, r1 * g - l1, check_finite=False)      # (21)
                f = K @ alpha                                                    # (22)
                h = (eta * y + r2 * g - l2) / (eta * Jd + r2)                     # (23)
                g_new, p = self._split_step(f, h, l1, l2, p, norm)               # (25)-(27)
                obj = (0.5 * eta * np.sum((y[lab] - f[lab]) ** 2) + 0.5 * lam * alpha @ f
                       + gam * np.abs(D @ f).sum())
                g, stop = g_new, self._record_split(it, obj, g_new, g, f)
                if stop:
                    break
            return {"objective": obj, "f": f, "g": g, "alpha": alpha}

        g0 = norm(self._g0(K, lab, y[lab][:, None])[:, 0])
        return self._binary_result(run, g0, lab, y[lab],
                                   lambda v: 0.5 * eta * np.sum((y[lab] - v) ** 2))

    def _multi(self, K, D, lab, Y):
        n, C = Y.shape
        eta, lam, gam, r = self.eta, self.lam, self.gamma, self.r1
        A = eta * np.where(lab[:, None], K, 0.0) + r * K
        A[np.diag_indices(n)] += lam
        lu = sla.lu_factor(A, check_finite=False)
        norm = (lambda v: sphere(v, self._rad(n))) if self.normalize else (lambda v: v)
        Gs = self._simplex_start(K, lab, Y[lab])
        G = norm(Gs)
        Lm, p = np.zeros((n, C)), None
        for it in range(1, self.max_iter + 1):
            alpha = sla.lu_solve(lu, eta * Y + r * G - Lm, check_finite=False)    # (106)
            F = K @ alpha                                                         # (107)
            Ghat, p = self._prox(F + Lm / r, gam, r, p)                           # (108)
            Gs_new = project_simplex(Ghat)                                        # (109)
            G_new = norm(Gs_new)                                                  # (110)
            Lm += r * (F - G_new)
            obj = (0.5 * eta * np.sum((Y[lab] - F[lab]) ** 2) + 0.5 * lam * np.sum(alpha * F)
                   + gam * np.abs(D @ F).sum())
            change = _rel_change(Gs_new, Gs)
            G, Gs = G_new, Gs_new
            if self._record(it, obj, change):
                break
        self.dual_coef_ = alpha
        self._F_last = F
        return Gs


# ---------------------------------------------------------------------------------------------
class _CheegerBase(_TVBase):
    """Cheeger-cut iteration (29)-(36) / (114)-(122) around a regression step e = S(g)."""

    def _cheeger_output(self, K, D, lab, Y, Y_fixed, regress):
        """Binary scores [-f, f], or the multiclass simplex output (from two starts under
        ``init: diffusion_fiedler``); ``Y_fixed``: the targets whose labeled rows are kept."""
        if Y.shape[1] == 1:
            f, _ = self._cheeger(K, D, lab, Y_fixed, regress)
            return np.column_stack([-f[:, 0], f[:, 0]])
        return self._solve_multi(lambda: self._cheeger(K, D, lab, Y_fixed, regress)[1],
                                 K, D, lab, Y)

    def _cheeger(self, K, D, lab, Y, regress):
        n, C = Y.shape
        c = self.c
        multi = C > 1
        self.mirrored_ = False
        Yl = Y[lab]
        S = self._simplex_start(K, lab, Yl) if multi else self._g0(K, lab, Yl)
        S[lab] = Yl
        f = sphere(S, self._rad(n)) if self.normalize else S
        Sh = S
        ps = [None] * C
        for it in range(1, self.max_iter + 1):
            E = np.atleast_1d(cheeger_energy(D, f))
            g = f + c * np.sign(f)                                       # (29)/(114)
            e = regress(g)                                               # (30)/(115)
            h = np.empty_like(e)
            for k in range(C):                                           # (31)/(116)
                h[:, k], ps[k] = self._prox(e[:, k], 1.0, max(E[k], 1e-12) / c, ps[k])
            t = h - np.median(h, axis=0)                                 # (32)/(117)
            s = t
            s[lab] = Yl                                                  # (35)/(120)
            if multi:
                s = project_simplex(s)                                   # (121)
            f_new = sphere(s, self._rad(n)) if self.normalize else s                # (36)/(122)
            change = _rel_change(s, Sh)
            Sh, f = s, f_new
            if self._record(it, float(np.sum(cheeger_energy(D, f))), change):
                break
        if multi:
            self._F_last = e
        if not multi:
            # the Cheeger ratio is even and the iteration keeps the orientation of its start; the
            # mirror image with the labeled values kept is feasible too: keep the lower energy
            mirror = -f
            mirror[lab] = f[lab]
            if cheeger_energy(D, mirror) < cheeger_energy(D, f):
                f, Sh = mirror, -Sh
                Sh[lab] = Yl
                self.mirrored_ = True
        return f, Sh


class CheegerRLS(_CheegerBase):
    """Cheeger-cut RLS (29)-(38); multiclass (114)-(123). RLS(g) = K (lam I + r K)^{-1} r g."""

    _name = "CheegerRLS"

    def __init__(self, kernel=_DEFAULT_KERNEL, lam=1.0, r=1.0, c=1.0,  # noqa: B006
                 normalize=True, radius="n", init="parzen", diffusion_dt=1.0, max_iter=50, tol=1e-4,
                 prox_tol=1e-4, prox_max_iter=500):
        self.kernel, self.lam, self.r, self.c, self.normalize = kernel, lam, r, c, normalize
        self.init, self.diffusion_dt = init, diffusion_dt
        self.radius = radius
        self.max_iter, self.tol, self.prox_tol, self.prox_max_iter = (max_iter, tol, prox_tol,
                                                                      prox_max_iter)

    def check_params(self):
        self._check_common()
        check_positive(self._name, r=self.r, c=self.c)

    def _fit(self, graph, codes, n_classes):
        K, D, lab, Y = self._setup(graph, codes, n_classes)
        self._start()
        n = K.shape[0]
        cho = _chol(self.lam * np.eye(n) + self.r * K, self._name)

        def regress(g):                                                  # (37)-(38)
            return K @ sla.cho_solve(cho, self.r * g, check_finite=False)

        out = self._cheeger_output(K, D, lab, Y, Y, regress)
        self._finish()
        return out


class CheegerSVM(_CheegerBase):
    """Cheeger-cut SVM (84)-(96); multiclass (145)-(154). SVM(g) solves (92) through its dual
    (94) over the labeled nodes: Q = Y G_LL Y, linear term 1 - r Y (G g)_L, G = K (lam I + r K)^-1,
    then e = G (r g + J'Y beta)."""

    _name = "CheegerSVM"

    def __init__(self, kernel=_DEFAULT_KERNEL, lam=1.0, r=1.0, c=1.0, mu=1.0,  # noqa: B006
                 normalize=True, radius="n", init="parzen", diffusion_dt=1.0, max_iter=50, tol=1e-4,
                 prox_tol=1e-4, prox_max_iter=500, qp_tol=1e-8):
        self.kernel, self.lam, self.r, self.c, self.mu = kernel, lam, r, c, mu
        self.init, self.diffusion_dt = init, diffusion_dt
        self.normalize, self.radius = normalize, radius
        self.max_iter, self.tol, self.prox_tol, self.prox_max_iter = (max_iter, tol, prox_tol,
                                                                      prox_max_iter)
        self.qp_tol = qp_tol

    def check_params(self):
        self._check_common()
        check_positive(self._name, r=self.r, c=self.c, mu=self.mu, qp_tol=self.qp_tol)

    def _fit(self, graph, codes, n_classes):
        K, D, lab, Y = self._setup(graph, codes, n_classes, pm_one_multiclass=True)
        self._start()
        n = K.shape[0]
        cho = _chol(self.lam * np.eye(n) + self.r * K, self._name)
        svm = _DualSVMStep(K, lambda B: sla.cho_solve(cho, B, check_finite=False), lab,
                           Y, self.r, self.mu, self.qp_tol)
        Y01 = Y.copy()
        if n_classes > 2:                      # the fixed labeled rows are one-hot on the simplex
            Y01[lab] = (Y[lab] + 1.0) / 2.0
        out = self._cheeger_output(K, D, lab, Y, Y01, svm)
        self.qp_iterations_ = svm.qp_iters
        self._finish()
        return out


class _DualSVMStep:
    """f = G (r e + J'Y beta) with beta the dual (94)/(126)/(136) of
    min lam/2 |f|_K^2 + mu sum xi + r/2 |f - e|^2 (+ gamma/2 f'Lf via A), hinge on labeled nodes.
    ``solve(B)`` applies A^{-1}; G = K A^{-1}. Columns of e are independent one-vs-all problems."""

    def __init__(self, K, solve, lab, Y, r, mu, qp_tol):
        self.K, self.solve, self.r, self.mu, self.qp_tol = K, solve, r, mu, qp_tol
        self.lab = np.flatnonzero(lab)
        n = K.shape[0]
        E = np.zeros((n, self.lab.size))
        E[self.lab, np.arange(self.lab.size)] = 1.0
        self.GJ = K @ solve(E)                                  # G J'  (n, l)
        GLL = self.GJ[self.lab]
        self.GLL = 0.5 * (GLL + GLL.T)
        self.Yl = Y[self.lab]
        self.betas = [None] * Y.shape[1]
        self.qp_iters = 0

    def __call__(self, e):
        r = self.r
        Ge = self.K @ self.solve(e)
        out = np.empty_like(e)
        for k in range(e.shape[1]):
            y = self.Yl[:, k]
            Q = y[:, None] * self.GLL * y[None, :]
            a = 1.0 - r * y * Ge[self.lab, k]
            beta, info = qp_box_equality(Q, a, y, 0.0, self.mu, tol=self.qp_tol,
                                         beta0=self.betas[k])
            self.betas[k] = beta
            self.qp_iters += info["iterations"]
            out[:, k] = r * Ge[:, k] + self.GJ @ (y * beta)
        return out


# ---------------------------------------------------------------------------------------------
class TVSVM(_TVBase):
    """TV-based SVM. Binary: ADMM (73)-(80), the h-step's dual (75) has diagonal Q = I/r2 and is
    solved exactly (``qp_diagonal``). Multiclass: (139)-(142) with r = r1, f-step through the dense
    dual (136)-(138)."""

    _name = "TVSVM"

    # defaults as TVRLS's (the paper's multiclass setting, diffusion start)
    def __init__(self, kernel=_DEFAULT_KERNEL, lam=0.01, gamma=2.0, mu=1.0,  # noqa: B006
                 r1=1.0, r2=1.0, normalize=True, radius="sqrt_n", output="f", init="diffusion",
                 diffusion_dt=10.0,
                 max_iter=100, tol=1e-4, prox_tol=1e-4, prox_max_iter=500, qp_tol=1e-8):
        self.kernel, self.lam, self.gamma, self.mu, self.init = kernel, lam, gamma, mu, init
        self.diffusion_dt = diffusion_dt
        self.r1, self.r2, self.normalize, self.output = r1, r2, normalize, output
        self.radius = radius
        self.max_iter, self.tol, self.prox_tol, self.prox_max_iter = (max_iter, tol, prox_tol,
                                                                      prox_max_iter)
        self.qp_tol = qp_tol

    def check_params(self):
        self._check_common()
        check_positive(self._name, mu=self.mu, r1=self.r1, r2=self.r2, qp_tol=self.qp_tol)
        check_nonnegative(self._name, gamma=self.gamma)

    _pm_one_multiclass = True

    def _binary(self, K, D, lab, y):
        n = y.size
        lam, gam, r1, r2, mu = self.lam, self.gamma, self.r1, self.r2, self.mu
        cho = _chol(lam * np.eye(n) + r1 * K, self._name)
        norm = ((lambda v: sphere(v, self._rad(n), zero_mean=True)) if self.normalize
                else (lambda v: v))
        yl = y[lab]

        def run(g):
            l1, l2, p = np.zeros(n), np.zeros(n), None
            for it in range(1, self.max_iter + 1):
                alpha = sla.cho_solve(cho, r1 * g - l1, check_finite=False)      # (73)
                f = K @ alpha                                                    # (74)
                e = g - l2 / r2
                beta, _ = qp_diagonal(1.0 / r2, 1.0 - yl * e[lab], yl, 0.0, mu)  # (75)
                h = e.copy()
                h[lab] += yl * beta / r2                                         # (76)
                g_new, p = self._split_step(f, h, l1, l2, p, norm)               # (77)-(80)
                obj = (0.5 * lam * alpha @ f + mu * np.maximum(0.0, 1.0 - yl * h[lab]).sum()
                       + gam * np.abs(D @ f).sum())
                g, stop = g_new, self._record_split(it, obj, g_new, g, f)
                if stop:
                    break
            return {"objective": obj, "f": f, "g": g, "alpha": alpha}

        g0 = norm(self._g0(K, lab, y[lab][:, None])[:, 0])
        return self._binary_result(run, g0, lab, yl,
                                   lambda v: mu * np.maximum(0.0, 1.0 - yl * v).sum())

    def _multi(self, K, D, lab, Y):
        n, C = Y.shape
        lam, gam, r = self.lam, self.gamma, self.r1
        cho = _chol(lam * np.eye(n) + r * K, self._name)
        svm = _DualSVMStep(K, lambda B: sla.cho_solve(cho, B, check_finite=False), lab, Y, r,
                           self.mu, self.qp_tol)
        return _simplex_admm(self, K, D, lab, Y, svm, r, tv_gamma=gam)


def _simplex_admm(est, K, D, lab, Y, fstep, r, tv_gamma=None):
    """f^k = fstep(g^k - l^k/r); g = [TV prox] -> simplex -> [sphere]; l += r (f - g)."""
    n, C = Y.shape
    Y01 = (Y[lab] > 0).astype(float)
    Gs = (est._simplex_start(K, lab, Y01) if hasattr(est, "_W")
          else project_simplex(K[:, lab] @ Y01))
    norm = (lambda v: sphere(v, est._rad(n))) if est.normalize else (lambda v: v)
    G = norm(Gs)
    Lm, p = np.zeros((n, C)), None
    for it in range(1, est.max_iter + 1):
        F = fstep(G - Lm / r)                                                    # (129)/(139)
        Z = F + Lm / r
        if tv_gamma is not None:
            Z, p = est._prox(Z, tv_gamma, r, p)                                 # (140)
        Gs_new = project_simplex(Z)                                              # (130)/(141)
        G_new = norm(Gs_new) if tv_gamma is not None else Gs_new                 # (142)
        Lm += r * (F - G_new)
        hinge = np.maximum(0.0, 1.0 - Y[lab] * F[lab]).sum()
        obj = est.mu * hinge + (tv_gamma or 0.0) * np.abs(D @ F).sum()
        change = _rel_change(Gs_new, Gs)
        G, Gs = G_new, Gs_new
        if est._record(it, obj, change):
            break
    est.qp_iterations_ = fstep.qp_iters
    est._F_last = F
    return Gs


# ---------------------------------------------------------------------------------------------
class LapRLSSimplex(_TVBase):
    """Multiclass Laplacian RLS with the simplex constraint, (99)-(103): ADMM with f = g,
    alpha = (eta J K + r K + lam I + gamma L K)^{-1} (eta y + r g - l), g = P_simplex(f + l/r)."""

    _name = "LapRLSSimplex"

    def __init__(self, kernel=_DEFAULT_KERNEL, eta=1.0, lam=1.0, gamma=1.0, r=1.0,  # noqa: B006
                 laplacian=None, max_iter=100, tol=1e-4):
        self.kernel, self.eta, self.lam, self.gamma, self.r = kernel, eta, lam, gamma, r
        self.laplacian, self.max_iter, self.tol = laplacian, max_iter, tol

    def check_params(self):
        validate_kernel(self.kernel)
        check_positive(self._name, eta=self.eta, lam=self.lam, r=self.r, tol=self.tol)
        check_nonnegative(self._name, gamma=self.gamma)
        v = self.max_iter
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ConfigError(f"{self._name}: max_iter must be an integer >= 1, got {v!r}")

    def _fit(self, graph, codes, n_classes):
        X = require_features(graph, self._name)
        K = kernel_matrix(X, None, self.kernel)
        lab = codes >= 0
        n, C = codes.size, n_classes
        Y = np.zeros((n, C))
        Y[lab] = (codes[lab, None] == np.arange(C)).astype(float)
        L = graph.laplacian(self.laplacian)
        A = self.gamma * np.asarray(L @ K) + self.r * K
        A[lab] += self.eta * K[lab]
        A[np.diag_indices(n)] += self.lam
        lu = sla.lu_factor(A, check_finite=False)
        self.history_ = []
        self.converged_, self.stop_reason_ = False, "max_iter"
        G = project_simplex(K[:, lab] @ Y[lab])
        Lm = np.zeros((n, C))
        r = self.r
        for it in range(1, self.max_iter + 1):
            alpha = sla.lu_solve(lu, self.eta * Y + r * G - Lm, check_finite=False)  # (100)
            F = K @ alpha                                                           # (101)
            G_new = project_simplex(F + Lm / r)                                     # (102)
            Lm += r * (F - G_new)
            obj = (0.5 * self.eta * np.sum((Y[lab] - F[lab]) ** 2)
                   + 0.5 * self.lam * np.sum(alpha * F)
                   + 0.5 * self.gamma * np.sum(F * (L @ F)))
            change = _rel_change(G_new, G)
            G = G_new
            self.history_.append({"iteration": it, "objective": float(obj),
                                  "relative_change": change})
            self.n_iter_ = it
            if change < self.tol:
                self.converged_, self.stop_reason_ = True, "relative change"
                break
        self.dual_coef_ = alpha
        self._F_last = F
        return G


class LapSVMSimplex(_TVBase):
    """Multiclass Laplacian SVM with the simplex constraint, (124)-(131): per class the dual
    (126) with G = K (lam I + gamma L K + r K)^{-1} over the labeled nodes, alpha from (127),
    then g = P_simplex(f + l/r) (130) and l += r (f - g)."""

    _name = "LapSVMSimplex"

    def __init__(self, kernel=_DEFAULT_KERNEL, lam=1.0, gamma=1.0, mu=1.0, r=1.0,  # noqa: B006
                 laplacian=None, max_iter=100, tol=1e-4, qp_tol=1e-8):
        self.kernel, self.lam, self.gamma, self.mu, self.r = kernel, lam, gamma, mu, r
        self.laplacian, self.max_iter, self.tol, self.qp_tol = laplacian, max_iter, tol, qp_tol
        self.normalize = False

    def check_params(self):
        validate_kernel(self.kernel)
        check_positive(self._name, lam=self.lam, mu=self.mu, r=self.r, tol=self.tol,
                       qp_tol=self.qp_tol)
        check_nonnegative(self._name, gamma=self.gamma)
        v = self.max_iter
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ConfigError(f"{self._name}: max_iter must be an integer >= 1, got {v!r}")

    def _fit(self, graph, codes, n_classes):
        X = require_features(graph, self._name)
        K = kernel_matrix(X, None, self.kernel)
        lab = codes >= 0
        n, C = codes.size, n_classes
        Y = np.zeros((n, C))
        Y[lab] = 2.0 * (codes[lab, None] == np.arange(C)) - 1.0
        L = graph.laplacian(self.laplacian)
        A = self.gamma * np.asarray(L @ K) + self.r * K
        A[np.diag_indices(n)] += self.lam
        lu = sla.lu_factor(A, check_finite=False)
        svm = _DualSVMStep(K, lambda B: sla.lu_solve(lu, B, check_finite=False), lab, Y,
                           self.r, self.mu, self.qp_tol)
        self.D_ = gradient_operator(graph.W)
        self._prox_iters = 0
        self.history_ = []
        self.converged_, self.stop_reason_ = False, "max_iter"
        return _simplex_admm(self, K, self.D_, lab, Y, svm, self.r, tv_gamma=None)
