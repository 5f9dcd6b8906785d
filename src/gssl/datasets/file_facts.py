"""What planning needs of a ``source: file`` dataset, read once per content of the file.

The config check before any job (:mod:`gssl.pipeline.preflight`) and the dataset job's params
(its files' sha256) need a data file's labels, class names, feature count and checksum, not its
features. Reading a 100,000 x 50 CSV takes seconds and hundreds of MB, and ``snakemake`` plans
(and ``snakemake -n`` dry-runs) in a new process each time; so what the read found is kept in a
small file under the results folder (:data:`gssl.pipeline.paths.PLANNING`), one per dataset
entry, and used again while the data files keep their size and modification time (and the gssl
code that reads them is unchanged). An edit of a file changes its modification time: the next
plan reads it again.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .dataset import Dataset
from .files import FileSource

# the modules whose code decides what a read finds (labels, classes, refusals)
READER_MODULES = ("gssl.datasets.files", "gssl.datasets.file_readers", "gssl.datasets.tables",
                  "gssl.datasets.labels", "gssl.datasets.dataset", "gssl.datasets.file_facts")
_FORMAT = 1  # of the stored file


@dataclass(frozen=True)
class FileFacts:
    """A data file's labels (-1: a row without one), class names, feature count (None: a
    graph-only file), whether its features are sparse, and each file's sha256."""

    y: np.ndarray
    classes: np.ndarray
    n_features: int | None
    sparse: bool
    sha256: dict
    test_from: int | None = None  # the first row of a test file (test:), after the training rows

    def dataset(self, name: str = "") -> Dataset:
        """A dataset without features or graph holding these labels: enough for class views
        (:func:`gssl.datasets.select`) and splits."""
        meta = {} if self.test_from is None else {"test_from": self.test_from}
        return Dataset(name, None, self.y, self.classes, meta=meta)


_PROCESS: dict = {}  # key -> FileFacts: a process asks more than once (the config is checked twice)


def file_facts(src: FileSource, name: str = "", cache_dir=None) -> FileFacts:
    """The facts of ``src``'s files: from this process's memory, else from ``cache_dir`` (where
    they were stored by an earlier process, the files unchanged since), else read (ConfigError or
    DatasetError as :meth:`FileSource.read` gives them) and stored there. Without ``cache_dir``
    nothing is stored on disk."""
    src.check_exists()
    key = _key(src)
    if key in _PROCESS:
        return _PROCESS[key]
    store = None if cache_dir is None else Path(cache_dir) / f"{_entry_hash(src)}.npz"
    facts = _load(store, key) if store is not None else None
    if facts is None:
        ds = src.read(name)
        X = ds.X
        facts = FileFacts(np.asarray(ds.y, dtype=np.int64), np.asarray(ds.classes).astype(str),
                          None if X is None else int(X.shape[1]),
                          bool(X is not None and sp.issparse(X)),
                          dict(ds.meta["files"]), ds.meta.get("test_from"))
        if store is not None:
            _save(store, key, facts)
    _PROCESS[key] = facts
    return facts


def _entry_hash(src: FileSource) -> str:
    """Names a dataset entry's stored facts: its files' absolute paths and how they are read."""
    from ..store.hashing import params_hash

    return params_hash(_entry(src), 24)


def _entry(src: FileSource) -> dict:
    return {"files": [str(p.resolve()) for p in src.files], "format": src.format, "label": src.label,
            "features": list(src.features) if src.features else None, "id": src.id,
            "keys": dict(src.keys), "sep": src.sep, "test": str(src.test.resolve()) if src.test else None}


def _key(src: FileSource) -> str:
    """The entry, each file's size and modification time (ns), and the readers' code."""
    from ..store.hashing import canonical_json

    stats = [[p.stat().st_size, p.stat().st_mtime_ns] for p in src.files]
    return canonical_json({"entry": _entry(src), "stat": stats, "code": _reader_code(), "format": _FORMAT})


@functools.cache
def _reader_code() -> str:
    from ..store.hashing import module_source_hash

    return module_source_hash(*READER_MODULES)


def _load(store: Path, key: str) -> FileFacts | None:
    """The stored facts when they were stored under ``key``; None when absent, stale or
    unreadable (then the file is read again and the store rewritten)."""
    try:
        with np.load(store, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            if meta.get("key") != key:
                return None
            return FileFacts(f["y"].astype(np.int64), f["classes"].astype(str), meta["n_features"],
                             meta["sparse"], meta["sha256"], meta.get("test_from"))
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        return None


def _save(store: Path, key: str, facts: FileFacts) -> None:
    from ..store.h5io import atomic_path

    meta = {"key": key, "n_features": facts.n_features, "sparse": facts.sparse, "sha256": facts.sha256,
            "test_from": facts.test_from}
    try:
        with atomic_path(store) as tmp, open(tmp, "wb") as fh:
            np.savez_compressed(fh, y=facts.y.astype(np.int32), classes=facts.classes,
                                meta=np.asarray(json.dumps(meta)))
    except OSError:  # a read-only results folder: planning reads the file, as before
        pass
