"""Dynamic label propagation: the recursion for P_t X beside the dense P_t of the paper, and the
labels beside GraphLearning 1.7.5's on digits (deterministic: >= 99.5 % identical)."""
import graphlearning as gl
import numpy as np
import pytest
import scipy.sparse as sp

from gssl.optim.dynamic_label_propagation import dynamic_label_propagation
from gssl.optim.graph_learning import one_hot

from graph_helpers import share_of_graphlearnings_labels
from test_graph_learning import digits  # noqa: F401  (digits: the fixture)


def test_the_recursion_equals_the_dense_operator():
    rng = np.random.default_rng(0)
    A = sp.random(40, 40, density=0.2, random_state=1)
    W = sp.csr_matrix(A + A.T + sp.diags(np.ones(39), 1) + sp.diags(np.ones(39), -1))
    W.setdiag(0)
    codes = np.full(40, -1)
    codes[[0, 7, 20, 33]] = [0, 1, 2, 1]
    labeled = np.flatnonzero(codes >= 0)
    P = (W / W.sum(axis=1)).toarray()
    U, Pt = np.zeros((40, 3)), P.copy()
    U[labeled] = one_hot(codes[labeled], 3)
    alpha, lam = rng.uniform(0.01, 0.2, 2)
    for _ in range(4):  # the paper's Algorithm 1, P_t dense
        V = P @ U
        U = Pt @ U
        U[labeled] = one_hot(codes[labeled], 3)
        Pt = P @ Pt @ P.T + alpha * V @ V.T + lam * np.eye(40)
    np.testing.assert_allclose(dynamic_label_propagation(W, codes, 3, alpha=alpha, lam=lam,
                                                         n_steps=4), U, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("per_class", [1, 5])
def test_labels_agree_with_graphlearning(per_class, digits):
    _, _, W = digits
    model = gl.ssl.dynamic_label_propagation(W)
    assert share_of_graphlearnings_labels("dynamic_label_propagation", model, per_class, digits) >= 0.995
