"""The random walk, graph nearest neighbour, centered kernel, AMLE and p-eikonal classifiers
(gssl.solvers.propagation): label for label with GraphLearning 1.7.5 (the authors' package, the
``peers``/``test`` extra) on the same W and labeled sets of scikit-learn digits, and their own
rules (convergence warning, parameter checks)."""
import graphlearning as gl
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from gssl.errors import ConfigError
from gssl.graphs.base import Graph
from gssl.solvers.registry import make_solver

from test_graph_learning import codes_for, digits, draw  # noqa: F401  (digits: the fixture)

PEERS = {"randomwalk": lambda W: gl.ssl.randomwalk(W),
         "graph_nearest_neighbor": lambda W: gl.ssl.graph_nearest_neighbor(W),
         "centered_kernel": lambda W: gl.ssl.centered_kernel(W),
         "amle": lambda W: gl.ssl.amle(W),
         "peikonal": lambda W: gl.ssl.peikonal(W)}


@pytest.mark.parametrize("name", sorted(PEERS))
@pytest.mark.parametrize("per_class", [1, 5])
def test_labels_agree_with_graphlearning(name, per_class, digits):
    X, y, W = digits
    train = draw(y, per_class, 10 + per_class)
    np.random.seed(0)  # GraphLearning's centered kernel starts its power iteration at random
    theirs = PEERS[name](W).fit_predict(train, y[train])
    ours = make_solver(name).fit(Graph(W=W), codes_for(y, train)).transduction_
    unl = np.setdiff1d(np.arange(y.size), train)
    assert np.mean(ours[unl] == theirs[unl]) >= 0.995
    assert abs(np.mean(ours[unl] == y[unl]) - np.mean(theirs[unl] == y[unl])) <= 0.002


def test_randomwalk_is_converged_label_spreading(digits):
    """The random walk's U is label spreading's fixed point on the same W (sklearn's iteration
    run to convergence), up to the factor 1 - alpha."""
    X, y, W = digits
    codes = codes_for(y, draw(y, 3, 1))
    rw = make_solver("randomwalk", {"tol": 1e-10}).fit(Graph(W=W), codes)
    ls = make_solver("label_spreading", {"graph": "given", "alpha": 0.95, "max_iter": 5000,
                                         "tol": 1e-12}).fit(Graph(W=W), codes)
    np.testing.assert_array_equal(rw.transduction_, ls.transduction_)
    assert rw.converged_ and rw.stop_reason_ == "tol"


@pytest.mark.parametrize("name, params", [("randomwalk", {"max_iter": 2}),
                                          ("centered_kernel", {"max_iter": 2}),
                                          ("amle", {"max_iter": 2, "tol": 1e-12})])
def test_iterative_methods_warn_when_max_iter_is_hit(name, params, digits):
    X, y, W = digits
    with pytest.warns(ConvergenceWarning):
        est = make_solver(name, params).fit(Graph(W=W), codes_for(y, draw(y, 2, 3)))
    assert not est.converged_ and est.stop_reason_ == "max_iter"


def test_nearest_neighbor_takes_the_nearest_labeled_class():
    """A path 0-1-2-3-4, labels at both ends: with lengths = weights node 1 (heavy edge to 0)
    is nearer 4's side; with lengths = 1 / weights it is nearer 0."""
    import scipy.sparse as sp
    w = np.array([10.0, 1.0, 1.0, 1.0])
    W = sp.diags([w, w], [1, -1], shape=(5, 5)).tocsr()
    codes = np.array([0, -1, -1, -1, 1])
    by_weight = make_solver("graph_nearest_neighbor").fit(Graph(W=W), codes)
    by_inverse = make_solver("graph_nearest_neighbor", {"edge_length": "inverse_weight"}).fit(
        Graph(W=W), codes)
    assert by_weight.transduction_.tolist() == [0, 1, 1, 1, 1]
    assert by_inverse.transduction_.tolist() == [0, 0, 0, 1, 1]


@pytest.mark.parametrize("name, params", [("randomwalk", {"alpha": 1.0}),
                                          ("centered_kernel", {"alpha": 1.0}),
                                          ("graph_nearest_neighbor", {"edge_length": "hops"}),
                                          ("amle", {"tol": 0}), ("peikonal", {"p": 0})])
def test_parameters_are_checked(name, params, digits):
    X, y, W = digits
    with pytest.raises(ConfigError):
        make_solver(name, params).fit(Graph(W=W), codes_for(y, draw(y, 1, 0)))


def test_peikonal_distances_equal_graphlearnings_at_p2(digits):
    """At p = 2 (bisection) the distances are GraphLearning's to its 30 bisection steps."""
    X, y, W = digits
    train = draw(y, 2, 7)
    model = gl.ssl.peikonal(W, p=2)
    theirs = model.fit_predict(train, y[train])
    ours = make_solver("peikonal", {"p": 2.0}).fit(Graph(W=W), codes_for(y, train))
    np.testing.assert_allclose(-ours.decision_function_, model.prob, atol=1e-6)
    np.testing.assert_array_equal(ours.transduction_, theirs)
