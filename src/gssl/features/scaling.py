"""Steps that rescale features: standardize, minmax, normalize (each keeps the number of columns)."""

from __future__ import annotations

import warnings

import scipy.sparse as sp
from sklearn.preprocessing import MinMaxScaler, StandardScaler, normalize

from ..errors import ConfigError
from ..solvers.params import Check, StrOptions, positive
from .step import NO_CHECK, Step

_DENSIFY = ("standardize with_mean=true would densify sparse features; drop with_mean "
            "(sparse input is scaled only) or densify upstream")


class Standardize(Step):
    """Zero mean and unit variance per feature; sparse features are scaled only (centring would
    densify them)."""

    name = "standardize"
    _parameter_constraints = {"with_mean": NO_CHECK, "with_std": NO_CHECK}

    def output_shape(self, n, d, sparse, n_exact=True):
        if sparse and self.params.get("with_mean", False):
            raise ConfigError(_DENSIFY)
        return d, sparse

    def apply(self, X, seed):
        sparse = sp.issparse(X)
        with_mean = self.params.get("with_mean", not sparse)
        if with_mean and sparse:
            raise ConfigError(_DENSIFY)
        return StandardScaler(with_mean=with_mean,
                              with_std=self.params.get("with_std", True)).fit_transform(X)


def _ordered_pair(fr) -> bool:
    return isinstance(fr, (list, tuple)) and len(fr) == 2 and fr[0] < fr[1]


class MinMax(Step):
    """Each feature scaled to ``feature_range``; densifies sparse features, with a UserWarning."""

    name = "minmax"
    _parameter_constraints = {"feature_range": [Check(_ordered_pair, "[low, high] with low < high")]}
    defaults = {"feature_range": (0, 1)}

    def output_shape(self, n, d, sparse, n_exact=True):
        return d, False

    def apply(self, X, seed):
        if sp.issparse(X):
            warnings.warn("minmax densifies sparse features (the shift fills every zero)",
                          UserWarning, stacklevel=3)
            X = X.toarray()
        return MinMaxScaler(feature_range=tuple(self.params.get("feature_range", (0, 1)))).fit_transform(X)


class Normalize(Step):
    """Each point scaled to unit ``norm``, then multiplied by ``scale``."""

    name = "normalize"
    _parameter_constraints = {"norm": [StrOptions(("l1", "l2", "max"))], "scale": [positive]}
    defaults = {"norm": "l2", "scale": 1.0}
    shorthand = "norm"

    def apply(self, X, seed):
        return normalize(X, norm=self.params.get("norm", "l2")) * float(self.params.get("scale", 1.0))
