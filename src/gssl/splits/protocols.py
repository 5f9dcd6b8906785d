"""Split protocols: the roles of every point in every split, drawn from the labels and a spec
(see :mod:`gssl.splits`)."""

from __future__ import annotations

import hashlib

import numpy as np

from ..errors import ConfigError, SplitError
from ..store.hashing import canonical_json

UNUSED, LABELED, UNLABELED, VALIDATION, TEST, UNSCORED = -1, 0, 1, 2, 3, 4
ROLE_NAMES = {UNUSED: "unused", LABELED: "labeled", UNLABELED: "unlabeled",
              VALIDATION: "validation", TEST: "test", UNSCORED: "unscored"}

_KEYS = {
    "labels_per_class": {"n": None, "repeats": 10},
    "melacci_cv": {"folds": 4, "randomizations": 3, "labeled": None, "validation": None,
                   "unlabeled": None, "labeled_draw": "stratified"},
    "per_class_counts": {"labeled": None, "unlabeled": None, "test": 0, "repeats": 5,
                         "pool": None},
    "label_fraction": {"fraction": None, "per_class": None, "repeats": 10},
    "unsupervised": {"repeats": 1},  # every point unlabeled; repeats = independent seeded trials
    "predict": {},  # one split: every labeled point labeled, every point without a label predicted
}


# melacci_cv's labeled set: proportional to the class sizes (ours), or uniformly at random among
# the training points with at least one per class (Melacci & Belkin's draw)
_LABELED_DRAWS = ("stratified", "random")


# --------------------------------------------------------------------------- seeds and specs
def seed_for(dataset: str, protocol_id: str, split_index) -> int:
    """A 63-bit seed from sha256 of (dataset, protocol_id, split_index); platform independent."""
    text = canonical_json([str(dataset), str(protocol_id), split_index])
    return int(hashlib.sha256(text.encode()).hexdigest()[:16], 16) >> 1


def _int(spec, key, minimum, allow_none=False):
    v = spec[key]
    if v is None and allow_none:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise ConfigError(f"split protocol {spec['kind']!r}: {key!r} must be an integer "
                          f">= {minimum}"
                          f"{' or null' if allow_none else ''}, got {v!r}")
    return int(v)


def validate_protocol(spec: dict) -> dict:
    """Check a protocol entry; return it with defaults filled in. Raises ConfigError."""
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ConfigError(f"split protocol must be a mapping with a 'kind' key (one of "
                          f"{sorted(_KEYS)}), got {spec!r}")
    kind = spec["kind"]
    if kind not in _KEYS:
        raise ConfigError(f"unknown split protocol kind {kind!r}; known kinds: {sorted(_KEYS)}")
    if kind == "predict" and spec.get("holdout", None) is None:  # (a validated spec: holdout None)
        spec = {k: v for k, v in spec.items() if k != "holdout"}
    extra = set() if kind == "predict" else {"holdout", "test_from", "active"}  # predict scores nothing
    unknown = sorted(set(spec) - set(_KEYS[kind]) - {"kind"} - extra)
    if unknown:
        raise ConfigError(f"split protocol {kind!r}: unknown keys {unknown}; allowed: "
                          f"{sorted(_KEYS[kind]) or 'none'}")
    out = {"kind": kind, **_KEYS[kind], "holdout": None, **spec}
    _validate_holdout(out)
    if "active" in out:  # the start sets of an active-learning loop (gssl.active.protocol)
        from ..active.protocol import validate_protocol_active

        out["active"] = validate_protocol_active(out["active"])
    if "test_from" in out:  # only when given: the defaults (and so the cached splits' ids) stay
        _int(out, "test_from", 1)
        if out["holdout"] is not None:
            raise ConfigError(f"split protocol {kind!r}: give either test_from or holdout, not both")
    if kind == "labels_per_class":
        _int(out, "n", 1), _int(out, "repeats", 1)
    elif kind == "melacci_cv":
        _int(out, "folds", 2), _int(out, "randomizations", 1)
        _int(out, "labeled", 1), _int(out, "validation", 1), _int(out, "unlabeled", 0, True)
        if out["labeled_draw"] not in _LABELED_DRAWS:
            raise ConfigError(f"split protocol 'melacci_cv': 'labeled_draw' must be one of "
                              f"{list(_LABELED_DRAWS)}, got {out['labeled_draw']!r}")
    elif kind == "per_class_counts":
        _int(out, "labeled", 1), _int(out, "unlabeled", 0, True), _int(out, "test", 0, True)
        if out["unlabeled"] is None and out["test"] is None:
            raise ConfigError("split protocol 'per_class_counts': unlabeled and test cannot both be "
                              "null (the rest of each class goes to one of them)")
        _int(out, "repeats", 1), _int(out, "pool", 1, True)
    elif kind == "unsupervised":
        _int(out, "repeats", 1)
    elif kind == "predict":
        pass  # no keys
    else:
        _validate_fraction(out)
    return out


HOLDOUT_PARTS = ("inside", "outside")


def _validate_holdout(out: dict) -> None:
    h = out["holdout"]
    if h is None:
        return
    ok = (isinstance(h, dict) and set(h) == {"fraction", "part"} and h["part"] in HOLDOUT_PARTS
          and not isinstance(h["fraction"], bool) and isinstance(h["fraction"], (int, float))
          and 0 < h["fraction"] < 1)
    if not ok:
        raise ConfigError(f"split protocol {out['kind']!r}: 'holdout' must be a mapping "
                          f"{{fraction: f (0 < f < 1), part: inside | outside}}, got {h!r}")


def holdout_mask(y, fraction: float, dataset: str) -> np.ndarray:
    """The dataset's holdout set: a seeded ``fraction`` of each class (at least one point).

    It depends on the labels, the dataset id and the fraction only, so every protocol of the
    dataset naming the same fraction sees the same set: selection protocols (``part: inside``) draw and score inside it, reported
    protocols (``part: outside``) leave it unused, and no label is shared between the two.
    """
    _, codes = _encode(y)
    rng = np.random.default_rng(seed_for(dataset, "holdout", float(fraction)))
    rank = _within_class_rank(codes, rng)
    sizes = np.bincount(codes)
    take = np.maximum(1, np.floor(fraction * sizes).astype(np.int64))
    return rank < take[codes]


def _validate_fraction(out: dict) -> None:
    _int(out, "repeats", 1)
    frac, per = out["fraction"], out["per_class"]
    if (frac is None) == (per is None):
        raise ConfigError("split protocol 'label_fraction': give exactly one of 'fraction' "
                          f"(0 < f < 1) or 'per_class' (integer >= 1), got fraction={frac!r}, "
                          f"per_class={per!r}")
    if per is not None:
        _int(out, "per_class", 1)
    elif isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac < 1:
        raise ConfigError(f"split protocol 'label_fraction': 'fraction' must be in (0, 1), "
                          f"got {frac!r}")


def n_splits(spec: dict) -> int:
    spec = validate_protocol(spec)
    if spec["kind"] == "predict":
        return 1
    if spec["kind"] == "melacci_cv":
        return spec["folds"] * spec["randomizations"]
    return spec["repeats"]


# --------------------------------------------------------------------------- sampling core
def _within_class_rank(codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rank of each point in a uniformly random order of its class (0 = first)."""
    order = np.lexsort((rng.random(codes.size), codes))
    starts = np.searchsorted(codes[order], codes[order], side="left")
    rank = np.empty(codes.size, dtype=np.int64)
    rank[order] = np.arange(codes.size) - starts
    return rank


def _assign(codes: np.ndarray, counts: np.ndarray, roles: tuple, rng) -> np.ndarray:
    """Give the first counts[c, 0] points (random order) of class c roles[0], the next roles[1]...

    A role count of -1 means "all remaining points of the class"; points beyond the counts: UNUSED.
    """
    sizes = np.bincount(codes, minlength=counts.shape[0])
    counts = np.where(counts < 0, sizes[:, None] - counts.clip(0).sum(1, keepdims=True), counts)
    bounds = np.cumsum(counts, axis=1)
    rank = _within_class_rank(codes, rng)
    slot = (bounds[codes] <= rank[:, None]).sum(axis=1)
    table = np.append(np.asarray(roles, dtype=np.int8), np.int8(UNUSED))
    return table[slot]


def _allocate(total: int, avail: np.ndarray, minimum: int, what: str) -> np.ndarray:
    """Split ``total`` over classes proportionally to ``avail``, at least ``minimum`` each.

    Largest-remainder rounding; classes raised to the minimum are paid for by the classes most
    above their quota. Ties go to the lower class index, so the result is deterministic.
    """
    if total < minimum * avail.size or (avail < minimum).any() or total > avail.sum():
        raise SplitError(f"cannot draw {total} {what} points with at least {minimum} per class "
                         f"from classes with {avail.tolist()} available points")
    quota = total * avail / max(avail.sum(), 1)
    counts = np.floor(quota).astype(np.int64)
    counts[np.argsort(-(quota - counts), kind="stable")[:total - counts.sum()]] += 1
    counts = np.maximum(counts, minimum)
    for _ in range(counts.sum() - total):  # at most C * minimum steps
        over = np.where(counts > minimum, counts - quota, -np.inf)
        counts[np.argmax(over)] -= 1
    return counts


def _encode(y) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0 or y.dtype.kind not in "iu":
        raise SplitError(f"labels must be a non-empty 1-D integer array, got dtype {y.dtype} and "
                         f"shape {y.shape}")
    classes, codes = np.unique(y, return_inverse=True)
    return classes, codes.ravel()


# --------------------------------------------------------------------------- protocols
def _per_class_splits(y, counts_fn, roles, repeats, dataset, protocol_id, only=None) -> np.ndarray:
    classes, codes = _encode(y)
    sizes = np.bincount(codes)
    counts = counts_fn(classes, sizes)
    return np.stack([_assign(codes, counts, roles, np.random.default_rng(
        seed_for(dataset, protocol_id, s))) for s in (range(repeats) if only is None else only)])


def _need(classes, sizes, need, what, where=""):
    short = np.flatnonzero(sizes < need)
    if short.size:
        c = short[0]
        at_least = need[c] if np.ndim(need) else need
        err = SplitError(f"class {classes[c]} has {sizes[c]} points{where} but {what} needs "
                         f"at least {at_least} per class "
                         f"({short.size} classes are short); lower the counts or drop such "
                         f"classes (gssl.datasets.select)")
        err.short_classes = classes[short]  # (their labels y: a config check names them)
        raise err


def _labels_per_class(y, spec, dataset, pid, only=None):
    def counts(classes, sizes):
        _need(classes, sizes, spec["n"] + 1, f"labels_per_class n={spec['n']} (+1 unlabeled)")
        return np.column_stack([np.full(sizes.size, spec["n"]), np.full(sizes.size, -1)])
    return _per_class_splits(y, counts, (LABELED, UNLABELED), spec["repeats"], dataset, pid, only)


def _label_fraction(y, spec, dataset, pid, only=None):
    def counts(classes, sizes):
        if spec["per_class"] is not None:
            k = np.full(sizes.size, spec["per_class"])
        else:  # round half up, at least one label per class
            k = np.maximum(1, np.floor(spec["fraction"] * sizes + 0.5).astype(np.int64))
        _need(classes, sizes, k + 1, "label_fraction (labels + 1 unlabeled)")
        return np.column_stack([k, np.full(sizes.size, -1)])
    return _per_class_splits(y, counts, (LABELED, UNLABELED), spec["repeats"], dataset, pid, only)


def _per_class_counts(y, spec, dataset, pid, only=None):
    def counts(classes, sizes):
        lab, test = spec["labeled"], spec["test"]
        unl = spec["unlabeled"]
        need = lab + (1 if test is None else test) + (1 if unl is None else unl)
        _need(classes, sizes, need, f"per_class_counts (labeled={lab}, unlabeled={unl}, "
                                    f"test={test})")
        unl_col = sizes - lab - (test or 0) if unl is None else np.full(sizes.size, unl)
        test_col = sizes - lab - unl_col if test is None else np.full(sizes.size, test)  # null: the rest
        return np.column_stack([np.full(sizes.size, lab), test_col, unl_col])
    if spec["pool"] is None:
        return _per_class_splits(y, counts, (LABELED, TEST, UNLABELED), spec["repeats"], dataset,
                                 pid, only)
    # draw only among the first `pool` points of each class in dataset order (the sampling of
    # Tran et al.'s released USPS script); the other points are UNUSED
    y = np.asarray(y)
    _, codes = _encode(y)
    order = np.argsort(codes, kind="stable")
    rank = np.empty(codes.size, dtype=np.int64)
    rank[order] = np.arange(codes.size) - np.searchsorted(codes[order], codes[order])
    inside = rank < spec["pool"]
    roles = np.full((spec["repeats"] if only is None else len(only), y.size), UNUSED, dtype=np.int8)
    roles[:, inside] = _per_class_splits(y[inside], counts, (LABELED, TEST, UNLABELED),
                                         spec["repeats"], dataset, pid, only)
    return roles


def _melacci_cv(y, spec, dataset, pid, only=None):
    """Per randomization: stratified folds; per fold: that fold is TEST, the rest L/V/U.

    The fold partition of randomization r is seeded by (dataset, protocol_id + "/folds", r);
    the L/V/U draw of split r * folds + f by (dataset, protocol_id, r * folds + f).
    """
    classes, codes = _encode(y)
    folds = spec["folds"]
    out = {}  # split index -> its roles
    for r in range(spec["randomizations"]):
        if only is not None and not any(r * folds + f in only for f in range(folds)):
            continue
        rng = np.random.default_rng(seed_for(dataset, f"{pid}/folds", r))
        rank = _within_class_rank(codes, rng)
        # deal each class round-robin over the folds from a random start: balanced, stratified
        # (class c starts where class c-1 stopped, so fold sizes differ by at most one overall)
        sizes = np.bincount(codes)
        start = np.random.default_rng(seed_for(dataset, f"{pid}/offset", r)).integers(folds)
        fold = (rank + start + (np.cumsum(sizes) - sizes)[codes]) % folds
        for f in range(folds):
            if only is not None and r * folds + f not in only:
                continue
            out[r * folds + f] = _melacci_fold(codes, classes, fold != f, spec, r * folds + f, dataset, pid)
    return np.stack([out[s] for s in (sorted(out) if only is None else only)])


def _melacci_fold(codes, classes, train, spec, split, dataset, pid):
    n_train = int(train.sum())
    lab, val, unl = spec["labeled"], spec["validation"], spec["unlabeled"]
    want = lab + val + (unl or 0)
    if want > n_train:
        raise SplitError(f"melacci_cv split {split}: labeled={lab} + validation={val} + "
                         f"unlabeled={unl or 0} = {want} exceeds the {n_train} training points of "
                         f"the fold; lower the counts or use fewer folds")
    avail = np.bincount(codes[train], minlength=classes.size)
    _need(classes, avail, np.full(classes.size, 2),
          f"melacci_cv split {split} (1 labeled + 1 validation)", " in the training folds")
    rng = np.random.default_rng(seed_for(dataset, pid, split))
    roles = np.full(codes.size, TEST, dtype=np.int8)
    if spec["labeled_draw"] == "random":
        labeled = _random_labeled(codes, np.flatnonzero(train), lab, classes.size, rng, split)
        roles[labeled] = LABELED
        train = train & (roles != LABELED)
        avail = np.bincount(codes[train], minlength=classes.size)
        n_lab = np.zeros(classes.size, dtype=np.int64)
    else:
        n_lab = _allocate(lab, avail, 1, f"melacci_cv split {split} labeled")
    n_val = _allocate(val, avail - n_lab, 1, f"melacci_cv split {split} validation")
    rest = avail - n_lab - n_val
    n_unl = rest if unl is None else _allocate(unl, rest, 0, f"melacci_cv split {split} unlabeled")
    roles[train] = _assign(codes[train], np.column_stack([n_lab, n_val, n_unl]),
                           (LABELED, VALIDATION, UNLABELED), rng)
    return roles


def _random_labeled(codes, pool, n, n_classes, rng, split, attempts=1000):
    """n points drawn uniformly from ``pool``, redrawn until every class has one (rejection
    sampling: the draw is uniform among the sets that cover every class, as the paper's)."""
    if n < n_classes:
        raise SplitError(f"melacci_cv split {split}: labeled={n} cannot cover the {n_classes} "
                         f"classes; raise 'labeled' to at least {n_classes}")
    for _ in range(attempts):
        pick = rng.choice(pool, n, replace=False)
        if np.unique(codes[pick]).size == n_classes:
            return pick
    raise SplitError(f"melacci_cv split {split}: {attempts} random draws of {n} labeled points "
                     f"never covered all {n_classes} classes; raise 'labeled' or use "
                     f"labeled_draw: stratified")


def _unsupervised(y, spec, dataset, pid, only=None):
    return np.full((spec["repeats"] if only is None else len(only), np.size(y)), UNLABELED, dtype=np.int8)


_PROTOCOLS = {"labels_per_class": _labels_per_class, "melacci_cv": _melacci_cv,
              "per_class_counts": _per_class_counts, "label_fraction": _label_fraction,
              "unsupervised": _unsupervised, "predict": None}  # predict: predict_roles
PROTOCOL_KINDS = tuple(_PROTOCOLS)  # the protocol kinds a config may name (the schema's enum)


def is_predict(spec: dict) -> bool:
    """Whether a protocol predicts the rows without a label (kind predict) instead of scoring."""
    return isinstance(spec, dict) and spec.get("kind") == "predict"


def predict_roles(y, dataset: str = "the dataset") -> np.ndarray:
    """The one split of protocol ``predict``: every labeled point LABELED, every point without a
    label (-1) UNSCORED (predicted, never scored). SplitError where no point lacks a label."""
    y = np.asarray(y)
    if y.ndim != 1 or y.dtype.kind not in "iu":
        raise SplitError(f"labels must be a 1-D integer array, got dtype {y.dtype} and shape {y.shape}")
    if not (y < 0).any():
        raise SplitError(f"protocol kind predict predicts the rows without a label, and {dataset} "
                         f"has none (all {y.size} rows are labeled): leave the label cell empty on "
                         f"the rows to predict, or use a scoring protocol (labels_per_class, ...)")
    if np.unique(y[y >= 0]).size < 2:
        raise SplitError(f"protocol kind predict needs labeled rows of at least 2 classes in {dataset}")
    return np.where(y >= 0, LABELED, UNSCORED).astype(np.int8)[None, :]


def make_splits(y, spec: dict, dataset: str, protocol_id: str, only=None) -> np.ndarray:
    """Roles (int8, shape (n_splits, n)) of every point in every split of the protocol; ``only``:
    the split indices to draw (in that order), each as the whole protocol draws it (every split
    has its own seed: drawing some costs only those)."""
    spec = validate_protocol(spec)
    y = np.asarray(y)
    if only is not None:
        only = [int(s) for s in only]
        bad = [s for s in only if not 0 <= s < n_splits(spec)]
        if bad:
            raise ConfigError(f"split {bad[0]} out of range: the protocol draws {n_splits(spec)} splits")
    if spec["kind"] == "predict":
        return predict_roles(y, f"dataset {dataset!r}")
    rows = n_splits(spec) if only is None else len(only)
    if y.ndim == 1 and y.dtype.kind in "iu" and (y < 0).any():  # points without a label
        known = y >= 0
        if spec.get("test_from") is not None:  # a row of the data: its place among the labeled rows
            spec = {**spec, "test_from": int(known[:spec["test_from"]].sum())}
        roles = np.full((rows, y.size), UNSCORED, dtype=np.int8)
        roles[:, known] = make_splits(y[known], spec, dataset, protocol_id, only)
        return roles
    if spec.get("test_from") is not None:  # a fixed test part (e.g. USPS's 2,007 test images)
        t = spec["test_from"]
        if t >= y.size:
            raise ConfigError(f"split protocol {spec['kind']!r}: test_from = {t} leaves no test "
                              f"point (the dataset has {y.size} points)")
        roles = np.full((rows, y.size), TEST, dtype=np.int8)
        roles[:, :t] = _PROTOCOLS[spec["kind"]](y[:t], spec, dataset, protocol_id, only)
        return roles
    h = spec["holdout"]
    if h is None:
        return _PROTOCOLS[spec["kind"]](y, spec, dataset, protocol_id, only)
    mask = holdout_mask(y, h["fraction"], dataset)
    part = mask if h["part"] == "inside" else ~mask
    roles = np.full((rows, y.size), UNUSED, dtype=np.int8)
    roles[:, part] = _PROTOCOLS[spec["kind"]](y[part], spec, dataset, protocol_id, only)
    return roles


def with_test_part(spec: dict, test_from: int | None, dataset: str, protocol_id: str) -> dict:
    """The protocol as it runs on a dataset with a test file (``test:`` beside its data file, the
    test rows from row ``test_from`` on): it draws its splits from the training rows and scores on
    every test row (its ``test_from``). A protocol that sets its own test part (test_from,
    holdout) is refused on such a dataset (ConfigError)."""
    if test_from is None:
        return spec
    own = [k for k in ("test_from", "holdout") if spec.get(k) is not None]
    if own:
        raise ConfigError(f"protocol {protocol_id!r} sets {own[0]}, but dataset {dataset!r} has a test file "
                          f"(test:, its rows from {test_from} on), which is the test part of every "
                          f"protocol on it; drop {own[0]} from the protocol, or test: from the dataset")
    return {**spec, "test_from": int(test_from)}


def protocol_label(spec: dict) -> str:
    """A protocol as a table's column names it: "3/class", "1.0%", or its kind."""
    kind = spec.get("kind")
    if kind == "labels_per_class":
        return f"{spec['n']}/class"
    if kind == "label_fraction":
        return f"{spec['fraction']:.1%}" if "fraction" in spec else f"{spec['per_class']}/class"
    if kind == "per_class_counts":
        return f"{spec['labeled']}/class"
    return kind or "?"


def role_counts(roles: np.ndarray) -> dict:
    """{role name: count} of one split (for logs and reports)."""
    return {name: int((roles == r).sum()) for r, name in ROLE_NAMES.items()}
