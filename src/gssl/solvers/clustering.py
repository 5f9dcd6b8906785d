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

from ..errors import SolverError
from ..graphs import as_graph
from ..optim.seeding import legacy_random_state
from .fit_checks import require_features, warn_not_converged
from .params import Int, ParamValidation, StrOptions, nonnegative


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
    """Shared interface of the clustering peers (the constraints every one of them declares)."""

    _parameter_constraints = {"n_clusters": [Int(2), None],  # None: n_classes from fit
                              "random_state": ["random_state"]}

    def predict(self, X_new=None):
        check_is_fitted(self, "labels_")
        if X_new is not None:
            raise SolverError(f"{type(self).__name__}: call predict() without arguments for the "
                              f"graph's nodes")
        return self.labels_

    def fit_predict(self, X, y=None, **fit_kwargs):
        """Fit, then return the cluster of every graph node (``labels_``); the arguments are
        :meth:`fit`'s."""
        return self.fit(X, y, **fit_kwargs).labels_

    def predict_proba(self, X_new=None):
        """Not available: cluster ids are no class probabilities (and a clustering has no class
        scores); raises SolverError."""
        raise SolverError(f"{type(self).__name__} is a clustering method: its cluster ids are not "
                          f"classes and it has no class probabilities; use predict() (or "
                          f"fit_predict) for the clusters")

    def _set(self, labels, n_iter, converged, reason, criteria=None):
        """The fit's outputs; a stop on the iteration limit warns (``warn_not_converged``)."""
        self.labels_ = np.asarray(labels)
        self.transduction_ = self.labels_
        self.n_iter_ = int(n_iter)
        self.history_ = []
        self.converged_ = bool(converged)
        self.stop_reason_ = reason
        self.criteria_ = criteria or {}
        if not self.converged_:
            warn_not_converged(self)


class SpectralGraphClustering(_GraphClusterer):
    """sklearn SpectralClustering(affinity='precomputed') on graph.W (normalized spectral
    embedding; ``assign_labels`` 'kmeans', 'discretize' (Yu-Shi, NCut) or 'cluster_qr').

    Parameters
    ----------
    n_clusters : int >= 2 or None, default=None
        Number of clusters; None: ``n_classes`` of fit (or the labels' largest + 1).
    assign_labels : {"kmeans", "discretize", "cluster_qr"}, default="discretize"
        How the spectral embedding becomes labels.
    eigen_solver : {"arpack", "lobpcg", "amg"} or None, default=None
        sklearn's eigensolver (None: arpack).
    n_init : int >= 1, default=10
        k-means restarts (``assign_labels="kmeans"``).
    random_state : int, RandomState or None, default=None
        Seed of the eigensolver's start and of k-means.

    Attributes
    ----------
    labels_, transduction_ : ndarray (n,)
        Cluster of every node.
    model_ : sklearn.cluster.SpectralClustering
        The fitted scikit-learn model.
    n_iter_ : int
        1 (direct solve).

    References
    ----------
    Shi & Malik, "Normalized Cuts and Image Segmentation", IEEE TPAMI 22(8), 2000; Yu & Shi,
    "Multiclass Spectral Clustering", ICCV 2003 (``discretize``); von Luxburg, "A Tutorial on
    Spectral Clustering", Statistics and Computing 17, 2007.
    """

    # floors: the defaults reached 80.6 80.7 80.6 (clustering accuracy; labels unused)
    __gssl_tags__ = {"name": "spectral_clustering", "family": "clustering",
                     "floors": {1: 70, 5: 70, 10: 70}}

    _parameter_constraints = {**_GraphClusterer._parameter_constraints,
                              "assign_labels": [StrOptions(("kmeans", "discretize", "cluster_qr"))],
                              "eigen_solver": [StrOptions(("arpack", "lobpcg", "amg")), None],
                              "n_init": [Int(1)]}

    def __init__(self, *, n_clusters=None, assign_labels="discretize", eigen_solver=None, n_init=10,
                 random_state=None):
        self.n_clusters = n_clusters
        self.assign_labels = assign_labels
        self.eigen_solver = eigen_solver
        self.n_init = n_init
        self.random_state = random_state

    def fit(self, X, y=None, n_classes=None, validation=None, *, graph=None):
        graph = as_graph(X, graph)  # a gssl Graph, a weight matrix W, or features with graph=
        from sklearn.cluster import SpectralClustering

        self._validate_params()
        W = sp.csr_matrix(graph.W, dtype=np.float64)
        R = _n_clusters("SpectralGraphClustering", self.n_clusters, y, n_classes, W.shape[0])
        self.model_ = SpectralClustering(n_clusters=R, affinity="precomputed",
                                         assign_labels=self.assign_labels,
                                         eigen_solver=self.eigen_solver, n_init=self.n_init,
                                         random_state=legacy_random_state(self.random_state)).fit(W)
        self._set(self.model_.labels_, 1, True, "direct solve (spectral embedding)")
        return self


class KMeansClustering(_GraphClusterer):
    """sklearn KMeans on the node features graph.X (Lloyd, k-means++ init, ``n_init`` restarts).

    Parameters
    ----------
    n_clusters : int >= 2 or None, default=None
        Number of clusters; None: ``n_classes`` of fit (or the labels' largest + 1).
    n_init : int >= 1, default=10
        Restarts; the one of lowest inertia is kept.
    max_iter : int >= 1, default=300
        Most Lloyd iterations per restart.
    tol : float >= 0, default=1e-4
        sklearn's relative tolerance on the centres' change.
    random_state : int, RandomState or None, default=None
        Seed of the k-means++ initialisations.

    Attributes
    ----------
    labels_, transduction_ : ndarray (n,)
        Cluster of every node.
    model_ : sklearn.cluster.KMeans
        The fitted scikit-learn model.
    inertia_ : float
        Sum of squared distances to the closest centre.
    n_iter_ : int
        Lloyd iterations of the kept restart.

    References
    ----------
    Lloyd, "Least squares quantization in PCM", IEEE Trans. Inf. Theory 28(2), 1982; Arthur &
    Vassilvitskii, "k-means++: The Advantages of Careful Seeding", SODA 2007.
    """

    # floors: the defaults reached 79.4 79.5 79.1 (clustering accuracy; labels unused)
    __gssl_tags__ = {"name": "kmeans", "family": "clustering", "floors": {1: 70, 5: 70, 10: 70},
                     "fast": {"n_init": 2}}

    _parameter_constraints = {**_GraphClusterer._parameter_constraints,
                              "n_init": [Int(1)], "max_iter": [Int(1)], "tol": [nonnegative]}

    def __init__(self, *, n_clusters=None, n_init=10, max_iter=300, tol=1e-4, random_state=None):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y=None, n_classes=None, validation=None, *, graph=None):
        graph = as_graph(X, graph)  # a gssl Graph, a weight matrix W, or features with graph=
        from sklearn.cluster import KMeans

        self._validate_params()
        X = require_features(graph, "KMeansClustering", "pass the features with the graph: "
                             "gssl.build_graph(X, W=W) keeps your W and adds X as graph.X, or fit X "
                             "itself with graph={'k': 10}; on a bare W use spectral_clustering")
        R = _n_clusters("KMeansClustering", self.n_clusters, y, n_classes, X.shape[0])
        self.model_ = KMeans(n_clusters=R, n_init=self.n_init, max_iter=self.max_iter, tol=self.tol,
                             random_state=legacy_random_state(self.random_state)).fit(X)
        it = int(self.model_.n_iter_)
        self._set(self.model_.labels_, it, it < self.max_iter,
                  "tol" if it < self.max_iter else "max_iter",
                  {"relative center shift": (None, self.tol)})  # scikit-learn keeps it
        self.inertia_ = float(self.model_.inertia_)
        return self
