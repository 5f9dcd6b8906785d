"""Graph helpers shared by the solver tests (import them: ``from graph_helpers import knn_graph``)."""
import scipy.sparse as sp
from sklearn.neighbors import kneighbors_graph

from gssl.graphs.base import Graph


def knn_graph(X, k=8, kind="normalized"):
    """The symmetric (max) binary k-NN graph of the points X, with X as node features and the
    Laplacian ``kind`` declared: the small reference graph the solver tests fit on."""
    W = kneighbors_graph(X, k, mode="connectivity")
    return Graph(W=sp.csr_matrix(W.maximum(W.T)), X=X, laplacian_kind=kind)
