"""Split protocols: which points are labeled, unlabeled, validation or test in each split.

Every split draws from its own generator seeded by ``seed_for(dataset, protocol_id, split_index)``
(sha256 of those names), so a split is the same on every machine and adding splits changes none
of the existing ones. A split is an int8 vector of roles over the dataset's points:
LABELED=0, UNLABELED=1, VALIDATION=2, TEST=3, UNUSED=-1 (points a protocol with fixed counts
leaves out; they are neither labeled nor scored) and UNSCORED=4 (points the data gives no label,
label -1: fitted as unlabeled graph nodes in every split, never labeled nor scored; the protocol
draws among the labeled points only). Protocol ``predict`` has one split that labels every labeled
point and predicts those without a label (UNSCORED): the predictions for a researcher's own
unlabeled rows.

Sampling is stratified: a point's role is decided by its rank in a random order within its class,
so per-class counts are exact and no Python loop runs over points.
"""

from .cache import SEED_RULE, check_rederived, load_splits, save_splits
from .protocols import (LABELED, PROTOCOL_KINDS, ROLE_NAMES, TEST, UNLABELED, UNSCORED, UNUSED,
                        VALIDATION, holdout_mask, is_predict, make_splits, n_splits, predict_roles,
                        protocol_label, role_counts, seed_for, validate_protocol, with_test_part)

__all__ = ["LABELED", "PROTOCOL_KINDS", "ROLE_NAMES", "SEED_RULE", "TEST", "UNLABELED", "UNSCORED",
           "UNUSED", "VALIDATION", "check_rederived", "holdout_mask", "is_predict", "load_splits",
           "make_splits", "n_splits", "predict_roles", "protocol_label", "role_counts", "save_splits", "seed_for",
           "validate_protocol", "with_test_part"]
