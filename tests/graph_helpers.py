"""Graph helpers shared by the solver tests (import them: ``from graph_helpers import knn_graph``)."""
import scipy.sparse as sp
from sklearn.neighbors import kneighbors_graph

from gssl.graphs.base import Graph


def knn_graph(X, k=8, kind="normalized"):
    """The symmetric (max) binary k-NN graph of the points X, with X as node features and the
    Laplacian ``kind`` declared: the small reference graph the solver tests fit on."""
    W = kneighbors_graph(X, k, mode="connectivity")
    return Graph(W=sp.csr_matrix(W.maximum(W.T)), X=X, laplacian_kind=kind)


def share_of_graphlearnings_labels(solver, model, per_class, digits):
    """The share of digits' unlabeled points that gssl's ``solver`` (defaults) and GraphLearning's
    ``model`` (fitted by fit_predict) label alike, on draw(y, per_class, 10 + per_class)."""
    import numpy as np

    from gssl.solvers.registry import make_solver
    from test_graph_learning import codes_for, draw

    X, y, W = digits
    train = draw(y, per_class, 10 + per_class)
    ours = make_solver(solver, {}).fit(Graph(W=W, X=X), codes_for(y, train)).transduction_
    theirs = model.fit_predict(train, y[train])
    unl = np.setdiff1d(np.arange(y.size), train)
    return float(np.mean(ours[unl] == theirs[unl]))


def count_chebyshev_filters(monkeypatch) -> list:
    """A list that grows by one at each call of the compiled Chebyshev filter (the eigensolvers'
    filtered path), which still runs: whether a solve took that path or its fallback."""
    from gssl.optim import neighbour_sums

    calls = []
    chebyshev = neighbour_sums.chebyshev_filter
    monkeypatch.setattr(neighbour_sums, "chebyshev_filter", lambda *a: calls.append(1) or chebyshev(*a))
    return calls
