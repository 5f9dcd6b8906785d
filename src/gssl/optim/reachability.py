"""Which nodes a graph method can label: the connected components of W and those that hold a
labeled node (a component without one has undetermined labels), with the message that says what
to do about the others."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import SolverError
from .shared_operators import graph_operator


def components(W) -> np.ndarray:
    """Connected-component index of every node."""
    from scipy.sparse.csgraph import connected_components

    # weak components of the directed view: the same partition for a symmetric W, without the
    # transposed copy the undirected call makes (a third of the time at 10^6 nodes)
    # (built once per W inside a shared_graph_operators block: every split of a cell asks)
    return graph_operator(W, "components", lambda: connected_components(
        sp.csr_matrix(W), directed=True, connection="weak")[1])


def reached_nodes(W, labeled: np.ndarray, comp: np.ndarray | None = None) -> np.ndarray:
    """Mask of the nodes whose connected component holds a labeled node: the only ones a graph
    method can label (elsewhere the labels are undetermined)."""
    comp = components(W) if comp is None else comp
    return np.isin(comp, comp[labeled])


def unreached_message(n_unreached: int, n_components: int) -> str:
    return (f"{n_components} connected component(s) of the graph ({n_unreached} nodes) hold no "
            "labeled node, so their labels are undetermined; rebuild the graph with a larger k, "
            "label a node in each component, or pass unreachable='abstain' to leave them "
            "unlabeled (-1, scored as errors)")


def require_reached(W: sp.csr_matrix, labeled: np.ndarray) -> None:
    """SolverError, saying what to do, when a component of W holds no labeled node."""
    comp = components(W)
    bare = np.setdiff1d(comp, comp[labeled])
    if bare.size:
        raise SolverError(unreached_message(int(np.isin(comp, bare).sum()), bare.size))
