import numpy as np
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score

from gssl.metrics import clustering_accuracy, contingency, error_rate, macro_error, purity

T = np.array([0, 0, 0, 0, 1, 1, 2, 2, 2, 2])
P = np.array([0, 0, 1, 0, 1, 0, 2, 2, 2, 1])


def test_error_rate_by_hand_and_sklearn():
    assert error_rate(T, P) == pytest.approx(30.0)  # 3 of 10 wrong
    assert error_rate(T, P) == pytest.approx(100 * (1 - accuracy_score(T, P)))
    assert error_rate(T, T) == 0.0


def test_macro_error_by_hand_and_sklearn():
    # per-class errors 1/4, 1/2, 1/4 -> mean 1/3
    assert macro_error(T, P) == pytest.approx(100 / 3)
    assert macro_error(T, P) == pytest.approx(100 * (1 - balanced_accuracy_score(T, P)))


def test_purity_and_accuracy_invariant_to_relabelling():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 200)
    perm = rng.permutation(5) + 10  # other names, other order
    assert purity(y, perm[y]) == 100.0
    assert clustering_accuracy(y, perm[y]) == 100.0
    assert error_rate(y, perm[y]) == 100.0


def test_purity_by_hand():
    t = np.array([0, 0, 0, 1, 1, 1, 1, 2])
    c = np.array([5, 5, 7, 7, 7, 7, 9, 9])
    # cluster 5: {0,0} -> 2; cluster 7: {0,1,1,1} -> 3; cluster 9: {1,2} -> 1
    assert purity(t, c) == pytest.approx(100 * 6 / 8)
    # one cluster per point is trivially pure; one big cluster has the majority share
    assert purity(t, np.arange(8)) == 100.0
    assert purity(t, np.zeros(8)) == pytest.approx(100 * 4 / 8)


def test_clustering_accuracy_hungarian():
    t = np.array([0, 0, 0, 1, 1, 1, 1, 2])
    c = np.array([5, 5, 7, 7, 7, 7, 9, 9])
    # best one-to-one map: 5->0 (2), 7->1 (3), 9->2 (1) = 6 of 8
    assert clustering_accuracy(t, c) == pytest.approx(75.0)
    # majority voting would map both clusters to class 0; the one-to-one map cannot
    t2, c2 = np.array([0, 0, 0, 0, 1, 1]), np.array([0, 0, 0, 1, 1, 0])
    assert purity(t2, c2) == pytest.approx(100 * 4 / 6)
    assert clustering_accuracy(t2, c2) == pytest.approx(100 * 4 / 6)
    # more clusters than classes: the extra cluster's points count as wrong
    assert clustering_accuracy(np.array([0, 0, 1, 1]), np.array([0, 2, 1, 1])) == 75.0


def test_clustering_accuracy_matches_brute_force():
    from itertools import permutations
    rng = np.random.default_rng(1)
    t, c = rng.integers(0, 4, 60), rng.integers(0, 4, 60)
    best = max(np.mean(np.asarray(p)[c] == t) for p in permutations(range(4)))
    assert clustering_accuracy(t, c) == pytest.approx(100 * best)


def test_contingency_and_input_errors():
    np.testing.assert_array_equal(contingency([0, 0, 1], [1, 1, 1]), [[2], [1]])
    with pytest.raises(ValueError, match="equal length"):
        error_rate([0, 1], [0])
    with pytest.raises(ValueError):
        purity([], [])


def test_squared_hinge_closed_form():
    from gssl.metrics import squared_hinge

    scores = np.array([[1.0, -1.0, -1.0], [0.5, 0.0, -2.0]])
    # point 0: every margin met -> 0; point 1 (class 2): (1 + 0.5)^2 + (1 + 0)^2 + (1 + 2)^2
    assert squared_hinge([0, 2], scores, [0, 1, 2]) == pytest.approx((0.0 + 2.25 + 1.0 + 9.0) / 2)
    with pytest.raises(ValueError, match="n_points, n_classes"):
        squared_hinge([0, 1], scores[:, :2], [0, 1, 2])
