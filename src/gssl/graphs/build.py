"""Building a graph from its spec: kNN and LLE graphs from features, or a given weight matrix."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError, GraphError
from .base import Graph
from .knn import check_k, knn_recall, knn_search
from .lle import lle_weights
from .spec import FEATURE_KEYS, SEARCH_DEFAULTS, validate_graph_spec
from .weights import binary, gaussian_kth, heat, resolve_sigma, self_tuning, symmetrize


def _knn_weights(X, spec: dict) -> tuple[sp.csr_matrix, dict]:
    if X is None:
        raise GraphError("a kNN graph needs features X; graph-only datasets take kind 'precomputed'")
    k, how = spec["k"], spec["weights"]
    n_search = max(k, spec["k_st"]) if how == "self_tuning" else k
    if how == "self_tuning":
        check_k(spec["k_st"], X.shape[0], "k_st")
    check_k(k, X.shape[0])
    dist, idx, info = _neighbours(X, n_search, spec)
    if how == "binary":
        W = binary(dist, idx)
    elif how == "heat":
        info["sigma_value"] = resolve_sigma(dist, spec["sigma"])
        W = heat(dist, idx, info["sigma_value"])
    elif how == "gaussian_kth":
        W = gaussian_kth(dist, idx)
    else:
        W = self_tuning(dist, idx, spec["k_st"], k)
    return symmetrize(W, spec["symmetrize"]), info


def _neighbours(X, k: int, spec: dict) -> tuple[np.ndarray, np.ndarray, dict]:
    """kNN lists by the spec's backend; an approximate one's recall is measured against exact
    search on a seeded sample (``recall_queries``, default 1,000 points) and must reach
    ``min_recall`` (default 0.5: a search that misses most neighbours builds another graph)."""
    search = {**SEARCH_DEFAULTS, **spec}
    backend = search["backend"]
    dist, idx = knn_search(X, k, backend)
    if backend == "exact":
        return dist, idx, {}
    recall, m = knn_recall(X, idx, search["recall_queries"])
    if recall < search["min_recall"]:
        raise GraphError(f"the {backend} kNN search found {recall:.3f} of the true {k} neighbours on {m} "
                         f"seeded query points, below min_recall={search['min_recall']}: use "
                         "backend exact, the other approximate backend, or lower min_recall")
    return dist, idx, {"knn_recall": recall, "knn_recall_queries": m}


def _precomputed(W, X) -> sp.csr_matrix:
    if W is None:
        raise ConfigError("graph kind 'precomputed' needs an adjacency matrix W (graph-only datasets)")
    W = sp.csr_matrix(W, dtype=np.float64)
    if W.shape[0] != W.shape[1]:
        raise GraphError(f"precomputed W must be square, got shape {W.shape}")
    if X is not None and X.shape[0] != W.shape[0]:
        raise GraphError(f"precomputed W has {W.shape[0]} nodes but X has {X.shape[0]} rows")
    if W.nnz and (not np.all(np.isfinite(W.data)) or W.data.min() < 0):
        raise GraphError("precomputed W must have finite, non-negative weights")
    W = sp.csr_matrix(W - sp.diags(W.diagonal()))  # drop self-loops without a LIL round trip
    return symmetrize(W, "max")


def build_graph(X=None, spec: dict | None = None, W=None, **keys) -> Graph:
    """Build the graph described by ``spec`` from features X (kinds knn, lle) or a given W.

    The spec's keys may be given as keyword arguments instead (the config's names), e.g.
    ``build_graph(X, k=10, weights="gaussian_kth", symmetrize="mean")``; ``kind`` defaults to
    ``"knn"``, or to ``"precomputed"`` when W is given: ``build_graph(X, W=W)`` uses W as the graph
    and keeps X as its node features (``graph.X``, which the kernel methods need).

    Parameters
    ----------
    X : array (n, d) or sparse matrix, optional
        Node features: the points of a knn or lle graph; with W, carried as ``graph.X``.
    spec : dict, optional
        Graph spec (the config's ``graphs:`` entry; :mod:`gssl.graphs.spec` lists the kinds and
        keys).
    W : sparse matrix or array (n, n), optional
        Your weight matrix, used as the graph (symmetrized by max, diagonal dropped). With W,
        the spec may only be of kind ``"precomputed"`` (keys ``laplacian``,
        ``laplacian_power``): a knn or lle spec would build another graph and discard W, so it
        is a ConfigError.
    **keys
        Spec keys as keywords, merged over ``spec``.

    Returns
    -------
    Graph
    """
    if spec is not None and not isinstance(spec, dict):
        validate_graph_spec(spec)  # raises: a spec is a mapping
    if W is not None:
        spec = {"kind": "precomputed", **(spec or {}), **keys}
        # a key of the feature graphs asks to build from X just as their kind does
        feature_keys = sorted(set(spec) & FEATURE_KEYS)
        if spec["kind"] in ("knn", "lle") or feature_keys:
            what = (f"kind={spec['kind']!r}" if spec["kind"] != "precomputed"
                    else f"the key(s) {feature_keys}")
            raise ConfigError(
                f"build_graph got a weight matrix W and a graph spec with {what}, which builds "
                f"another graph from X and would discard W: drop W= to build that graph from X, "
                f"or drop the spec (or give kind 'precomputed', whose keys are laplacian and "
                f"laplacian_power) to use W as the graph; build_graph(X, W=W) keeps X as graph.X")
    else:
        if spec is None and not keys and X is None:
            raise ConfigError("build_graph needs features X (or a weight matrix W) and a graph spec, "
                              "e.g. build_graph(X, k=10) or build_graph(X, {'kind': 'knn', 'k': 10})")
        spec = {"kind": "knn", **(spec or {}), **keys}  # (a spec dict without kind: knn too)
    if X is not None and not (sp.issparse(X) or isinstance(X, np.ndarray)):
        X = np.asarray(X, dtype=np.float64)  # a list or a DataFrame: the array every builder reads
    spec = validate_graph_spec(spec)
    kind, V = spec["kind"], None
    params = dict(spec)
    if kind == "precomputed":
        Wg = _precomputed(W, X)
    elif kind == "knn":
        Wg, info = _knn_weights(X, spec)
        params.update(info)
    else:
        if X is None:
            raise GraphError("an LLE graph needs features X; graph-only datasets take kind 'precomputed'")
        _, idx, info = _neighbours(X, spec["k"], spec)
        params.update(info)
        Wg = symmetrize(binary(None, idx), spec["symmetrize"])
        V = lle_weights(X, spec["k"], spec["reg"], idx=idx)
    return Graph(W=Wg, V=V, X=X, params=params, laplacian_kind=spec["laplacian"],
                 laplacian_power=int(spec["laplacian_power"]), checked=True)
