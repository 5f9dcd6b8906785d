"""Acquisition functions: how useful labeling each candidate node would be (larger = more).

Each is a small estimator-like class: keyword-only parameters, validated by
``_parameter_constraints`` (ConfigError naming the parameter), and three methods the query loop
(:mod:`gssl.active.loop`) calls:

* ``start(W, labeled, *, random_state)``: once, before the first query, with the graph's weight
  matrix and the start set (the covariance acquisitions condition their prior on it);
* ``values(scores, candidates)``: the acquisition value of each candidate node, from the model's
  current class scores (n, C);
* ``update(queried)``: after the queried nodes' labels are known.

``needs_eigenpairs``: the acquisition's prior covariance comes from the eigenpairs of the
normalized Laplacian of the graph the model is fitted on (a graph-learning method's W).
The numerics live in :mod:`gssl.optim.active`.

A user's acquisition subclasses :class:`Acquisition` (``values`` at least) and is named in a
config by import path ``package.module:Class`` or by a ``gssl.acquisitions`` entry point
(:mod:`gssl.active.registry`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from ..optim import active as numerics
from ..solvers.params import Int, ParamValidation, StrOptions, positive


class Acquisition(ParamValidation, BaseEstimator):
    """Base of the acquisition functions: a subclass implements ``values`` and, where it keeps a
    state, ``start`` and ``update``."""

    needs_eigenpairs = False

    def start(self, W, labeled: np.ndarray, *, random_state=None, eigenpairs=None) -> None:
        """Prepare for the first query: ``W`` the graph's weights, ``labeled`` the start set
        (``eigenpairs``: W's normalized-Laplacian pairs where the caller has them; read by the
        acquisitions that need them, ignored by the others)."""
        self._validate_params()
        self._rng = np.random.default_rng(random_state)

    def values(self, scores: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """Acquisition values (m,) of the ``candidates`` (m,) from class scores (n, C)."""
        raise NotImplementedError(f"{type(self).__name__} must implement values(scores, candidates)")

    def update(self, queried: np.ndarray) -> None:
        """The ``queried`` nodes are now labeled."""


class RandomSampling(Acquisition):
    """Random sampling, the baseline: i.i.d. uniform values, so that the ``max`` policy queries
    uniformly among the candidates (seeded by the loop's ``random_state``)."""

    name = "random"

    def values(self, scores, candidates):
        return self._rng.random(len(candidates))


class UncertaintySampling(Acquisition):
    """Uncertainty sampling (Settles 2012): the candidates whose class scores the model is least
    sure of, by ``measure`` (:func:`gssl.optim.active.uncertainty`).

    Parameters
    ----------
    measure : {"smallest_margin", "largest_margin", "least_confidence", "entropy", "norm"}
    """

    name = "uncertainty"
    _parameter_constraints = {"measure": [StrOptions(numerics.UNCERTAINTY_MEASURES)]}

    def __init__(self, *, measure="smallest_margin"):
        self.measure = measure

    def values(self, scores, candidates):
        return numerics.uncertainty(scores[candidates], self.measure)


class _CovarianceAcquisition(Acquisition):
    """An acquisition on the Gaussian prior ``Sigma = V diag(1/(lam + shift)) V^T`` of the
    ``n_eig`` smallest eigenpairs of the normalized Laplacian, conditioned on every labeled node
    with noise variance ``gamma**2`` by rank-one updates (:mod:`gssl.optim.active`).

    Parameters
    ----------
    n_eig : int >= 1, default=50
        Eigenpairs of the low-rank covariance (GraphLearning's examples: 50).
    gamma : float > 0, default=0.1
        Standard deviation of a label's observation noise (GraphLearning's ``gamma2 = 0.1**2``).
    shift : float > 0, default=1e-11
        Added to the eigenvalues before inverting (the first is 0 on a connected graph).
    """

    needs_eigenpairs = True
    _parameter_constraints = {"n_eig": [Int(1)], "gamma": [positive], "shift": [positive]}

    def __init__(self, *, n_eig=50, gamma=0.1, shift=1e-11):
        self.n_eig = n_eig
        self.gamma = gamma
        self.shift = shift

    def start(self, W, labeled, *, random_state=None, eigenpairs=None):
        """``eigenpairs`` (lam (r,), V (n, r)): given, they are used as they are (a test, or a
        loop that computed them); else the n_eig smallest of W's normalized Laplacian."""
        super().start(W, labeled, random_state=random_state)
        if eigenpairs is None:
            from ..optim.mbo import normalized_eigenpairs

            n_eig = min(self.n_eig, W.shape[0] - 1)
            eigenpairs = normalized_eigenpairs(W, n_eig)
        lam, V = eigenpairs
        self._V = np.ascontiguousarray(V, dtype=np.float64)
        self._C = numerics.prior_covariance(lam, self.shift)
        self._gamma2 = float(self.gamma) ** 2
        numerics.condition_on(self._C, self._V, np.asarray(labeled), self._gamma2)

    def update(self, queried):
        numerics.condition_on(self._C, self._V, queried, self._gamma2)


class VOpt(_CovarianceAcquisition):
    """VOpt (Ji & Han 2012): the reduction of the total posterior variance a label would bring."""

    name = "vopt"

    def values(self, scores, candidates):
        return numerics.vopt_values(self._C, self._V, candidates, self._gamma2)


class SigmaOpt(_CovarianceAcquisition):
    """Sigma-optimality (Ma, Garnett & Schneider 2013): the reduction of the sum of the posterior
    covariance's entries."""

    name = "sigma_opt"

    def start(self, W, labeled, *, random_state=None, eigenpairs=None):
        super().start(W, labeled, random_state=random_state, eigenpairs=eigenpairs)
        self._V_sum = self._V.sum(axis=0)

    def values(self, scores, candidates):
        return numerics.sigma_opt_values(self._C, self._V, candidates, self._gamma2, self._V_sum)


class ModelChange(_CovarianceAcquisition):
    """Model change (Miller & Bertozzi 2021; Karzand & Nowak 2020): the uncertainty of a node's
    scores (``measure``) times the size of the change its label would make.

    Parameters
    ----------
    n_eig, gamma, shift
        As VOpt.
    measure : str, default="smallest_margin"
        Uncertainty measure (:class:`UncertaintySampling`).
    """

    name = "model_change"
    _power = 1
    _parameter_constraints = {**_CovarianceAcquisition._parameter_constraints,
                              "measure": [StrOptions(numerics.UNCERTAINTY_MEASURES)]}

    def __init__(self, *, n_eig=50, gamma=0.1, shift=1e-11, measure="smallest_margin"):
        super().__init__(n_eig=n_eig, gamma=gamma, shift=shift)
        self.measure = measure

    def values(self, scores, candidates):
        unc = numerics.uncertainty(scores[candidates], self.measure)
        return numerics.model_change_values(self._C, self._V, candidates, self._gamma2, unc,
                                            power=self._power)


class ModelChangeVOpt(ModelChange):
    """Model change + VOpt (Miller & Bertozzi 2021): uncertainty times VOpt's variance reduction."""

    name = "model_change_vopt"
    _power = 2


ACQUISITIONS = {cls.name: cls for cls in (RandomSampling, UncertaintySampling, VOpt, SigmaOpt,
                                          ModelChange, ModelChangeVOpt)}

__all__ = ["ACQUISITIONS", "Acquisition", "ModelChange", "ModelChangeVOpt", "RandomSampling",
           "SigmaOpt", "UncertaintySampling", "VOpt"]
