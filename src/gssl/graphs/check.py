"""What a solver's ``fit`` takes, checked: a weight matrix (:func:`check_weight_matrix`) or a
:class:`Graph`, or features with a spec to build one (:func:`as_graph`)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError, GraphError
from .base import Graph
from .build import build_graph


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
