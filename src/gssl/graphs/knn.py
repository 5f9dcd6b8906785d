"""k-nearest-neighbour search: exact (scikit-learn) or approximate (HNSW through faiss, NN-descent
through pynndescent) with its recall measured against exact search; neighbour lists to CSR.

scikit-learn is imported where a search runs: planning reads this module's names (the schema's
backends) in every ``snakemake`` process, and importing scikit-learn costs about a second there."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError, DatasetError, GraphError


def check_k(k, n_samples: int, what: str = "k") -> int:
    """k must be an int in [1, n_samples - 1]; GraphError says the maximum allowed k."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ConfigError(f"{what} must be a positive integer, got {k!r}")
    if k >= n_samples:
        raise GraphError(f"{what}={k} neighbours requested but the data has only {n_samples} points; "
                         f"the maximum allowed {what} is {n_samples - 1}")
    return int(k)


def knn_distances(X, k: int, algorithm: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices (n, k) of each point's k nearest neighbours, itself excluded.

    Exact search (sklearn NearestNeighbors, Euclidean). Querying with ``X=None`` makes scikit-learn
    drop each point's own index, not merely the first column, so duplicated points still get k
    other points (their duplicates at distance 0 among them).
    """
    if X is None:
        raise GraphError("a kNN graph needs features X; graph-only datasets take kind 'precomputed'")
    if not sp.issparse(X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise DatasetError(f"features must be 2-D (n_samples, n_features), got shape {X.shape}")
    values = X.data if sp.issparse(X) else X
    if not np.all(np.isfinite(values)):
        raise DatasetError("features hold NaN/inf; clean them before building a graph")
    k = check_k(k, X.shape[0])
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=k, algorithm=algorithm).fit(X)
    dist, idx = nn.kneighbors()
    return np.asarray(dist, dtype=np.float64), np.asarray(idx, dtype=np.int64)


def neighbors_to_csr(values: np.ndarray, idx: np.ndarray, n: int | None = None) -> sp.csr_matrix:
    """Directed (n, n) CSR with ``values[i, j]`` at (i, idx[i, j]); explicit zeros are dropped."""
    n_rows, k = idx.shape
    n = n_rows if n is None else n
    indptr = np.arange(0, n_rows * k + 1, k, dtype=np.int64)
    M = sp.csr_matrix((np.asarray(values, dtype=np.float64).ravel(), idx.ravel(), indptr),
                      shape=(n_rows, n))
    M.sum_duplicates()  # also sorts indices
    M.eliminate_zeros()
    return M


BACKENDS = ("exact", "hnsw", "nndescent")
HNSW_M, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH = 32, 200, 128  # faiss' HNSW: links, build and query beam
NND_MIN_NEIGHBORS = 30  # pynndescent's default list length


def knn_search(X, k: int, backend: str = "exact", random_state: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Distances and indices (n, k) of each point's k nearest neighbours, itself excluded, by
    ``backend``: ``exact`` (:func:`knn_distances`), ``hnsw`` (faiss' IndexHNSWFlat, M=32,
    efConstruction=200, efSearch=max(128, 2k)) or ``nndescent`` (pynndescent, seeded). The
    approximate ones need dense features and the optional packages (``pip install gssl[scale]``)."""
    if backend == "exact":
        return knn_distances(X, k)
    if backend not in BACKENDS:
        raise ConfigError(f"kNN backend {backend!r} is not one of {list(BACKENDS)}")
    if X is None or sp.issparse(X):
        raise GraphError(f"the {backend} kNN backend needs dense features; use backend exact for "
                         "sparse features (or densify them with a pca step)")
    X = np.ascontiguousarray(X, dtype=np.float32)
    if not np.all(np.isfinite(X)):
        raise DatasetError("features hold NaN/inf; clean them before building a graph")
    k = check_k(k, X.shape[0])
    search = _hnsw if backend == "hnsw" else _nndescent
    dist, idx = search(X, min(k + 1, X.shape[0]), random_state)
    return _drop_self(np.asarray(dist, dtype=np.float64), np.asarray(idx, dtype=np.int64), k, backend)


def _optional(module: str, package: str):
    try:
        return __import__(module)
    except ImportError:
        raise ConfigError(f"the kNN backend needs {package}: pip install {package} (or gssl[scale])") from None


def _hnsw(X: np.ndarray, n: int, seed: int):
    faiss = _optional("faiss", "faiss-cpu")
    index = faiss.IndexHNSWFlat(X.shape[1], HNSW_M)
    index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    index.hnsw.efSearch = max(HNSW_EF_SEARCH, 2 * n)
    index.add(X)
    d2, idx = index.search(X, n)
    return np.sqrt(np.maximum(d2, 0.0)), idx  # faiss returns squared L2 distances


def _nndescent(X: np.ndarray, n: int, seed: int):
    pynndescent = _optional("pynndescent", "pynndescent")
    # the descent runs with at least pynndescent's default 30 neighbours: with k + 1 = 11 its lists
    # stall far from the true ones on noisy 50-D data (four moons, recall@10 at 10^5: 0.65 with 11,
    # 0.97 with 30; at 10^6: 0.35 with 11, 0.85 with 30, where HNSW is the backend to use)
    index = pynndescent.NNDescent(X, n_neighbors=max(n, NND_MIN_NEIGHBORS), random_state=seed,
                                  metric="euclidean")
    idx, dist = index.neighbor_graph
    return dist[:, :n], idx[:, :n]


def _others_first(idx: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Column order putting each row's first k entries other than its own point ``rows[i]`` first
    (duplicates may rank before the point itself), and where the point itself is."""
    own = idx == rows[:, None]
    return np.argsort(own, axis=1, kind="stable")[:, :k], own


def _drop_self(dist, idx, k: int, backend: str):
    """Each row's first k neighbours other than the point itself."""
    order, own = _others_first(idx, np.arange(idx.shape[0]), k)
    idx, dist = np.take_along_axis(idx, order, 1), np.take_along_axis(dist, order, 1)
    if np.any(idx < 0) or np.any(np.take_along_axis(own, order, 1)):
        raise GraphError(f"the {backend} kNN search returned fewer than k={k} neighbours for some "
                         "points; lower k or use backend exact")
    return dist, idx


def knn_recall(X, idx: np.ndarray, n_queries: int = 1000, random_state: int = 0) -> tuple[float, int]:
    """Recall of neighbour lists ``idx`` (n, k) against exact search on a seeded sample of query
    points: the mean fraction of each query's k true neighbours found. Returns (recall, queries)."""
    n, k = idx.shape
    m = min(int(n_queries), n)
    queries = np.sort(np.random.default_rng(random_state).choice(n, size=m, replace=False))
    from sklearn.neighbors import NearestNeighbors

    exact = NearestNeighbors(n_neighbors=min(k + 1, n)).fit(X).kneighbors(
        np.asarray(X[queries], dtype=np.float64), return_distance=False)
    exact = np.take_along_axis(exact, _others_first(exact, queries, k)[0], 1)
    hits = int((idx[queries][:, :, None] == exact[:, None, :]).any(axis=2).sum())  # m x k x k
    return hits / (m * k), m
