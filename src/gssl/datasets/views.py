"""Class-subset views: keep some classes, or merge groups of classes into new ones."""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .dataset import Dataset


def _class_index(ds: Dataset, c) -> int:
    """A class given as an int (label index) or a str (class name) -> label index."""
    if isinstance(c, (str, np.str_)):
        hits = np.flatnonzero(ds.classes == c)
        if hits.size == 0:
            raise ConfigError(f"dataset {ds.name!r} has no class named {c!r}; its classes: "
                              f"{[str(x) for x in ds.classes]} (a config's classes: / groups: name "
                              f"classes; class_indices: / group_indices: take label indices 0..C-1)")
        return int(hits[0])
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)) or not 0 <= c < len(ds.classes):
        raise ConfigError(f"dataset {ds.name!r}: class {c!r} is neither a label index in "
                          f"0..{len(ds.classes) - 1} nor a class name {list(ds.classes)}")
    return int(c)


def class_view(entry: dict) -> dict:
    """A dataset entry's class view as :func:`select` arguments. ``classes`` and
    ``groups`` hold class names as the dataset calls them (a number is its name: COIL20's objects
    are "1".."20"); ``class_indices`` and ``group_indices`` hold label indices 0..C-1."""
    def names(items):
        return [str(c) for c in items]

    if entry.get("classes"):
        return {"classes": names(entry["classes"])}
    if entry.get("groups"):
        return {"groups": [names(g) for g in entry["groups"]]}
    if entry.get("class_indices"):
        return {"classes": list(entry["class_indices"])}
    if entry.get("group_indices"):
        return {"groups": [list(g) for g in entry["group_indices"]]}
    return {}


def select(ds: Dataset, classes=None, groups=None) -> Dataset:
    """A view of ``ds`` restricted to some classes.

    classes=[4, 9]: keep those classes, relabelled 0.. in the order given.
    groups=[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]: new class j = union of group j (name "0+1+2+3+4").
    Classes are label indices (ints) or class names (strs). Points of other classes are dropped
    (rows of X, rows and columns of W); points without a label (-1) are kept; point order is kept, and each point's id
    (the parent's ``ids``, else its row number in the parent). ``meta["view"]`` records the view and
    ``meta["parent_n_samples"]`` the size of the parent.
    """
    if (classes is None) == (groups is None):
        raise ConfigError("select: give exactly one of classes=[...] or groups=[[...], ...]")
    if classes is not None:
        groups = [[c] for c in classes]
    groups = [[_class_index(ds, c) for c in g] for g in groups]
    flat = [c for g in groups for c in g]
    if not groups or any(not g for g in groups) or len(set(flat)) != len(flat):
        raise ConfigError(f"select: groups must be non-empty and disjoint, got {groups}")
    new_label = np.full(len(ds.classes), -1, dtype=np.int64)
    for j, g in enumerate(groups):
        new_label[g] = j
    y = np.where(ds.y >= 0, new_label[ds.y], -1)
    keep = np.flatnonzero((y >= 0) | (ds.y < 0))  # points without a label stay in the graph
    X = None if ds.X is None else ds.X[keep]
    W = None if ds.W is None else ds.W[keep][:, keep].tocsr()
    names = np.asarray(["+".join(str(ds.classes[c]) for c in g) for g in groups])
    view = {"classes": [int(c) for c in flat]} if classes is not None else {"groups": groups}
    meta = {**ds.meta, "view": view, "parent_n_samples": ds.n_samples}
    meta.pop("n_train", None)  # the train/test boundary no longer lies at a fixed row
    ids = ds.ids if ds.ids is not None or keep.size == ds.n_samples else ds.point_ids()
    return Dataset(ds.name, X, y[keep], names, W=W, meta=meta,
                   ids=None if ids is None else np.asarray(ids)[keep])  # the parent's ids, or rows
