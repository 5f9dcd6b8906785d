import hashlib

import numpy as np
import pytest

from gssl.errors import CacheError, ConfigError, SplitError
from gssl.splits import (LABELED, TEST, UNLABELED, UNUSED, VALIDATION, load_splits, make_splits,
                         n_splits, save_splits, seed_for, validate_protocol)

Y = np.repeat(np.arange(3), [40, 60, 100])  # unbalanced on purpose
MELACCI = {"kind": "melacci_cv", "folds": 4, "randomizations": 3, "labeled": 12, "validation": 9}


def per_class(roles, role):
    return np.bincount(Y[roles == role], minlength=3)


def test_seed_is_sha256_derived_and_stable():
    assert seed_for("digits", "l5", 0) == seed_for("digits", "l5", 0)
    assert len({seed_for("digits", "l5", 0), seed_for("digits", "l5", 1),
                seed_for("usps", "l5", 0), seed_for("digits", "l10", 0)}) == 4
    # sha256 of the canonical JSON of the triple: the same on every machine and Python version
    digest = hashlib.sha256(b'["digits","l5",0]').hexdigest()
    assert seed_for("digits", "l5", 0) == int(digest[:16], 16) >> 1
    assert 0 <= seed_for("x", "y", 3) < 2**63


@pytest.mark.parametrize("spec", [
    {"kind": "labels_per_class", "n": 3, "repeats": 4},
    MELACCI,
    {"kind": "per_class_counts", "labeled": 2, "unlabeled": 10, "test": 20, "repeats": 3},
    {"kind": "label_fraction", "fraction": 0.05, "repeats": 2},
    {"kind": "label_fraction", "per_class": 1, "repeats": 2},
])
def test_splits_deterministic_shaped_and_distinct(spec):
    a = make_splits(Y, spec, "toy", "p")
    assert a.dtype == np.int8 and a.shape == (n_splits(spec), Y.size)
    np.testing.assert_array_equal(a, make_splits(Y, spec, "toy", "p"))
    assert not np.array_equal(a, make_splits(Y, spec, "toy", "other"))
    assert len({r.tobytes() for r in a}) == a.shape[0]  # every split differs
    assert np.isin(a, [UNUSED, LABELED, UNLABELED, VALIDATION, TEST]).all()
    for roles in a:
        assert (per_class(roles, LABELED) >= 1).all()


def test_labels_per_class_exact_counts():
    for roles in make_splits(Y, {"kind": "labels_per_class", "n": 5, "repeats": 3}, "toy", "l5"):
        np.testing.assert_array_equal(per_class(roles, LABELED), [5, 5, 5])
        np.testing.assert_array_equal(per_class(roles, UNLABELED), [35, 55, 95])


def test_label_fraction_rounds_with_minimum_one():
    roles = make_splits(Y, {"kind": "label_fraction", "fraction": 0.02, "repeats": 1}, "t", "f")[0]
    np.testing.assert_array_equal(per_class(roles, LABELED), [1, 1, 2])  # 0.8, 1.2, 2.0
    roles = make_splits(Y, {"kind": "label_fraction", "per_class": 2, "repeats": 1}, "t", "f")[0]
    np.testing.assert_array_equal(per_class(roles, LABELED), [2, 2, 2])


def test_per_class_counts_exact_and_rest_unused():
    spec = {"kind": "per_class_counts", "labeled": 3, "unlabeled": 7, "test": 20, "repeats": 2}
    for roles in make_splits(Y, spec, "t", "pc"):
        np.testing.assert_array_equal(per_class(roles, LABELED), [3, 3, 3])
        np.testing.assert_array_equal(per_class(roles, UNLABELED), [7, 7, 7])
        np.testing.assert_array_equal(per_class(roles, TEST), [20, 20, 20])
        np.testing.assert_array_equal(per_class(roles, UNUSED), [10, 30, 70])
    spec["unlabeled"] = None  # rest of each class
    roles = make_splits(Y, spec, "t", "pc")[0]
    np.testing.assert_array_equal(per_class(roles, UNLABELED), [17, 37, 77])
    spec.update(unlabeled=7, test=None)  # or the rest is test (Tran et al.'s YaleB protocol)
    roles = make_splits(Y, spec, "t", "pc")[0]
    np.testing.assert_array_equal(per_class(roles, TEST), [30, 50, 90])
    assert not (roles == UNUSED).any()
    with pytest.raises(ConfigError, match="cannot both be null"):
        validate_protocol({**spec, "unlabeled": None})


def test_per_class_counts_pool_draws_from_the_first_points_of_each_class():
    y = np.tile(np.arange(3), 50)                     # classes interleaved in dataset order
    spec = {"kind": "per_class_counts", "labeled": 2, "unlabeled": 3, "test": 4, "repeats": 3,
            "pool": 12}
    splits = make_splits(y, spec, "t", "pool")
    first = np.zeros(y.size, bool)
    for c in range(3):
        first[np.flatnonzero(y == c)[:12]] = True
    for roles in splits:
        assert np.all(roles[~first] == UNUSED)
        for role, k in ((LABELED, 2), (UNLABELED, 3), (TEST, 4)):
            np.testing.assert_array_equal(np.bincount(y[roles == role], minlength=3), [k] * 3)
    assert len({r.tobytes() for r in splits}) == 3   # different draws per repeat
    np.testing.assert_array_equal(splits, make_splits(y, spec, "t", "pool"))
    with pytest.raises(SplitError, match="needs"):
        make_splits(y, dict(spec, pool=8), "t", "pool")
    with pytest.raises(ConfigError, match="pool"):
        validate_protocol(dict(spec, pool=0))


def test_melacci_cv_folds_partition_and_counts():
    splits = make_splits(Y, MELACCI, "g50c", "melacci")
    for r in range(3):
        block = splits[4 * r: 4 * r + 4]
        test = block == TEST
        np.testing.assert_array_equal(test.sum(axis=0), np.ones(Y.size))  # folds partition points
        assert set(test.sum(axis=1)) == {50}
        for roles in block:
            # stratified folds: each class is split evenly over the 4 folds
            np.testing.assert_array_equal(per_class(roles, TEST), [10, 15, 25])
            assert (roles == LABELED).sum() == 12 and (roles == VALIDATION).sum() == 9
            assert (roles == UNLABELED).sum() == 200 - 50 - 21
            assert (per_class(roles, VALIDATION) >= 1).all()
            # stratified: within one point of proportional (12 * [30, 45, 75] / 150)
            assert np.abs(per_class(roles, LABELED) - [2.4, 3.6, 6.0]).max() < 1
    # the fold partitions of the randomizations differ
    assert not np.array_equal(splits[0] == TEST, splits[4] == TEST)


def test_melacci_random_labeled_draw_is_the_papers():
    """labeled_draw: random = uniform among the training points, >= 1 per class (rejection);
    folds, validation counts and seeds as the stratified draw."""
    strat = make_splits(Y, MELACCI, "g50c", "melacci")
    np.testing.assert_array_equal(strat, make_splits(Y, dict(MELACCI, labeled_draw="stratified"),
                                                     "g50c", "melacci"))
    rand = make_splits(Y, dict(MELACCI, labeled_draw="random"), "g50c", "melacci")
    np.testing.assert_array_equal(rand == TEST, strat == TEST)          # same folds
    counts = np.array([per_class(roles, LABELED) for roles in rand])
    assert (counts.sum(axis=1) == 12).all() and (counts >= 1).all()
    assert (np.array([per_class(r, VALIDATION) for r in rand]) >= 1).all()
    assert ((rand == VALIDATION).sum(axis=1) == 9).all()
    assert len({tuple(c) for c in counts}) > 1                          # not proportional
    many = make_splits(Y, dict(MELACCI, labeled_draw="random", randomizations=40), "t", "m")
    share = np.array([per_class(r, LABELED) for r in many]).sum(axis=0) / (12 * len(many))
    np.testing.assert_allclose(share, [0.2, 0.3, 0.5], atol=0.04)       # uniform over points
    with pytest.raises(SplitError, match="labeled=2 cannot cover the 3 classes"):
        make_splits(Y, dict(MELACCI, labeled=2, labeled_draw="random"), "t", "m")


def test_melacci_unlabeled_count_leaves_rest_unused():
    roles = make_splits(Y, dict(MELACCI, unlabeled=30), "t", "m")[0]
    assert (roles == UNLABELED).sum() == 30 and (roles == UNUSED).sum() == 150 - 51


def test_melacci_minimum_one_per_class_with_tiny_counts():
    y = np.repeat(np.arange(3), [8, 100, 100])
    for roles in make_splits(y, dict(MELACCI, labeled=3, validation=3), "t", "m"):
        np.testing.assert_array_equal(np.bincount(y[roles == LABELED], minlength=3), [1, 1, 1])
        np.testing.assert_array_equal(np.bincount(y[roles == VALIDATION], minlength=3), [1, 1, 1])


@pytest.mark.parametrize("spec, match", [
    ({"kind": "labels_per_class", "n": 40, "repeats": 1}, "class 0 has 40 points"),
    ({"kind": "per_class_counts", "labeled": 10, "unlabeled": 10, "test": 30}, "class 0 has 40"),
    ({"kind": "label_fraction", "fraction": 0.99}, "class 0 has 40"),
    (dict(MELACCI, labeled=100, validation=60), "exceeds the 150 training points"),
    (dict(MELACCI, labeled=2), "at least 1 per class"),
])
def test_split_errors_say_what_is_wrong(spec, match):
    with pytest.raises(SplitError, match=match):
        make_splits(Y, spec, "t", "bad")


def test_melacci_class_too_small_for_folds():
    y = np.r_[np.zeros(50, int), 1]
    with pytest.raises(SplitError, match="class 1 has 1 points in the training folds"):
        make_splits(y, dict(MELACCI, labeled=2, validation=2), "t", "m")


def test_test_from_fixes_the_test_part_and_draws_before_it():
    spec = {"kind": "per_class_counts", "labeled": 4, "unlabeled": 0, "test": 0, "repeats": 3,
            "test_from": 150}
    roles = make_splits(Y, spec, "t", "tf")
    assert (roles[:, 150:] == TEST).all() and not (roles[:, :150] == TEST).any()
    for r in roles:  # 4 labeled per class, all among the first 150 points; the rest unused
        np.testing.assert_array_equal(np.bincount(Y[:150][r[:150] == LABELED], minlength=3), [4, 4, 4])
        assert (r[:150] != LABELED).sum() == (r[:150] == UNUSED).sum()
    assert len({r.tobytes() for r in roles}) == 3
    with pytest.raises(ConfigError, match="leaves no test point"):
        make_splits(Y, {**spec, "test_from": 200}, "t", "tf")
    with pytest.raises(ConfigError, match="either test_from or holdout"):
        validate_protocol({**spec, "holdout": {"fraction": 0.2, "part": "inside"}})


@pytest.mark.parametrize("spec", [
    {"kind": "nope"}, {"kind": "labels_per_class"}, {"kind": "labels_per_class", "n": 0},
    {"kind": "labels_per_class", "n": 2, "oops": 1}, {"kind": "label_fraction", "fraction": 1.5},
    {"kind": "label_fraction", "fraction": 0.1, "per_class": 1},
    {"kind": "melacci_cv", "labeled": 5},
    {"kind": "melacci_cv", "labeled": 5, "validation": 5, "labeled_draw": "uniform"},
    "labels_per_class",
])
def test_validate_protocol_rejects(spec):
    with pytest.raises(ConfigError):
        validate_protocol(spec)


def test_validate_protocol_fills_defaults():
    assert validate_protocol({"kind": "melacci_cv", "labeled": 5, "validation": 5}) == {
        "kind": "melacci_cv", "folds": 4, "randomizations": 3, "labeled": 5, "validation": 5,
        "unlabeled": None, "labeled_draw": "stratified", "holdout": None}
    assert n_splits({"kind": "melacci_cv", "labeled": 5, "validation": 5}) == 12


def test_save_load_roundtrip(tmp_path):
    spec = {"kind": "labels_per_class", "n": 2, "repeats": 3}
    roles = make_splits(Y, spec, "t", "l2")
    save_splits(tmp_path / "s.h5", roles, spec)
    np.testing.assert_array_equal(load_splits(tmp_path / "s.h5", expect_params=spec), roles)
    with pytest.raises(CacheError, match="expected"):
        load_splits(tmp_path / "s.h5", expect_params=dict(spec, n=3))


def test_holdout_parts_are_disjoint_and_the_same_for_every_protocol():
    from gssl.splits import UNUSED, holdout_mask

    y = np.repeat(np.arange(3), [40, 50, 60])
    h = {"fraction": 0.2, "part": "inside"}
    inside = make_splits(y, {"kind": "labels_per_class", "n": 2, "repeats": 4, "holdout": h}, "d", "sel")
    outside = make_splits(y, {"kind": "labels_per_class", "n": 2, "repeats": 4,
                              "holdout": {**h, "part": "outside"}}, "d", "rep")
    mask = holdout_mask(y, 0.2, "d")
    assert np.bincount(y[mask]).tolist() == [8, 10, 12]
    assert (inside[:, ~mask] == UNUSED).all() and (outside[:, mask] == UNUSED).all()
    assert ((inside[:, mask] == LABELED).sum(axis=1) == 6).all()
    assert ((outside[:, ~mask] == LABELED).sum(axis=1) == 6).all()
    # another protocol with the same fraction sees the same holdout set; another dataset does not
    other = make_splits(y, {"kind": "label_fraction", "fraction": 0.1, "repeats": 2,
                            "holdout": {**h, "part": "outside"}}, "d", "x")
    assert (other[:, mask] == UNUSED).all()
    assert not np.array_equal(holdout_mask(y, 0.2, "e"), mask)


@pytest.mark.parametrize("holdout", [{"fraction": 1.0, "part": "inside"}, {"fraction": 0.2},
                                     {"fraction": 0.2, "part": "both"}, 0.2])
def test_bad_holdout_is_refused(holdout):
    with pytest.raises(ConfigError, match="holdout"):
        make_splits(np.repeat([0, 1], 10), {"kind": "labels_per_class", "n": 1, "holdout": holdout},
                    "d", "p")
