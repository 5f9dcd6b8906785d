"""Clustering peers of MTV: scikit-learn spectral clustering on the graph and k-means on features.

Both follow the MTV estimator's interface: ``fit(graph, y, n_classes=None, validation=None)`` with
y all -1 (labels, when given, are ignored: these are unsupervised methods), ``labels_`` /
``transduction_`` = cluster ids of the graph's nodes, ``n_iter_``, ``history_``, ``converged_``,
``stop_reason_``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from ..errors import ConfigError, SolverError
from ..graphs import as_graph
from .params import ParamValidation
from .base import require_features


def _n_clusters(owner, own, y, n_classes, n):
    R = n_classes if n_classes is not None else own
    if R is None and y is not None and (np.asarray(y) >= 0).any():
        R = int(np.asarray(y).max()) + 1
    if R is None:
        raise SolverError(f"{owner}: give n_clusters (or n_classes)")
    if not 2 <= int(R) < n:
        raise SolverError(f"{owner}: need 2 <= n_clusters < n nodes, got {R} for n={n}")
    return int(R)


class _GraphClusterer(ParamValidation, ClusterMixin, BaseEstimator):
    def predict(self, X_new=None):
        check_is_fitted(self, "labels_")
        if X_new is not None:
            raise SolverError(f"{type(self).__name__}: call predict() without arguments for the "
                              f"graph's nodes")
        return self.labels_

    def fit_predict(self, graph, y=None, **kwargs):
        return self.fit(graph, y, **kwargs).labels_

    def _set(self, labels, n_iter, converged, reason):
        self.labels_ = np.asarray(labels)
        self.transduction_ = self.labels_
        self.n_iter_ = int(n_iter)
        self.history_ = []
        self.converged_ = bool(converged)
        self.stop_reason_ = reason


def _check_int(owner, name, v, low):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise ConfigError(f"{owner}: {name} must be an integer >= {low}, got {v!r}")


class SpectralGraphClustering(_GraphClusterer):
    """sklearn SpectralClustering(affinity='precomputed') on graph.W (normalized spectral
    embedding; ``assign_labels`` 'kmeans', 'discretize' (Yu-Shi, NCut) or 'cluster_qr')."""

    def __init__(self, n_clusters=None, assign_labels="discretize", eigen_solver=None, n_init=10,
                 random_state=None):
        self.n_clusters = n_clusters
        self.assign_labels = assign_labels
        self.eigen_solver = eigen_solver
        self.n_init = n_init
        self.random_state = random_state

    def check_params(self):
        own = "SpectralGraphClustering"
        if self.n_clusters is not None:
            _check_int(own, "n_clusters", self.n_clusters, 2)
        _check_int(own, "n_init", self.n_init, 1)
        if self.assign_labels not in ("kmeans", "discretize", "cluster_qr"):
            raise ConfigError(f"{own}: assign_labels must be kmeans, discretize or cluster_qr, "
                              f"got {self.assign_labels!r}")
        if self.eigen_solver not in (None, "arpack", "lobpcg", "amg"):
            raise ConfigError(f"{own}: eigen_solver must be null, arpack, lobpcg or amg, got "
                              f"{self.eigen_solver!r}")

    def fit(self, X, y=None, n_classes=None, validation=None, *, graph=None):
        graph = as_graph(X, graph)  # a gssl Graph, a weight matrix W, or features with graph=
        from sklearn.cluster import SpectralClustering

        self._validate_params()
        W = sp.csr_matrix(graph.W, dtype=np.float64)
        R = _n_clusters("SpectralGraphClustering", self.n_clusters, y, n_classes, W.shape[0])
        self.model_ = SpectralClustering(n_clusters=R, affinity="precomputed",
                                         assign_labels=self.assign_labels,
                                         eigen_solver=self.eigen_solver, n_init=self.n_init,
                                         random_state=self.random_state).fit(W)
        self._set(self.model_.labels_, 1, True, "direct solve (spectral embedding)")
        return self


class KMeansClustering(_GraphClusterer):
    """sklearn KMeans on the node features graph.X (Lloyd, k-means++ init, ``n_init`` restarts)."""

    def __init__(self, n_clusters=None, n_init=10, max_iter=300, tol=1e-4, random_state=None):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def check_params(self):
        own = "KMeansClustering"
        if self.n_clusters is not None:
            _check_int(own, "n_clusters", self.n_clusters, 2)
        _check_int(own, "n_init", self.n_init, 1)
        _check_int(own, "max_iter", self.max_iter, 1)
        if isinstance(self.tol, bool) or not isinstance(self.tol, (int, float)) or self.tol < 0:
            raise ConfigError(f"{own}: tol must be a number >= 0, got {self.tol!r}")

    def fit(self, X, y=None, n_classes=None, validation=None, *, graph=None):
        graph = as_graph(X, graph)  # a gssl Graph, a weight matrix W, or features with graph=
        from sklearn.cluster import KMeans

        self._validate_params()
        X = require_features(graph, "KMeansClustering")
        R = _n_clusters("KMeansClustering", self.n_clusters, y, n_classes, X.shape[0])
        self.model_ = KMeans(n_clusters=R, n_init=self.n_init, max_iter=self.max_iter,
                             tol=self.tol, random_state=self.random_state).fit(X)
        it = int(self.model_.n_iter_)
        self._set(self.model_.labels_, it, it < self.max_iter,
                  "tol" if it < self.max_iter else "max_iter")
        self.inertia_ = float(self.model_.inertia_)
        return self
