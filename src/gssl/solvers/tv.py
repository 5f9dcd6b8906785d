"""Total-variation and Cheeger-cut classifiers of Bresson & Zhang ("TV-SVM"), binary and multiclass
(outputs on the probability simplex); the paper's RLS (3), Lap-RLS (8), SVM (46)-(48) and Lap-SVM
(53)-(56) are the solvers ``rls``, ``lap_rls``, ``svm`` and ``lapsvm_dual``. The estimators set the
problems up; the iterations and the conventions the paper leaves open are in ``gssl.optim``'s
``tv_admm``, ``cheeger``, ``tv_starts``, ``dual_svm`` and ``tv`` (docs/reproductions/tvsvm_usps.notes.md).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError
from ..optim.kernels import kernel_matrix
from ..optim.cheeger import cheeger_iteration
from ..optim.dual_svm import DualSVMStep
from ..optim.graph_ops import gradient_operator
from ..optim.linalg import KernelSystem
from ..optim.simplex import project_simplex
from ..optim.tv import TVProx
from ..optim.tv_admm import (HingeLabelStep, HingeSimplexStep, RLSLabelStep, RLSSimplexStep,
                             binary_split_admm, label_targets, normalizer,
                             simplex_admm, tv_penalty)
from ..optim.tv_starts import INITS, label_start, multiclass_from_init
from .base import SemiSupervisedClassifier
from .fit_checks import require_features
from .docstrings import documented
from .params import DEFAULT_KERNEL, Int, StrOptions, kernel_spec, nonnegative, positive
from .rls import MANIFOLD_CONSTRAINTS

_PARAMS = {  # numpydoc type and description of each constructor parameter
    "kernel": ("str or dict", "Kernel spec (:func:`gssl.optim.kernels.validate_kernel`)."),
    "eta": ("float > 0", "Weight eta of the label fit."),
    "lam": ("float > 0", "Weight lambda of the RKHS norm."),
    "gamma": ("float >= 0", "Weight of the graph TV ||Df||_1."),
    "mu": ("float > 0", "Weight of the hinge loss."),
    "r": ("float > 0", "Penalty r of the regression step."),
    "c": ("float > 0", "Step c of the Cheeger iteration: g = f + c sign(f)."),
    "r1": ("float > 0", "ADMM penalty of f = g (multiclass: the only one; the starting penalty and\n"
           "the weight of the balance step, :mod:`gssl.optim.tv_admm`)."),
    "r2": ("float > 0", "ADMM penalty of h = g."),
    "normalize": ("bool", "Sphere step g <- radius g / ||g|| (binary TV: minus the mean too;\n"
                  "multiclass TV: the balance step of :mod:`gssl.optim.tv_admm`)."),
    "radius": ('{"n", "sqrt_n"}', "Sphere radius N (the paper's) or sqrt(N) (entries ~1)."),
    "output": ('{"f", "g"}', "Binary scores from f = K alpha (the paper's) or the split g."),
    "init": ('{"parzen", "eigenmap", "diffusion", "diffusion_fiedler"}',
             "Start g0 (:mod:`gssl.optim.tv_starts`): K[:, lab] y, Laplacian eigenmap, labels diffused\n"
             "by (I + dt L)^-1, or (multiclass) that and its pairwise Fiedler repair."),
    "diffusion_dt": ("float > 0", "Time step dt of the diffusion starts."),
    "laplacian": ("str or None", "Laplacian kind of L (None: the graph's own)."),
    "max_iter": ("int >= 1", "Outer iterations at most."),
    "tol": ("float > 0", "Stop when the relative change of the main iterate falls below tol\n"
            "(the simplex ADMMs -- multiclass TV-RLS / TV-SVM, lap_rls_simplex, lap_svm_mc --:\n"
            "and the primal residual ||F - G|| / ||G|| too)."),
    "prox_tol": ("float > 0", "Duality-gap tolerance of each ROF prox (``rof_prox``)."),
    "prox_max_iter": ("int >= 1", "Iterations of each ROF prox at most."),
    "qp_tol": ("float > 0", "Projected-gradient residual tolerance of the dual SVM QPs."),
}
_ATTRS = {  # numpydoc type and description of the fitted attributes beside the base class's
    "dual_coef_": ("ndarray (n,) or (n, C)", "Expansion coefficients alpha of f = K alpha."),
    "restarted_": ("bool", "Binary, normalized: the run from the mirrored start -g0 was kept."),
    "mirrored_": ("bool", "Binary: the mirror image (labels kept) had the lower Cheeger ratio."),
    "qp_iterations_": ("int", "Dual QP iterations (TVSVM: multiclass, of the last run)."),
    "D_": ("sparse matrix (edges, n)", "Graph gradient operator (each edge once)."),
    "prox_iterations_": ("int", "ROF prox iterations over the fit."),
    "start_energies_": ("list of float", 'init "diffusion_fiedler": energy of each start\'s result.'),
    "start_chosen_": ("int", 'init "diffusion_fiedler": the start kept (also in fit_metrics_).'),
}
_TV_ATTRS = ("D_", "prox_iterations_", "start_energies_", "start_chosen_")
# the TV family documents every parameter from _PARAMS (gssl.solvers.docstrings)
_tv_documented = documented(_PARAMS, _ATTRS, ref="""References
    ----------
    X. Bresson and R. Zhang, "TV-SVM: Total Variation Support Vector Machine for
    Semi-Supervised Data Classification", 2012""")


_COMMON = {**SemiSupervisedClassifier._parameter_constraints, "kernel": [kernel_spec],
           "lam": [positive], "max_iter": [Int(1)], "tol": [positive]}
_TV_COMMON = {**_COMMON, "normalize": ["boolean"], "radius": [StrOptions({"n", "sqrt_n"})],
              "init": [StrOptions(set(INITS))], "diffusion_dt": [positive],
              "prox_tol": [positive], "prox_max_iter": [Int(1)]}


class _TVBase(SemiSupervisedClassifier):
    """Set-up shared by the TV-family estimators and the copy of a run's results onto them."""

    _pm_one_multiclass = False          # multiclass targets in {-1, +1} instead of {0, 1}
    _param_docs: dict = {}

    def _setup(self, graph, codes, n_classes):
        """K, labeled mask, targets Y (binary: one ±1 column) and the TV prox of the graph."""
        if n_classes == 2 and self.init == "diffusion_fiedler":
            raise ConfigError(f"{type(self).__name__}: init 'diffusion_fiedler' is a multiclass "
                              f"start; for two classes use 'eigenmap' (the oriented Fiedler vector)")
        K = kernel_matrix(require_features(graph, type(self).__name__), None, self.kernel)
        self.D_ = gradient_operator(graph.W)
        self._prox = TVProx(self.D_, self.prox_tol, self.prox_max_iter)
        pm_one = "binary" if n_classes == 2 else self._pm_one_multiclass
        return K, codes >= 0, label_targets(codes, n_classes, pm_one)

    def _multiclass(self, solve, K, W, lab, codes, n_classes):
        run, starts = multiclass_from_init(solve, self.init, K, W, self.D_, lab, codes, n_classes,
                                           self.diffusion_dt)
        if starts is not None:                         # init "diffusion_fiedler"
            self.start_energies_, self.start_chosen_ = starts
            self.fit_metrics_ = {"start_chosen": self.start_chosen_, **{
                f"start_energy_{i}": e for i, e in enumerate(self.start_energies_)}}
        return run

    def _results(self, run):
        """Copy a run's log, coefficients and function onto the estimator; return its scores."""
        log = run.log
        self.history_, self.n_iter_ = log.history, log.n_iter
        self.converged_, self.stop_reason_ = log.converged, log.stop_reason
        self.criteria_ = log.criteria()
        if run.alpha is not None:
            self.dual_coef_ = run.alpha
        if run.F is not None:
            self._F_last = run.F
        if hasattr(self, "_prox"):
            self.prox_iterations_ = self._prox.iterations
            del self._prox
        return run.scores


class _TVSplitBase(_TVBase):
    """TVRLS / TVSVM: binary split ADMM from two starts, multiclass simplex ADMM."""

    def _fit(self, graph, codes, n_classes):
        K, lab, Y = self._setup(graph, codes, n_classes)
        if n_classes == 2:
            y = Y[:, 0]
            g0 = label_start(self.init, K, graph.W, lab, y[lab][:, None], self.diffusion_dt)
            run = binary_split_admm(K, g0[:, 0], self._label_step(y, lab), lam=self.lam,
                                    gamma=self.gamma, r1=self.r1, r2=self.r2, prox=self._prox,
                                    normalize=self.normalize, radius=self.radius, output=self.output,
                                    max_iter=self.max_iter, tol=self.tol, name=type(self).__name__)
            self.restarted_ = run.flipped
            return self._results(run)
        # the sphere step as the balance step, the multiplier against the simplex point, the
        # labeled rows pinned to their labels (gssl.optim.tv_admm's module doc)
        norm = normalizer(True, self.radius, codes.size) if self.normalize else None
        pinned = (lab, np.eye(n_classes)[codes[lab]])

        def solve(S):
            steps = []

            def make_step(rho):                       # the f-step at penalty rho
                steps.append(self._simplex_step(K, lab, Y, rho))
                return steps[-1]

            run = simplex_admm(make_step, S, self.r1, max_iter=self.max_iter, tol=self.tol,
                               prox=self._prox, gamma=self.gamma, norm=norm, pinned=pinned)
            if hasattr(steps[0], "svm"):              # the QP iterations of the last run
                self.qp_iterations_ = sum(st.svm.qp_iters for st in steps)
            return run

        return self._results(self._multiclass(solve, K, graph.W, lab, codes, n_classes))


_SPLIT = {**_TV_COMMON, "gamma": [nonnegative], "r1": [positive], "r2": [positive],
          "output": [StrOptions({"f", "g"})]}


@_tv_documented
class TVRLS(_TVSplitBase):
    """TV-based RLS: min eta/2 |y - Jf|^2 + lam/2 |f|_K^2 + gamma ||Df||_1 (eq. (20)).

    Binary: ADMM (21)-(27) with splittings f = g = h, from g0 and -g0 when normalized.
    Multiclass: (106)-(110) with r = r1: balance (sphere) step, TV prox and simplex projection of
    g with the labeled rows pinned, the multiplier updated against the simplex point and the stop
    on relative change and residual (:mod:`gssl.optim.tv_admm`); labels by arg-max of g, the
    paper's rule (111) in ``alternative_labels_["argmax_f"]``.

    %(sections)s

    %(ref)s, section 2.3, eqs. (20)-(27); multiclass section 3.2, eqs. (104)-(111).
    """

    # floors: the defaults reached 90.2 92.2 96.4; one count: 1 label, where the TV ADMM once failed
    __gssl_tags__ = {"name": "tv_rls", "family": "tv_cheeger", "floors": {1: 84},
                     "fast": {"max_iter": 10, "prox_max_iter": 50}}

    _attributes = ("dual_coef_", "restarted_", *_TV_ATTRS)
    _parameter_constraints = {**_SPLIT, "eta": [positive]}

    # defaults: the paper's multiclass setting (lam, gamma, radius sqrt(n)) with the diffusion start
    # (tvsvm_usps.yaml); they reach 90 / 92 / 96 % on scikit-learn's digits at 1 / 5 / 10 labels
    def __init__(self, *, kernel=DEFAULT_KERNEL, eta=1.0, lam=0.01, gamma=2.0, r1=1.0, r2=1.0,
                 normalize=True, radius="sqrt_n", output="f", init="diffusion", diffusion_dt=10.0,
                 max_iter=300, tol=1e-4, prox_tol=1e-4, prox_max_iter=500):
        self.kernel, self.eta, self.lam, self.gamma, self.r1, self.r2 = (kernel, eta, lam, gamma,
                                                                         r1, r2)
        self.normalize, self.radius, self.output = normalize, radius, output
        self.init, self.diffusion_dt, self.max_iter, self.tol = init, diffusion_dt, max_iter, tol
        self.prox_tol, self.prox_max_iter = prox_tol, prox_max_iter

    def _label_step(self, y, lab):
        return RLSLabelStep(y, lab, self.eta, self.r2)

    def _simplex_step(self, K, lab, Y, r):
        system = KernelSystem(K, r + self.eta * lab, self.lam, "TVRLS")   # A = (eta J + r) K + lam
        return RLSSimplexStep(system, Y, lab, eta=self.eta, lam=self.lam, r=r,
                              penalty=tv_penalty(self.D_, self.gamma))


@_tv_documented
class TVSVM(_TVSplitBase):
    """TV-based SVM: min lam/2 |f|_K^2 + mu sum hinge + gamma ||Df||_1 (eq. (72)).

    Binary: ADMM (73)-(80); the h-step's dual (75) has diagonal Q = I/r2 and is solved exactly.
    Multiclass: (139)-(142) with r = r1, the f-step through the dense dual (136)-(138), g as
    TVRLS's (balance step, labeled rows pinned, multiplier against the simplex point).

    %(sections)s

    %(ref)s, section 2.7, eqs. (72)-(80); multiclass section 3.5, eqs. (132)-(143).
    """

    # floors: the defaults reached 90.2 92.2 96.4; one count: 1 label, where the TV ADMM once failed
    __gssl_tags__ = {"name": "tv_svm", "family": "tv_cheeger", "floors": {1: 84},
                     "fast": {"max_iter": 10, "prox_max_iter": 50}}

    _attributes = ("dual_coef_", "restarted_", "qp_iterations_", *_TV_ATTRS)
    _parameter_constraints = {**_SPLIT, "mu": [positive], "qp_tol": [positive]}
    _pm_one_multiclass = True

    # defaults as TVRLS's (the paper's multiclass setting, diffusion start)
    def __init__(self, *, kernel=DEFAULT_KERNEL, lam=0.01, gamma=2.0, mu=1.0, r1=1.0, r2=1.0,
                 normalize=True, radius="sqrt_n", output="f", init="diffusion", diffusion_dt=10.0,
                 max_iter=300, tol=1e-4, prox_tol=1e-4, prox_max_iter=500, qp_tol=1e-8):
        self.kernel, self.lam, self.gamma, self.mu, self.r1, self.r2 = (kernel, lam, gamma, mu,
                                                                        r1, r2)
        self.normalize, self.radius, self.output = normalize, radius, output
        self.init, self.diffusion_dt, self.max_iter, self.tol = init, diffusion_dt, max_iter, tol
        self.prox_tol, self.prox_max_iter, self.qp_tol = prox_tol, prox_max_iter, qp_tol

    def _label_step(self, y, lab):
        return HingeLabelStep(y, lab, self.mu, self.r2)

    def _simplex_step(self, K, lab, Y, r):
        svm = DualSVMStep(KernelSystem(K, r, self.lam, "TVSVM"), lab, Y, r, self.mu, self.qp_tol)
        return HingeSimplexStep(svm, Y, lab, mu=self.mu, r=r, penalty=tv_penalty(self.D_, self.gamma))


class _CheegerBase(_TVBase):
    """Cheeger-cut iteration (``gssl.optim.cheeger``) around a regression step e = S(g)
    (``_regression``, with lam I + r K factored once)."""

    def _fit(self, graph, codes, n_classes):
        K, lab, Y = self._setup(graph, codes, n_classes)
        n = codes.size
        regress = self._regression(KernelSystem(K, self.r, self.lam, type(self).__name__), lab, Y)
        norm = normalizer(self.normalize, self.radius, n)
        Yl = Y[lab] if n_classes == 2 else np.eye(n_classes)[codes[lab]]  # rows kept fixed

        def solve(S):
            return cheeger_iteration(S, lab, Yl, regress, self._prox, c=self.c, norm=norm,
                                     max_iter=self.max_iter, tol=self.tol)

        if n_classes == 2:
            run = solve(label_start(self.init, K, graph.W, lab, Yl, self.diffusion_dt))
        else:
            run = self._multiclass(solve, K, graph.W, lab, codes, n_classes)
        self.mirrored_ = run.flipped
        if hasattr(regress, "qp_iters"):
            self.qp_iterations_ = regress.qp_iters
        return self._results(run)


_CHEEGER = {**_TV_COMMON, "r": [positive], "c": [positive]}


@_tv_documented
class CheegerRLS(_CheegerBase):
    """Cheeger-cut RLS: the balanced cut ||Df||_1 / ||f - median(f)||_1 with an RLS fit of
    the labels, binary (29)-(38), multiclass (114)-(123); regression step
    RLS(g) = K (lam I + r K)^{-1} r g (37)-(38).

    %(sections)s

    %(ref)s, section 2.4, eqs. (28)-(38); multiclass section 3.3, eqs. (112)-(123).
    """

    # floors: the defaults reached 82.6 95.9 94.1; one count, cheeger_svm's other
    __gssl_tags__ = {"name": "cheeger_rls", "family": "tv_cheeger", "floors": {5: 89},
                     "fast": {"max_iter": 5, "prox_max_iter": 50}}

    _attributes = ("mirrored_", *_TV_ATTRS)
    _parameter_constraints = _CHEEGER

    def __init__(self, *, kernel=DEFAULT_KERNEL, lam=1.0, r=1.0, c=1.0, normalize=True,
                 radius="n", init="parzen", diffusion_dt=1.0, max_iter=50, tol=1e-4,
                 prox_tol=1e-4, prox_max_iter=500):
        self.kernel, self.lam, self.r, self.c, self.normalize = kernel, lam, r, c, normalize
        self.radius, self.init, self.diffusion_dt = radius, init, diffusion_dt
        self.max_iter, self.tol, self.prox_tol, self.prox_max_iter = (max_iter, tol, prox_tol,
                                                                      prox_max_iter)

    def _regression(self, system, lab, Y):
        return lambda g: system.solve(self.r * g)[1]                             # (37)-(38)


@_tv_documented
class CheegerSVM(_CheegerBase):
    """Cheeger-cut SVM: the balanced cut with a hinge fit of the labels, binary (84)-(96),
    multiclass (145)-(154). SVM(g) solves (92) through its dual (94) over the labeled nodes:
    Q = Y G_LL Y, linear term 1 - r Y (G g)_L, G = K (lam I + r K)^-1, e = G (r g + J'Y beta).

    %(sections)s

    %(ref)s, section 2.8, eqs. (81)-(96); multiclass section 3.6, eqs. (144)-(154).
    """

    # floors: the defaults reached 82.6 95.9 94.1; one count: it shares cheeger_rls's iteration
    __gssl_tags__ = {"name": "cheeger_svm", "family": "tv_cheeger", "floors": {1: 76},
                     "summary": "binary and multiclass",
                     "fast": {"max_iter": 5, "prox_max_iter": 50}}

    _attributes = ("mirrored_", "qp_iterations_", *_TV_ATTRS)
    _parameter_constraints = {**_CHEEGER, "mu": [positive], "qp_tol": [positive]}
    _pm_one_multiclass = True

    def __init__(self, *, kernel=DEFAULT_KERNEL, lam=1.0, r=1.0, c=1.0, mu=1.0, normalize=True,
                 radius="n", init="parzen", diffusion_dt=1.0, max_iter=50, tol=1e-4,
                 prox_tol=1e-4, prox_max_iter=500, qp_tol=1e-8):
        self.kernel, self.lam, self.r, self.c, self.mu, self.qp_tol = kernel, lam, r, c, mu, qp_tol
        self.normalize, self.radius, self.init, self.diffusion_dt = (normalize, radius, init,
                                                                     diffusion_dt)
        self.max_iter, self.tol, self.prox_tol, self.prox_max_iter = (max_iter, tol, prox_tol,
                                                                      prox_max_iter)

    def _regression(self, system, lab, Y):
        return DualSVMStep(system, lab, Y, self.r, self.mu, self.qp_tol)


class _LapSimplexBase(_TVBase):
    """Laplacian-regularized ADMMs with the simplex constraint (two classes are two columns on
    the simplex): A = lam I + r K + gamma L K (+ eta J K), start P_simplex(K[:, lab] Y_lab)."""

    _parameter_constraints = {**_COMMON, "gamma": [nonnegative], "r": [positive],
                              "laplacian": MANIFOLD_CONSTRAINTS["laplacian"]}
    _param_docs = {"gamma": ("float >= 0", "Weight of the Laplacian term gamma/2 f'Lf."),
                   "r": ("float > 0", "ADMM penalty of f = g.")}

    def _fit(self, graph, codes, n_classes):
        K = kernel_matrix(require_features(graph, type(self).__name__), None, self.kernel)
        lab = codes >= 0
        Y = label_targets(codes, n_classes, self._pm_one_multiclass)
        L = graph.laplacian(self.laplacian)
        LK = self.gamma * np.asarray(L @ K)
        steps = []

        def make_step(rho):                            # the f-step at penalty rho
            steps.append(self._simplex_step(K, L, LK, lab, Y, rho))
            return steps[-1]

        start = project_simplex(K[:, lab] @ np.eye(n_classes)[codes[lab]])
        run = simplex_admm(make_step, start, self.r, max_iter=self.max_iter, tol=self.tol)
        if hasattr(steps[0], "svm"):
            self.qp_iterations_ = sum(st.svm.qp_iters for st in steps)
        return self._results(run)


@_tv_documented
class LapRLSSimplex(_LapSimplexBase):
    """Multiclass Laplacian RLS with the simplex constraint, (99)-(103): ADMM with f = g,
    alpha = (eta J K + r K + lam I + gamma L K)^{-1} (eta y + r g - l), g = P_simplex(f + l/r).

    %(sections)s

    %(ref)s, section 3.1, eqs. (97)-(103).
    """

    # floors: the defaults reached 76.2 91.6 91.7
    __gssl_tags__ = {"name": "lap_rls_simplex", "family": "tv_cheeger",
                     "floors": {1: 70, 5: 85, 10: 85}, "fast": {"max_iter": 10}}

    _attributes = ("dual_coef_",)
    _parameter_constraints = {**_LapSimplexBase._parameter_constraints, "eta": [positive]}

    def __init__(self, *, kernel=DEFAULT_KERNEL, eta=1.0, lam=1.0, gamma=1.0, r=1.0,
                 laplacian=None, max_iter=100, tol=1e-4):
        self.kernel, self.eta, self.lam, self.gamma, self.r = kernel, eta, lam, gamma, r
        self.laplacian, self.max_iter, self.tol = laplacian, max_iter, tol

    def _simplex_step(self, K, L, LK, lab, Y, r):
        d = r + self.eta * lab                          # A = (gamma L + r + eta J) K + lam I
        system = KernelSystem(K, self.gamma * L + sp.diags(d), self.lam, "LapRLSSimplex",
                              MK=LK + d[:, None] * K)
        return RLSSimplexStep(system, Y, lab, eta=self.eta, lam=self.lam, r=r,
                              penalty=lambda F: 0.5 * self.gamma * np.sum(F * (L @ F)))


@_tv_documented
class LapSVMSimplex(_LapSimplexBase):
    """Multiclass Laplacian SVM with the simplex constraint, (124)-(131): per class the dual
    (126) with G = K (lam I + gamma L K + r K)^{-1} over the labeled nodes, alpha from (127),
    then g = P_simplex(f + l/r) (130) and l += r (f - g).

    %(sections)s

    %(ref)s, section 3.4, eqs. (124)-(131).
    """

    # floors: the defaults reached 77.2 91.0 92.0; one count: 1 label, where the TV ADMM once failed
    __gssl_tags__ = {"name": "lap_svm_simplex", "aliases": ("lap_svm_mc",), "family": "tv_cheeger",
                     "floors": {1: 71}, "fast": {"max_iter": 10}}

    _attributes = ("qp_iterations_",)
    _parameter_constraints = {**_LapSimplexBase._parameter_constraints, "mu": [positive],
                              "qp_tol": [positive]}
    _pm_one_multiclass = True

    def __init__(self, *, kernel=DEFAULT_KERNEL, lam=1.0, gamma=1.0, mu=1.0, r=1.0,
                 laplacian=None, max_iter=100, tol=1e-4, qp_tol=1e-8):
        self.kernel, self.lam, self.gamma, self.mu, self.r = kernel, lam, gamma, mu, r
        self.laplacian, self.max_iter, self.tol, self.qp_tol = laplacian, max_iter, tol, qp_tol

    def _simplex_step(self, K, L, LK, lab, Y, r):
        system = KernelSystem(K, self.gamma * L + r * sp.identity(K.shape[0]), self.lam,
                              "LapSVMSimplex", MK=LK + r * K)   # A = (gamma L + r) K + lam I
        svm = DualSVMStep(system, lab, Y, r, self.mu, self.qp_tol)
        return HingeSimplexStep(svm, Y, lab, mu=self.mu, r=r)
