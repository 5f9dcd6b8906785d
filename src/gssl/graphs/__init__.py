"""Graph construction (kNN, LLE), weights, Laplacians and the HDF5 graph cache.

The graph spec (kinds, keys, defaults, bounds) is declared in :mod:`gssl.graphs.spec`; graphs are
built in :mod:`gssl.graphs.build` and what a solver's ``fit`` takes is checked in
:mod:`gssl.graphs.check`.
"""

from .base import Graph
from .build import build_graph
from .cache import load_graph, save_graph
from .check import as_graph, check_weight_matrix
from .knn import BACKENDS, check_k, knn_distances, knn_recall, knn_search, neighbors_to_csr
from .laplacian import LAPLACIAN_KINDS, LAPLACIANS, laplacian, lle_laplacian, matrix_power
from .lle import barycenter_weights, lle_weights
from .spec import GRAPH_KINDS, WEIGHTS, validate_graph_spec
from .weights import (SIGMA_RULES, SYMMETRIZATIONS, binary, gaussian_kth, heat, local_scales,
                      resolve_sigma, self_tuning, symmetrize)

__all__ = ["Graph", "build_graph", "as_graph", "check_weight_matrix", "validate_graph_spec", "GRAPH_KINDS", "WEIGHTS",
           "LAPLACIANS", "LAPLACIAN_KINDS", "BACKENDS", "SYMMETRIZATIONS", "SIGMA_RULES",
           "knn_distances", "knn_search", "knn_recall", "neighbors_to_csr", "binary", "heat", "self_tuning", "gaussian_kth",
           "local_scales",
           "resolve_sigma", "symmetrize", "lle_weights", "barycenter_weights", "laplacian",
           "lle_laplacian", "matrix_power", "save_graph", "load_graph"]
