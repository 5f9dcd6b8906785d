"""Sparse label propagation: the labeled rows stay fixed, each step reaches one hop farther, and
the labels agree with GraphLearning 1.7.5's on digits (deterministic: >= 99.5 % identical)."""
import graphlearning as gl
import numpy as np
import pytest

from gssl.optim.graph_learning import one_hot
from gssl.optim.sparse_label_propagation import sparse_label_propagation

from graph_helpers import share_of_graphlearnings_labels
from test_graph_learning import codes_for, digits, draw  # noqa: F401  (digits: the fixture)


def test_labels_stay_fixed_and_each_step_reaches_one_hop_farther(digits):
    _, y, W = digits
    codes = codes_for(y, draw(y, 5, 3))
    labeled = np.flatnonzero(codes >= 0)
    U = sparse_label_propagation(W, codes, 10, n_steps=2)
    np.testing.assert_array_equal(U[labeled], one_hot(codes[labeled], 10))
    near = np.zeros(y.size, bool)
    near[labeled] = True
    near |= np.asarray(W[labeled].sum(axis=0)).ravel() > 0
    assert np.abs(U[~near]).max() == 0 and np.abs(U[near & (codes < 0)]).max() > 0


@pytest.mark.parametrize("per_class", [1, 5])
def test_labels_agree_with_graphlearning(per_class, digits):
    _, _, W = digits
    model = gl.ssl.sparse_label_propagation(W)
    assert share_of_graphlearnings_labels("sparse_label_propagation", model, per_class, digits) >= 0.995
