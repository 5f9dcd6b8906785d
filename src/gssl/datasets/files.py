"""A researcher's own data: ``source: file`` config entries read into a canonical :class:`Dataset`.

Formats (from the extension, or ``format:``):

- ``csv`` / ``tsv`` (also gzip-compressed: ``.csv.gz``, ``.tsv.gz``): a header row of distinct
  names; ``label:`` names the label column (name or 0-based index), ``features:`` the feature
  columns (default: every other column but ``id:``), ``sep:`` the separator where it is not the
  format's (``,`` / tab).
- ``npz``, ``h5`` (HDF5), ``mat`` (MATLAB v5 and v7.3): arrays under ``keys:`` (default ``X``,
  ``y``, ``W``); with W and no X the dataset is graph-only.
- ``npy``: ``path`` holds X, ``labels:`` names a second ``.npy`` (or text) file with y.
- ``svmlight`` / ``libsvm``: sparse features and numeric labels (scikit-learn's reader).
- ``mtx``: a Matrix Market weight matrix W (graph-only) and ``labels:`` a file of one label per line.

Labels may be numbers or strings; the class names are kept (numbers sorted numerically, strings
alphabetically). A row without a label (an empty cell, NaN) stays in the data and its graph as an
unlabeled point (label -1) that no split labels or scores. Every problem is a DatasetError naming
the file, the line or column, and the fix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, DatasetError
from ..store.hashing import file_sha256
from .dataset import Dataset
from .file_readers import parser_failure, read_arrays, read_mtx, read_npy, read_svmlight
from .tables import read_table

FORMATS = ("csv", "tsv", "npz", "npy", "h5", "mat", "svmlight", "mtx")
_EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".npz": "npz", ".npy": "npy", ".h5": "h5",
               ".hdf5": "h5", ".mat": "mat", ".svm": "svmlight", ".svmlight": "svmlight",
               ".libsvm": "svmlight", ".mtx": "mtx"}
_ALIASES = {"libsvm": "svmlight", "hdf5": "h5"}
_SPREADSHEETS = (".xlsx", ".xls", ".xlsm", ".ods", ".numbers")
DEFAULT_KEYS = {"X": "X", "y": "y", "W": "W"}
_TABLE = ("csv", "tsv")
_ARRAYS = ("npz", "h5", "mat")


def resolve_path(path) -> Path:
    """``~`` and environment variables expanded; relative paths are relative to the working
    directory (where snakemake runs)."""
    return Path(os.path.expandvars(os.path.expanduser(str(path))))


@dataclass(frozen=True)
class FileSource:
    """A validated ``source: file`` entry (see the module docstring)."""

    path: Path
    format: str
    label: str | int | None = None
    features: tuple | None = None
    id: str | int | None = None
    keys: tuple = tuple(DEFAULT_KEYS.items())
    labels: Path | None = None
    sep: str | None = None
    test: Path | None = None

    @classmethod
    def from_entry(cls, entry: dict, where: str = "dataset") -> FileSource:
        if not entry.get("path"):
            raise ConfigError(f"{where}: source: file needs path: (the data file, relative to the "
                              f"working directory or absolute)")
        path = resolve_path(entry["path"])
        if path.suffix.lower() in _SPREADSHEETS:
            raise ConfigError(f"{where}: {path} is a spreadsheet, which gssl does not read: export it "
                              f"as CSV (one header row, one row per point) and point path: at the "
                              f".csv file")
        fmt = _ALIASES.get(entry.get("format"), entry.get("format")) or _EXTENSIONS.get(_suffix(path))
        if fmt is None:
            raise ConfigError(f"{where}: cannot tell the format of {path} from its extension; add "
                              f"format: (one of {', '.join(FORMATS)})")
        if fmt not in FORMATS:
            raise ConfigError(f"{where}: unknown format {fmt!r}; known: {', '.join(FORMATS)}")
        labels = resolve_path(entry["labels"]) if entry.get("labels") else None
        if fmt in ("npy", "mtx") and labels is None:
            raise ConfigError(f"{where}: a .{fmt} file holds no labels; add labels: (a file with one "
                              f"label per point: .npy, or text with one label per line)")
        if fmt in _TABLE and entry.get("label") is None:
            raise ConfigError(f"{where}: a {fmt.upper()} file needs label: (the label column's name "
                              f"or 0-based index)")
        misplaced = [k for k in ("label", "features", "id", "sep", "test") if k in entry and fmt not in _TABLE]
        misplaced += [k for k in ("keys",) if k in entry and fmt not in _ARRAYS]
        if misplaced:
            raise ConfigError(f"{where}: {misplaced} apply to other formats than {fmt} (label/features/id/sep/test: "
                              f"csv and tsv; keys: npz, h5 and mat)")
        test = resolve_path(entry["test"]) if entry.get("test") else None
        view = [k for k in ("classes", "groups", "class_indices", "group_indices") if entry.get(k)]
        if test is not None and view:
            raise ConfigError(f"{where}: a test file (test:) with a class view ({view[0]}:) is not "
                              f"supported: keep only those classes' rows in both files, or drop test: "
                              f"and give the protocol test_from: on one file")
        sep = entry.get("sep")
        if sep is not None and (not isinstance(sep, str) or len(sep) != 1 or sep in "\"\r\n"):
            raise ConfigError(f"{where}: sep: must be one character other than a quote or a line "
                              f"break (e.g. ';'), got {sep!r}")
        keys = {**DEFAULT_KEYS, **(entry.get("keys") or {})}
        features = tuple(entry["features"]) if entry.get("features") is not None else None
        return cls(path, fmt, entry.get("label"), features, entry.get("id"), tuple(keys.items()), labels,
                   sep, test)

    @property
    def files(self) -> list[Path]:
        """The files the dataset is read from (the inputs of its dataset job)."""
        return ([self.path] + ([self.labels] if self.labels is not None else [])
                + ([self.test] if self.test is not None else []))

    def identity(self, sha256: dict | None = None) -> dict:
        """What defines the data: each file's sha256 (an edit changes it; ``sha256``: those
        already computed, by path) and how it is read."""
        self.check_exists()
        known = sha256 or {}
        return {"files": {str(p): known.get(str(p)) or file_sha256(p) for p in self.files}, "format": self.format,
                "label": self.label, "features": list(self.features) if self.features else None,
                "id": self.id, "keys": dict(self.keys), **({"sep": self.sep} if self.sep else {}),
                **({"test": str(self.test)} if self.test else {})}

    def check_exists(self) -> None:
        """Each file a regular file: a missing one, a directory, a FIFO (reading it would wait for
        a writer) or a device is named as what it is."""
        for p in self.files:
            what = _not_a_file(p)
            if what:
                raise DatasetError(f"data file {p} {what} (working directory {Path.cwd()}); "
                                   f"fix path: in the config (relative paths are relative to where "
                                   f"snakemake runs)")

    def read(self, name: str = "") -> Dataset:
        """The dataset; any failure of a reader (a parser's own exception, memory) is a
        DatasetError naming the file and, where the parser gives it, the line, never the
        file's content."""
        self.check_exists()
        reader = {"csv": read_table, "tsv": read_table, "npz": read_arrays, "h5": read_arrays,
                  "mat": read_arrays, "npy": read_npy, "svmlight": read_svmlight, "mtx": read_mtx}
        try:
            X, y, classes, W, extra = reader[self.format](self)
        except (DatasetError, ConfigError):
            raise
        except MemoryError:
            raise DatasetError(f"{self.path}: reading it as {self.format} ran out of memory; check the "
                               f"sizes it declares (or give a smaller file)") from None
        except Exception as exc:  # noqa: BLE001 - a parser's own: named, its text (file content) left out
            raise DatasetError(f"{self.path}: cannot be read as {self.format}: {parser_failure(exc)}") from None
        ids = extra.pop("ids", None)  # a table's id: column (not meta: one string per point)
        ds = Dataset(name, X, y, classes, W=W, ids=ids, meta={
            "source": "file", "format": self.format, "n_unlabeled_rows": int((y < 0).sum()),
            "files": {str(p): file_sha256(p) for p in self.files}, **extra})
        _check_dataset(ds, self.path)
        return ds


def _not_a_file(path: Path) -> str | None:
    """What ``path`` is, where it is not a regular file: the words of an error message."""
    import stat

    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be opened ({exc.strerror})"
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (a named pipe), not a file: gssl reads (and checksums) regular files only"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a file"
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    return None


def _suffix(path: Path) -> str:
    """The extension that tells the format: a compressed table's inner one (``.csv.gz``: .csv)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes[-1:] == [".gz"] and len(suffixes) >= 2 and suffixes[-2] in (".csv", ".tsv", ".tab"):
        return suffixes[-2]
    return path.suffix.lower()


def read_file_dataset(entry: dict, name: str = "") -> Dataset:
    """The dataset a ``source: file`` config entry names (ConfigError / DatasetError if it cannot)."""
    return FileSource.from_entry(entry, f"dataset {name!r}" if name else "dataset").read(name)




def _check_dataset(ds: Dataset, path: Path) -> None:
    n = ds.y.size
    for what, m in (("features", ds.X), ("weight matrix", ds.W)):
        if m is not None and m.shape[0] != n:
            raise DatasetError(f"{path}: {m.shape[0]} rows of {what} but {n} labels (unlabeled points "
                               f"count too: give them an empty or NaN label)")
    if (ds.y >= 0).sum() < 2:
        raise DatasetError(f"{path}: fewer than 2 labeled points")
