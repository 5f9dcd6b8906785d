"""HDF5 graph cache (h5io kind "graph"): W, optional LLE weights V, degrees, Laplacian declaration."""

from __future__ import annotations

import json

import numpy as np
import scipy.sparse as sp

from ..errors import CacheError
from ..store.h5io import read_h5, write_h5
from .base import Graph
from .laplacian import LAPLACIAN_KINDS

KIND = "graph"


def save_graph(path, graph: Graph, params: dict, inputs: dict | None = None,
               build_seconds: float | None = None) -> None:
    """Write ``graph`` (features X are not stored: they live in the features file)."""
    W = sp.csr_matrix(graph.W)
    write_h5(path, KIND, {"W": W, "V": graph.V, "degrees": graph.degrees()}, params,
             inputs=inputs, build_seconds=build_seconds,
             extra_attrs={"laplacian_kind": graph.laplacian_kind,
                          "laplacian_power": int(graph.laplacian_power),
                          "n_nodes": int(graph.n_nodes), "nnz": int(W.nnz),
                          "graph_params": dict(graph.params)})


def _fail(path, rule, what: str) -> CacheError:
    fix = f"delete it (rm {path})" + (f" or rerun its rule (snakemake --forcerun {rule})" if rule else "")
    return CacheError(f"{path}: {what}: {fix}")


def load_graph(path, expect_params: dict | None = None, rule: str | None = None) -> Graph:
    """Read a graph file and check it: W square, symmetric, non-negative; V and degrees consistent."""
    arrays, attrs = read_h5(path, KIND, expect_params=expect_params, required=("W", "degrees"),
                            rule=rule)
    W, V = arrays["W"], arrays.get("V")
    if not sp.issparse(W) or W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise _fail(path, rule, f"W is not a square sparse matrix (shape {getattr(W, 'shape', None)})")
    W = sp.csr_matrix(W, dtype=np.float64)
    n = W.shape[0]
    scale = abs(W).max() if W.nnz else 0.0
    if W.nnz and abs(W - W.T).max() > 1e-12 * max(scale, 1.0):
        raise _fail(path, rule, "W is not symmetric")
    if W.nnz and W.data.min() < 0:
        raise _fail(path, rule, "W has negative weights")
    degrees = np.asarray(arrays["degrees"], dtype=np.float64)
    if degrees.shape != (n,) or not np.allclose(degrees, np.asarray(W.sum(axis=1)).ravel()):
        raise _fail(path, rule, "stored degrees do not match W")
    if V is not None and (not sp.issparse(V) or V.shape != (n, n)):
        raise _fail(path, rule, f"V has shape {getattr(V, 'shape', None)}, expected {(n, n)}")
    kind = str(attrs.get("laplacian_kind", ""))
    if kind not in LAPLACIAN_KINDS or (kind == "lle" and V is None):
        raise _fail(path, rule, f"invalid laplacian_kind {kind!r}")
    graph_params = json.loads(attrs["graph_params"]) if "graph_params" in attrs else attrs["params"]
    return Graph(W=W, V=None if V is None else sp.csr_matrix(V, dtype=np.float64), X=None,
                 params=graph_params, laplacian_kind=kind,
                 laplacian_power=int(attrs.get("laplacian_power", 1)), checked=True)
