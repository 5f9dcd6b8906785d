"""Volume MBO ("auction dynamics", its assignment solved as a min-cost flow) and multiclass MBO
on the cached graph W.

The numerics live in :mod:`gssl.optim.mbo`; these classes validate parameters and expose the
estimator interface of the graph-learning solvers (``class_priors``, ``unreachable``: see
:mod:`gssl.solvers.graph_learning`).
"""

from __future__ import annotations

import numpy as np

from ..optim.mbo import class_volumes, multiclass_mbo, volume_mbo
from .class_priors import class_priors_spec, resolve_priors
from .docstrings import documented
from .graph_learner import GraphLearner
from .params import Int, Real, nonnegative, positive


@documented()
class VolumeMBO(GraphLearner):
    """Volume MBO (Jacobs, Merkurjev & Esedoglu 2018): MBO steps whose thresholding is an
    assignment under class-volume bounds, solved exactly as a min-cost flow on the classes.

    From the graph Voronoi cells of the labeled nodes, each step diffuses the class indicators
    (psi = W_s^2 U, W_s = D^-1/2 W D^-1/2) and re-labels the unlabeled nodes by the assignment of
    largest diffused mass whose class sizes lie within [``volume_constraint``,
    2 - ``volume_constraint``] times the sizes ``class_priors`` gives. The paper solves that
    assignment by an auction with eps-scaling; gssl solves it exactly by successive shortest
    paths on the classes (a min-cost flow), warm-started from the last step's class prices
    (:func:`gssl.optim.mbo.volume_assignment`).

    Parameters
    ----------
    class_priors : "uniform", "labeled" or list of float, default="labeled"
        Class fractions giving the target class sizes (required). ``"labeled"`` takes them from
        the labeled nodes. GraphLearning has no default (its ``class_priors`` must be given); its
        examples pass the true fractions of all points, which uses the labels of the scored
        points.
    volume_constraint : float in (0, 1], default=1.0
        Class sizes may range from this to 2 - this times their target (1: exact sizes).
        GraphLearning's default is 0.5 (sizes from 0.5 to 1.5 times their target); pass 0.5 for
        its looser bounds.
    temperature : float >= 0, default=0.1
        Standard deviation of the Gaussian noise added to the diffused values before each
        assignment; the labels of lowest energy over ``max_iter`` steps are kept. 0: no noise,
        stop when the energy falls by a relative ``tol`` or less. (GraphLearning's default too.)
    max_iter : int >= 1, default=100
        Most MBO steps (GraphLearning fixes 100 in its C code).
    tol : float > 0, default=1e-6
        Relative energy decrease at which the noiseless scheme stops (GraphLearning fixes 1e-6).
    random_state : None, int or RandomState, default=None
        Seed of the temperature noise, drawn from a ``numpy.random.Generator`` (a RandomState
        seeds one; None takes fresh entropy and leaves NumPy's global state alone).
    %(unreachable)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        The diffused indicators psi of the returned labels.
    n_iter_ : int
        MBO steps taken.
    converged_, stop_reason_
        With temperature 0, whether the energy settled before ``max_iter``; with noise the
        scheme runs its ``max_iter`` steps ("max_iter", converged).
    fit_metrics_ : dict
        ``unreached_nodes``, ``energy`` (of the returned labels) and ``volume_misfit`` (largest
        gap between a class's fraction and its prior).

    References
    ----------
    Jacobs, Merkurjev & Esedoglu, "Auction dynamics: A volume constrained MBO scheme", Journal of
    Computational Physics 354, 2018, Algorithms 1-3 (the scheme and its volume bounds; their
    auction is replaced here by the min-cost flow). Ahuja, Magnanti & Orlin, Network Flows,
    1993, ch. 9 (successive shortest paths).
    """

    # floors: the defaults reached 90.4 97.3 97.1
    __gssl_tags__ = {"name": "volume_mbo", "family": "graph_learning",
                     "floors": {1: 84, 5: 91, 10: 91},
                     "summary": "auction dynamics: MBO steps whose thresholding is an exact assignment under class-volume bounds; `volume_constraint`, `temperature`"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "class_priors": [class_priors_spec],  # the target sizes: required
                              "volume_constraint": [Real(0, 1, closed="right")],
                              "temperature": [nonnegative],
                              "max_iter": [Int(1)],
                              "tol": [positive],
                              "random_state": ["random_state"]}

    def __init__(self, *, class_priors="labeled", volume_constraint=1.0, temperature=0.1,
                 max_iter=100, tol=1e-6, random_state=None, unreachable="error"):
        self.class_priors = class_priors
        self.volume_constraint = volume_constraint
        self.temperature = temperature
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        priors = resolve_priors(self.class_priors, codes, n_classes)
        labels, psi, info = volume_mbo(graph.W, codes, class_volumes(priors, codes.size),
                                       volume_constraint=self.volume_constraint,
                                       temperature=self.temperature, max_iter=self.max_iter,
                                       tol=self.tol, rng=self.random_state)
        self.n_iter_ = info["iterations"]
        self.converged_ = self.temperature > 0 or self.n_iter_ < self.max_iter
        self.stop_reason_ = "tol" if self.temperature == 0 and self.converged_ else "max_iter"
        if self.temperature == 0:  # with noise the steps are a fixed number: no criterion
            self.criteria_ = {"relative energy decrease": (info["energy_decrease"], self.tol)}
        frac = np.bincount(labels, minlength=n_classes) / labels.size
        self.fit_metrics_["energy"] = info["energy"]
        self.fit_metrics_["volume_misfit"] = float(np.abs(frac - priors).max())
        return psi, labels


@documented()
class MulticlassMBO(GraphLearner):
    """Multiclass MBO (Garcia-Cardona, Merkurjev, Bertozzi, Flenner & Percus 2014): the
    Ginzburg-Landau energy with a fidelity term minimized by MBO steps in the span of the
    normalized Laplacian's lowest eigenvectors.

    Parameters
    ----------
    n_eig : int >= 1, default=50
        Eigenvectors of L_s = I - D^-1/2 W D^-1/2 spanning the diffusion (GraphLearning's
        ``num_eig``, default 50 in its code; its docstring says 300).
    dt : float > 0, default=0.15
        Diffusion time of an MBO step (GraphLearning's default too).
    mu : float > 0, default=50.0
        Fidelity weight at the labeled nodes (GraphLearning's default too).
    n_inner : int >= 1, default=6
        Semi-implicit steps (of length dt / n_inner) per MBO step (GraphLearning's ``Ns``, same
        default).
    n_outer : int >= 1, default=10
        MBO steps (diffusion, then projection onto the simplex's vertices; GraphLearning's ``T``,
        same default).
    class_priors : None, "uniform", "labeled" or list of float, default=None
        Class fractions for the volume-constrained label decision (None: arg-max).
    random_state : None, int or RandomState, default=None
        Seed of the random start (an integer gives GraphLearning's start after
        ``np.random.seed`` of it).
    %(unreachable)s

    Attributes
    ----------
    %(graph_learner_attributes)s
    decision_function_ : ndarray (n, C)
        The last diffused U, before its projection.
    n_iter_ : int
        MBO steps (``n_outer``).
    %(fixed_steps_attributes)s

    References
    ----------
    Garcia-Cardona, Merkurjev, Bertozzi, Flenner & Percus, "Multiclass Data Segmentation Using
    Diffuse Interface Methods on Graphs", IEEE TPAMI 36(8), 2014, section 4 (Algorithm 2).
    """

    # floors: the defaults reached 27.0-40.9 74.5-77.3 85.2-94.3 (random start, 7 seeds)
    __gssl_tags__ = {"name": "multiclass_mbo", "family": "graph_learning",
                     "floors": {1: 18, 5: 65, 10: 78},
                     "summary": "Ginzburg–Landau MBO in the span of `n_eig` normalized-Laplacian eigenvectors"}

    _parameter_constraints = {**GraphLearner._parameter_constraints,
                              "n_eig": [Int(1)],
                              "dt": [positive],
                              "mu": [positive],
                              "n_inner": [Int(1)],
                              "n_outer": [Int(1)],
                              "random_state": ["random_state"]}

    def __init__(self, *, n_eig=50, dt=0.15, mu=50.0, n_inner=6, n_outer=10, class_priors=None,
                 random_state=None, unreachable="error"):
        self.n_eig = n_eig
        self.dt = dt
        self.mu = mu
        self.n_inner = n_inner
        self.n_outer = n_outer
        self.class_priors = class_priors
        self.random_state = random_state
        self.unreachable = unreachable

    def _solve(self, graph, codes, n_classes):
        _, U = multiclass_mbo(graph.W, codes, n_classes, n_eig=min(self.n_eig, codes.size),
                              dt=self.dt, mu=self.mu, n_inner=self.n_inner,
                              n_outer=self.n_outer, random_state=self.random_state)
        self.n_iter_, self.converged_, self.stop_reason_ = self.n_outer, True, "max_iter"
        return U
