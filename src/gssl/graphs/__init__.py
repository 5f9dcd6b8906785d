"""Graph construction (kNN, LLE), weights, Laplacians and the HDF5 graph cache.

Graph specs (config entries under ``graphs:``), with their defaults:

    {"kind": "knn", "k": 10, "weights": "heat", "sigma": "mean_knn_distance",
     "symmetrize": "max", "laplacian": "normalized", "laplacian_power": 1}
        weights "binary" takes no sigma; "self_tuning" takes "k_st" (default 7) instead of sigma;
        "gaussian_kth" (exp(-4 d^2 / d_k(x_i)^2), Calder et al. 2020) takes neither.
    {"kind": "lle", "k": 8, "reg": 1e-3, "symmetrize": "max", "laplacian": "lle", "laplacian_power": 1}
        W is the symmetric binary kNN graph, V the LLE barycentric weights.
    {"kind": "precomputed", "laplacian": "normalized", "laplacian_power": 1}
        uses the given W (symmetrized by max, diagonal dropped).
    ``laplacian_power`` p declares L^p, the name the solvers' parameter has; ``power`` is accepted
    as its old name.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError, GraphError
from .base import Graph
from .cache import load_graph, save_graph
from .knn import BACKENDS, check_k, knn_distances, knn_recall, knn_search, neighbors_to_csr
from .laplacian import LAPLACIAN_KINDS, LAPLACIANS, laplacian, lle_laplacian, matrix_power
from .lle import barycenter_weights, lle_weights
from .weights import (SIGMA_RULES, SYMMETRIZATIONS, binary, gaussian_kth, heat, local_scales,
                      resolve_sigma, self_tuning, symmetrize)

__all__ = ["Graph", "build_graph", "as_graph", "check_weight_matrix", "validate_graph_spec", "GRAPH_KINDS", "WEIGHTS",
           "LAPLACIANS", "LAPLACIAN_KINDS", "BACKENDS", "SYMMETRIZATIONS", "SIGMA_RULES",
           "knn_distances", "knn_search", "knn_recall", "neighbors_to_csr", "binary", "heat", "self_tuning", "gaussian_kth",
           "local_scales",
           "resolve_sigma", "symmetrize", "lle_weights", "barycenter_weights", "laplacian",
           "lle_laplacian", "matrix_power", "save_graph", "load_graph"]

GRAPH_KINDS = ("knn", "lle", "precomputed")
WEIGHTS = ("binary", "heat", "self_tuning", "gaussian_kth")

_DEFAULTS = {
    "knn": {"k": 10, "weights": "heat", "symmetrize": "max", "laplacian": "normalized", "laplacian_power": 1},
    "lle": {"k": 8, "reg": 1e-3, "symmetrize": "max", "laplacian": "lle", "laplacian_power": 1},
    "precomputed": {"laplacian": "normalized", "laplacian_power": 1},
}
_WEIGHT_KEYS = {"binary": {}, "heat": {"sigma": "mean_knn_distance"}, "self_tuning": {"k_st": 7},
                "gaussian_kth": {}}


def _choice(spec: dict, key: str, allowed) -> None:
    if spec[key] not in allowed:
        raise ConfigError(f"graph spec: {key}={spec[key]!r} is not allowed; "
                          f"allowed values: {list(allowed)}")


def _positive_int(spec: dict, key: str) -> None:
    v = spec[key]
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
        raise ConfigError(f"graph spec: {key} must be an integer >= 1, got {v!r}")


# neighbour search keys, kept out of the spec unless given: the graph ids and caches of configs
# that never name them stay as they were
_SEARCH_KEYS = ("backend", "min_recall", "recall_queries")
# the keys of the graphs built from features (none of them is a key of kind precomputed)
_FEATURE_KEYS = ({k for kind in ("knn", "lle") for k in _DEFAULTS[kind]} | {"sigma", "k_st"}
                 | set(_SEARCH_KEYS)) - set(_DEFAULTS["precomputed"])


def _check_search(out: dict) -> None:
    backend = out.get("backend", "exact")
    if backend not in BACKENDS:
        raise ConfigError(f"graph spec: backend={backend!r} is not allowed; allowed values: {list(BACKENDS)}")
    if backend == "exact" and ({"min_recall", "recall_queries"} & set(out)):
        raise ConfigError("graph spec: min_recall and recall_queries apply to an approximate backend "
                          "(hnsw, nndescent); exact search has recall 1")
    r = out.get("min_recall", 0.5)
    if isinstance(r, bool) or not isinstance(r, numbers.Real) or not 0 < r <= 1:
        raise ConfigError(f"graph spec: min_recall must be a number in (0, 1], got {r!r}")
    if "recall_queries" in out:
        _positive_int(out, "recall_queries")


def validate_graph_spec(spec) -> dict:
    """Return ``spec`` with defaults filled in; ConfigError names the bad key and allowed values."""
    if not isinstance(spec, dict):
        raise ConfigError(f"graph spec must be a mapping, got {type(spec).__name__}")
    if spec.get("kind") not in GRAPH_KINDS:
        raise ConfigError(f"graph spec: kind={spec.get('kind')!r} is not allowed; "
                          f"allowed values: {list(GRAPH_KINDS)}")
    kind = spec["kind"]
    if "power" in spec:  # the old name of laplacian_power (the solvers' name for it)
        if "laplacian_power" in spec:
            raise ConfigError("graph spec: give laplacian_power only (power is its old name)")
        spec = {("laplacian_power" if k == "power" else k): v for k, v in spec.items()}
    out = {"kind": kind, **_DEFAULTS[kind]}
    if kind == "knn":
        out["weights"] = spec.get("weights", out["weights"])
        _choice(out, "weights", WEIGHTS)
        out.update(_WEIGHT_KEYS[out["weights"]])
    allowed = set(out) | (set(_SEARCH_KEYS) if kind in ("knn", "lle") else set())
    bad = sorted(set(spec) - allowed)
    if bad:
        raise ConfigError(f"graph spec (kind {kind!r}): unknown key(s) {bad}; "
                          f"allowed keys: {sorted(allowed)}")
    out.update(spec)
    _choice(out, "laplacian", LAPLACIANS + (("lle",) if kind == "lle" else ()))
    _positive_int(out, "laplacian_power")
    if kind in ("knn", "lle"):
        _positive_int(out, "k")
        _choice(out, "symmetrize", SYMMETRIZATIONS)
    if kind == "knn":
        if out["weights"] == "heat":
            s = out["sigma"]
            ok = s in SIGMA_RULES if isinstance(s, str) else (
                isinstance(s, numbers.Real) and not isinstance(s, bool) and s > 0)
            if not ok:
                raise ConfigError(f"graph spec: sigma={s!r} is not allowed; allowed values: a positive "
                                  f"number or one of {list(SIGMA_RULES)}")
        if out["weights"] == "self_tuning":
            _positive_int(out, "k_st")
    if kind in ("knn", "lle"):
        _check_search(out)
    if kind == "lle":
        r = out["reg"]
        if isinstance(r, bool) or not isinstance(r, numbers.Real) or r < 0:
            raise ConfigError(f"graph spec: reg must be a number >= 0, got {r!r}")
    return out


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
    backend = spec.get("backend", "exact")
    dist, idx = knn_search(X, k, backend)
    if backend == "exact":
        return dist, idx, {}
    recall, m = knn_recall(X, idx, spec.get("recall_queries", 1000))
    if recall < spec.get("min_recall", 0.5):
        raise GraphError(f"the {backend} kNN search found {recall:.3f} of the true {k} neighbours on {m} "
                         f"seeded query points, below min_recall={spec.get('min_recall', 0.5)}: use "
                         "backend exact, the other approximate backend, or lower min_recall")
    return dist, idx, {"knn_recall": recall, "knn_recall_queries": m}


def check_weight_matrix(W) -> sp.csr_matrix:
    """W as a symmetric CSR matrix with finite non-negative weights and no self-loops; anything
    else raises GraphError saying what is wrong and how to fix it."""
    if not (sp.issparse(W) or isinstance(W, np.ndarray)) or np.ndim(W) != 2 or W.shape[0] != W.shape[1]:
        raise GraphError(f"a weight matrix W must be a square SciPy sparse matrix or 2-D array, got "
                         f"{type(W).__name__} of shape {getattr(W, 'shape', None)}")
    W = sp.csr_matrix(W, dtype=np.float64)
    if not np.all(np.isfinite(W.data)):
        raise GraphError("W has NaN or infinite weights; weights must be finite numbers >= 0")
    if W.nnz and W.data.min() < 0:
        raise GraphError(f"W has {int((W.data < 0).sum())} negative weights (smallest "
                         f"{W.data.min():.3g}); graph weights must be >= 0 (a similarity, not a "
                         f"distance or a signed matrix)")
    asym = abs(W - W.T)
    scale = float(abs(W).max()) if W.nnz else 0.0
    if asym.nnz and asym.max() > 1e-10 * max(scale, 1e-300):
        raise GraphError(f"W is not symmetric (max |W - W'| = {asym.max():.3g}); symmetrize it, e.g. "
                         f"(W + W.T) / 2 or gssl.graphs.symmetrize(W, 'max')")
    W = sp.csr_matrix(W - sp.diags(W.diagonal()))
    W.eliminate_zeros()
    return W


def as_graph(G, graph: dict | None = None) -> Graph:
    """What a solver's ``fit`` takes, as a :class:`Graph`: a Graph as is; a weight matrix W (SciPy
    sparse, or a dense square array) checked by :func:`check_weight_matrix`; or features X with
    ``graph`` = a spec (``{"k": 10}``; kind knn by default) to build one."""
    if isinstance(G, Graph):
        if graph is not None:
            raise ConfigError("graph= builds a graph from features, but a gssl Graph was given: "
                              "drop graph=")
        return _checked_graph(G)
    if graph is not None:
        if not isinstance(graph, dict):
            raise ConfigError(f"graph= must be a graph spec mapping, e.g. {{'k': 10}}, got {graph!r}")
        X = G if sp.issparse(G) else np.asarray(G, dtype=np.float64)
        return build_graph(X, {"kind": "knn", **graph})
    if sp.issparse(G):
        return Graph(W=check_weight_matrix(G), checked=True)
    if isinstance(G, np.ndarray) and G.ndim == 2 and G.shape[0] == G.shape[1]:
        try:
            return Graph(W=check_weight_matrix(G), checked=True)
        except GraphError as exc:  # a square array may hold features (n points, n dimensions)
            raise GraphError(f"{exc}; if the array holds features, pass graph={{'k': 10, ...}} to "
                             f"build a graph from them") from exc
    raise ConfigError(f"fit takes a gssl Graph, a weight matrix W (SciPy sparse or a square array) or "
                      f"features X with graph={{'k': 10, ...}}; got {type(G).__name__} of shape "
                      f"{getattr(G, 'shape', None)}: to build a kNN graph from features, pass graph=")


def _checked_graph(G: Graph) -> Graph:
    """A Graph made by hand, its W checked (and its self-loops dropped) once, in place; its
    features and LLE weights sized to its nodes. GraphError says what does not fit."""
    if not G.checked:
        try:
            W = check_weight_matrix(G.W)
        except GraphError as exc:
            raise GraphError(f"Graph(W=...): {exc}") from None
        if not (sp.issparse(G.W) and G.W.format == "csr" and G.W.dtype == np.float64
                and not G.W.diagonal().any()):
            G.W = W  # converted, or its self-loops dropped; else the very matrix is kept, so that
        G.checked = True  # a shared_graph_operators(G.W) block still finds its operators
    n = G.n_nodes
    if G.X is not None and (not hasattr(G.X, "shape") or len(G.X.shape) != 2 or G.X.shape[0] != n):
        raise GraphError(f"Graph(X=...): the features must be a 2-D array (or sparse matrix) with a "
                         f"row per node of W ({n}), got {type(G.X).__name__} of shape "
                         f"{getattr(G.X, 'shape', None)}")
    if G.V is not None and getattr(G.V, "shape", None) != (n, n):
        raise GraphError(f"Graph(V=...): the LLE weights must be {n} x {n} as W, got shape "
                         f"{getattr(G.V, 'shape', None)}")
    return G


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
        Graph spec (the config's ``graphs:`` entry; the module lists the kinds and keys).
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
        feature_keys = sorted(set(spec) & _FEATURE_KEYS)
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
