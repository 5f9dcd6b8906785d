"""The in-memory canonical form of a dataset."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..store.hashing import array_fingerprint


@dataclass
class Dataset:
    """A labelled dataset in canonical form.

    name: registry name (views keep the parent's name and record the view in ``meta["view"]``).
    X: features (n, d): dense float ndarray (float64, or float32 for the large IDX image sets) or CSR;
       None for graph-only datasets (``20news``).
    y: int64 labels in 0..C-1; -1 marks a point without a label (a file dataset's unlabeled rows:
       in the graph, never labeled nor scored).
    classes: str array of the C class names, in label order (``classes[y[i]]`` names point i).
    W: symmetric CSR adjacency for graph-only datasets, else None.
    meta: JSON-serialisable facts (source, n_train, generator params, view, ...).
    ids: str array of the points' ids (a file's ``id:`` column, or the parent's row numbers in a
       class view that drops rows), or None: a point is named by its row number
       (:meth:`point_ids`). Not part of the fingerprint.
    """

    name: str
    X: np.ndarray | sp.csr_matrix | None
    y: np.ndarray
    classes: np.ndarray
    W: sp.csr_matrix | None = None
    meta: dict = field(default_factory=dict)
    ids: np.ndarray | None = None

    @property
    def fingerprint(self) -> str:
        """sha256 of the canonical arrays: ``array_fingerprint(X, y, W)``."""
        return array_fingerprint(self.X, self.y, self.W)

    @property
    def n_samples(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_classes(self) -> int:
        return int(len(self.classes))

    def class_counts(self) -> np.ndarray:
        """Points per class (points without a label are not counted)."""
        return np.bincount(self.y[self.y >= 0], minlength=self.n_classes)

    def point_ids(self) -> np.ndarray:
        """Each point's id as a string: the ``ids`` given, else its 0-based row number."""
        if self.ids is not None:
            return np.asarray(self.ids).astype(str)
        return np.arange(self.n_samples).astype(str)

    @property
    def id_name(self) -> str:
        """What the ids are: the file's id column's name, or ``row`` (0-based row numbers)."""
        return str(self.meta.get("id_column") or "row")
