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

import csv
import difflib
import gzip
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError, DatasetError
from ..store.hashing import file_sha256
from .dataset import Dataset

FORMATS = ("csv", "tsv", "npz", "npy", "h5", "mat", "svmlight", "mtx")
_EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".npz": "npz", ".npy": "npy", ".h5": "h5",
               ".hdf5": "h5", ".mat": "mat", ".svm": "svmlight", ".svmlight": "svmlight",
               ".libsvm": "svmlight", ".mtx": "mtx"}
_ALIASES = {"libsvm": "svmlight", "hdf5": "h5"}
_SPREADSHEETS = (".xlsx", ".xls", ".xlsm", ".ods", ".numbers")
_LIKELY_SEPARATORS = (";", "\t", "|", ",")
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
        misplaced = [k for k in ("label", "features", "id", "sep") if k in entry and fmt not in _TABLE]
        misplaced += [k for k in ("keys",) if k in entry and fmt not in _ARRAYS]
        if misplaced:
            raise ConfigError(f"{where}: {misplaced} apply to other formats than {fmt} (label/features/id/sep: "
                              f"csv and tsv; keys: npz, h5 and mat)")
        sep = entry.get("sep")
        if sep is not None and (not isinstance(sep, str) or len(sep) != 1 or sep in "\"\r\n"):
            raise ConfigError(f"{where}: sep: must be one character other than a quote or a line "
                              f"break (e.g. ';'), got {sep!r}")
        keys = {**DEFAULT_KEYS, **(entry.get("keys") or {})}
        features = tuple(entry["features"]) if entry.get("features") is not None else None
        return cls(path, fmt, entry.get("label"), features, entry.get("id"), tuple(keys.items()), labels,
                   sep)

    @property
    def files(self) -> list[Path]:
        """The files the dataset is read from (the inputs of its dataset job)."""
        return [self.path] + ([self.labels] if self.labels is not None else [])

    def identity(self) -> dict:
        """What defines the data: each file's sha256 (an edit changes it) and how it is read."""
        self.check_exists()
        return {"files": {str(p): file_sha256(p) for p in self.files}, "format": self.format,
                "label": self.label, "features": list(self.features) if self.features else None,
                "id": self.id, "keys": dict(self.keys), **({"sep": self.sep} if self.sep else {})}

    def check_exists(self) -> None:
        for p in self.files:
            if not p.is_file():
                raise DatasetError(f"data file {p} does not exist (working directory {Path.cwd()}); "
                                   f"fix path: in the config (relative paths are relative to where "
                                   f"snakemake runs)")

    def read(self, name: str = "") -> Dataset:
        self.check_exists()
        reader = {"csv": _read_table, "tsv": _read_table, "npz": _read_arrays, "h5": _read_arrays,
                  "mat": _read_arrays, "npy": _read_npy, "svmlight": _read_svmlight, "mtx": _read_mtx}
        X, y, classes, W, extra = reader[self.format](self)
        ds = Dataset(name, X, y, classes, W=W, meta={
            "source": "file", "format": self.format, "n_unlabeled_rows": int((y < 0).sum()),
            "files": {str(p): file_sha256(p) for p in self.files}, **extra})
        _check_dataset(ds, self.path)
        return ds


def _suffix(path: Path) -> str:
    """The extension that tells the format: a compressed table's inner one (``.csv.gz``: .csv)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes[-1:] == [".gz"] and len(suffixes) >= 2 and suffixes[-2] in (".csv", ".tsv", ".tab"):
        return suffixes[-2]
    return path.suffix.lower()


def _open_text(path: Path):
    """A table file for reading as text: gzip-compressed ones (by their first bytes) decompressed."""
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", newline="", encoding="utf-8") if gz else open(path, newline="",
                                                                                 encoding="utf-8")


def read_file_dataset(entry: dict, name: str = "") -> Dataset:
    """The dataset a ``source: file`` config entry names (ConfigError / DatasetError if it cannot)."""
    return FileSource.from_entry(entry, f"dataset {name!r}" if name else "dataset").read(name)


# --------------------------------------------------------------------------- labels
# the cells a table writer puts for a missing value (pandas' and R's spellings, any case): a
# label cell holding one is an unlabeled point, a feature cell a missing value
MISSING_CELLS = frozenset({"", "na", "nan", "-nan", "n/a", "#n/a", "<na>", "null", "none"})


def _is_missing(x) -> bool:
    if x is None:
        return True
    if isinstance(x, str):
        return x.strip().lower() in MISSING_CELLS
    return isinstance(x, (float, np.floating)) and bool(np.isnan(x))


# from this many labelled rows, a label column with a distinct value on every row is refused
CONTINUOUS_MIN_ROWS = 20


def encode_labels(values, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(y, classes): y in 0..C-1 (-1 where a value is missing: None, NaN, an empty string or a
    missing-value word such as ``NA`` or ``nan``, see MISSING_CELLS) and the C class names as
    strings (numbers in numeric order, e.g. "2" before "10"). -1 is a class like any other: binary
    labels are often -1 / 1."""
    v = np.asarray(values, dtype=object).ravel()
    missing = np.array([_is_missing(x) for x in v], dtype=bool)
    present = v[~missing]
    numeric = [_as_number(x) for x in present]
    if all(n is not None for n in numeric):
        keys = np.asarray(numeric, dtype=np.float64)
        uniq = np.unique(keys)
        names = np.asarray([_number_name(u) for u in uniq])
        codes = np.searchsorted(uniq, keys)
    else:
        text = np.asarray([str(x).strip() for x in present])
        names, codes = np.unique(text, return_inverse=True)
    y = np.full(v.size, -1, dtype=np.int64)
    y[~missing] = codes
    if names.size == present.size >= CONTINUOUS_MIN_ROWS:
        raise DatasetError(f"{where}: every one of the {present.size} labelled rows has its own "
                           f"label ({', '.join(names[:5])}, ...): the column looks continuous (a "
                           f"regression target or an id?), and a classification benchmark needs "
                           f"classes: is label: the right column? (bin it into classes first)")
    if names.size < 2:
        raise DatasetError(f"{where}: the labels hold {names.size} class"
                           f"{'' if names.size == 1 else 'es'} ({', '.join(names) or 'none'}); a "
                           f"classification benchmark needs at least 2: is label: the right column?")
    return y, names.astype(str)


def _as_number(x):
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    try:
        return float(str(x).strip())
    except ValueError:
        return None


def _number_name(u: float) -> str:
    return str(int(u)) if float(u).is_integer() else repr(float(u))


# --------------------------------------------------------------------------- readers
def _read_table(src: FileSource):
    import pandas as pd

    sep = src.sep or ("," if src.format == "csv" else "\t")
    try:
        _check_ragged(src.path, sep)
        with _open_text(src.path) as fh:
            df = pd.read_csv(fh, sep=sep, dtype=str, keep_default_na=False, skipinitialspace=True)
    except pd.errors.ParserError as exc:  # pandas names the ragged line
        raise DatasetError(f"{src.path}: {exc}; every row needs as many fields as the header") from None
    except (pd.errors.EmptyDataError, UnicodeDecodeError, csv.Error, gzip.BadGzipFile, EOFError) as exc:
        raise DatasetError(f"{src.path}: not a UTF-8 {src.format.upper()} file with a header row ({exc}); "
                           f"save it as UTF-8 text (gzip-compressed is fine)") from None
    columns = list(df.columns)
    label = _column(columns, src.label, src.path, "label")
    ident = _column(columns, src.id, src.path, "id") if src.id is not None else None
    if src.features is not None:
        features = [_column(columns, c, src.path, "features") for c in src.features]
    else:
        features = [c for c in columns if c not in (label, ident)]
    if label in features or (ident is not None and ident in features):
        raise DatasetError(f"{src.path}: features: lists the label or id column; drop it from features:")
    if not features:
        raise DatasetError(f"{src.path}: no feature column left beside label {label!r}")
    X = _numeric(df[features], src.path)
    y, classes = encode_labels(df[label].to_numpy(), f"{src.path}, column {label!r}")
    extra = {"label_column": label, "feature_columns": features}
    if ident is not None:
        ids = df[ident].astype(str).str.strip()
        dup = ids[ids.duplicated(keep=False)]
        if len(dup):
            lines = [int(i) + 2 for i in dup.index[:6]]
            raise DatasetError(f"{src.path}: id column {ident!r} repeats {dup.iloc[0]!r} (lines "
                               f"{lines}; {dup.nunique()} ids repeated): each point needs its own "
                               f"id; remove the duplicated rows")
    return X, y, classes, None, extra


def _column(columns: list, key, path: Path, what: str) -> str:
    if isinstance(key, bool):
        key = None
    if isinstance(key, int):
        if not -len(columns) <= key < len(columns):
            raise DatasetError(f"{path}: {what}: column index {key} is out of range (the header has "
                               f"{len(columns)} columns: {_show(columns)})")
        return columns[key]
    if key not in columns:
        close = difflib.get_close_matches(str(key), [str(c) for c in columns], n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise DatasetError(f"{path}: {what}: no column named {key!r}; the header has {_show(columns)}{hint}")
    return key


def _show(columns: list, n: int = 12) -> str:
    shown = ", ".join(repr(c) for c in columns[:n])
    return shown + (f", ... ({len(columns)} in all)" if len(columns) > n else "")


def _check_ragged(path: Path, sep: str) -> None:
    """Every row has the header's number of fields (pandas would pad a short row with empty
    cells, which reads as an unlabeled point or a missing feature)."""
    with _open_text(path) as fh:
        rows = csv.reader(fh, delimiter=sep, skipinitialspace=True)
        header = next(rows, [])
        n = len(header)
        _check_header(path, header, sep)
        for line, row in enumerate(rows, start=2):
            if row and len(row) != n:
                raise DatasetError(f"{path}: line {line} has {len(row)} fields, the header {n}; every "
                                   f"row needs a value for each column (leave a label cell empty, "
                                   f"with its comma, to mark an unlabeled point)")


def _check_header(path: Path, header: list, sep: str) -> None:
    """A header of distinct names, split by the separator the file uses."""
    if len(header) == 1:
        likely = [s for s in _LIKELY_SEPARATORS if s != sep and header[0].count(s) >= 1]
        if likely:
            shown = "a tab" if likely[0] == "\t" else repr(likely[0])
            raise DatasetError(f"{path}: the header is one field ({header[0][:60]!r}...) split by "
                               f"{sep!r}; the file looks {shown}-separated: add sep: "
                               f"{likely[0]!r} to its dataset entry")
    seen: dict = {}
    for i, name in enumerate(header):
        seen.setdefault(name.strip(), []).append(i)
    repeated = {name: at for name, at in seen.items() if len(at) > 1}
    if repeated:
        name, at = next(iter(repeated.items()))
        raise DatasetError(f"{path}: the header names column {name!r} {len(at)} times (columns "
                           f"{at}, 0-based){f' and {len(repeated) - 1} other name(s) more than once' if len(repeated) > 1 else ''}; "
                           f"give each column its own name")


def _numeric(frame, path: Path) -> np.ndarray:
    import pandas as pd

    values = frame.apply(pd.to_numeric, errors="coerce")
    missing = frame.apply(lambda c: c.str.strip().str.lower().isin(MISSING_CELLS))
    bad = values.isna() & ~missing  # (missing cells are NaN: _check_finite names them)
    if bad.any().any():
        col = bad.any()[bad.any()].index[0]
        row = int(bad[col].to_numpy().nonzero()[0][0])
        raise DatasetError(f"{path}: feature column {col!r} is not numeric (line {row + 2}: "
                           f"{frame[col].iloc[row]!r}); give features: the numeric columns, or "
                           f"encode this one as numbers")
    X = values.to_numpy(dtype=np.float64)
    _check_finite(X, path, list(frame.columns))
    return X


def _check_finite(X, path, columns: list | None = None) -> None:
    data = X.data if sp.issparse(X) else X
    if np.isfinite(data).all():
        return
    if sp.issparse(X):
        raise DatasetError(f"{path}: the features hold NaN or infinite values; remove or impute them")
    row, col = (int(i[0]) for i in np.nonzero(~np.isfinite(X)))
    name = repr(columns[col]) if columns else str(col)
    line = f"line {row + 2}" if columns else f"row {row}"
    raise DatasetError(f"{path}: feature {name} at {line} is {X[row, col]} ({int((~np.isfinite(X)).sum())} "
                       f"values are NaN, empty or infinite); remove or impute them (a missing label "
                       f"is fine, a missing feature is not)")


def _read_arrays(src: FileSource):
    keys = dict(src.keys)
    found = _load_arrays(src, keys)
    if found.get("y") is None:
        raise DatasetError(f"{src.path}: no labels under key {keys['y']!r}; found {sorted(found['_all'])}: "
                           f"name the label array with keys: {{y: <name>}}")
    X, W = found.get("X"), found.get("W")
    if X is None and W is None:
        raise DatasetError(f"{src.path}: neither features (key {keys['X']!r}) nor a weight matrix "
                           f"(key {keys['W']!r}); found {sorted(found['_all'])}: set keys:")
    y, classes = encode_labels(found["y"], f"{src.path}, array {keys['y']!r}")
    X = check_features(X, src.path) if X is not None else None
    W = check_weights(W, src.path) if W is not None else None
    return X, y, classes, W, {}


def _load_arrays(src: FileSource, keys: dict) -> dict:
    if src.format == "npz":
        try:
            with np.load(src.path, allow_pickle=False) as f:
                names = set(f.files)
                out = {k: f[v] for k, v in keys.items() if v in names}
        except (OSError, ValueError) as exc:
            raise DatasetError(f"{src.path}: cannot read as .npz ({exc})") from None
        return {**out, "_all": names}
    if src.format == "mat" and not _is_hdf5(src.path):  # v7.3 files are HDF5
        import scipy.io

        try:
            mat = scipy.io.loadmat(src.path)
        except Exception as exc:  # scipy raises several types for files it cannot parse
            raise DatasetError(f"{src.path}: cannot read as a MATLAB file ({exc})") from None
        names = {k for k in mat if not k.startswith("__")}
        return {**{k: mat[v] for k, v in keys.items() if v in names}, "_all": names}
    return _load_hdf5(src, keys)


def _is_hdf5(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(1024)
    return b"\x89HDF\r\n\x1a\n" in head


def _load_hdf5(src: FileSource, keys: dict) -> dict:
    import h5py

    matlab = src.format == "mat"  # MATLAB writes arrays column-major: h5py sees them transposed
    try:
        with h5py.File(src.path, "r") as fh:
            _check_self_contained(fh, src.path)
            names = set(fh.keys())
            out = {}
            for k, v in keys.items():
                if v not in names:
                    continue
                node = fh[v]
                if isinstance(node, h5py.Group):  # a sparse matrix: MATLAB's (data, ir, jc) or CSR parts
                    out[k] = _hdf5_sparse(node, src.path, v)
                else:
                    a = node[()]
                    out[k] = a.T if matlab and a.ndim == 2 else a
                    if a.dtype.kind == "S" or a.dtype == object:
                        out[k] = np.asarray([x.decode() if isinstance(x, bytes) else x for x in np.ravel(a)],
                                            dtype=object)
    except OSError as exc:
        raise DatasetError(f"{src.path}: cannot read as HDF5 ({exc})") from None
    return {**out, "_all": names}


def _check_self_contained(fh, path: Path) -> None:
    """No external link and no virtual dataset: their data lives in other files, which are
    neither checksummed nor inputs of the dataset job, so an edit there would go unseen."""
    import h5py

    def visit(name, link):
        if isinstance(link, h5py.ExternalLink):
            return f"{name!r} is an external link to {link.filename}:{link.path}"
        if isinstance(link, h5py.HardLink):
            node = fh.get(name)
            if isinstance(node, h5py.Dataset) and node.is_virtual:
                return f"{name!r} is a virtual dataset over other files"
        return None

    found = _visit_links(fh, visit)
    if found:
        raise DatasetError(f"{path}: {found}; gssl reads self-contained files only (their content "
                           f"is what is checksummed): copy the data into this file (e.g. h5py's "
                           f"copy, or h5repack) and point path: at it")


def _visit_links(group, visit, prefix: str = ""):
    """visit(name, link) on every link below ``group``, depth first, until one returns a value
    (h5py's visititems follows links, and so would open an external file)."""
    import h5py

    for key in group:
        name = f"{prefix}{key}"
        link = group.get(key, getlink=True)
        found = visit(name, link)
        if found:
            return found
        if isinstance(link, h5py.HardLink) and isinstance(group[key], h5py.Group):
            found = _visit_links(group[key], visit, name + "/")
            if found:
                return found
    return None


def _hdf5_sparse(group, path: Path, name: str):
    parts = set(group.keys())
    if {"data", "ir", "jc"} <= parts:  # MATLAB v7.3 sparse: CSC of the (rows x cols) matrix
        data, ir, jc = (group[p][()] for p in ("data", "ir", "jc"))
        n_cols = jc.size - 1
        n_rows = int(group.attrs.get("MATLAB_sparse", ir.max() + 1 if ir.size else 0))
        return sp.csc_matrix((data, ir, jc), shape=(n_rows, n_cols)).tocsr()
    if {"data", "indices", "indptr", "shape"} <= parts:
        return sp.csr_matrix((group["data"][()], group["indices"][()], group["indptr"][()]),
                             shape=tuple(group["shape"][()]))
    raise DatasetError(f"{path}: group {name!r} is not a sparse matrix gssl reads (MATLAB's data/ir/jc, "
                       f"or CSR data/indices/indptr/shape); found {sorted(parts)}")


def check_features(X, path):
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X)
        if X.dtype.kind not in "biuf":
            raise DatasetError(f"{path}: features have dtype {X.dtype}; they must be numbers")
        X = X.astype(np.float32 if X.dtype == np.float32 else np.float64)
        if X.ndim != 2:
            raise DatasetError(f"{path}: features must be a 2-D (points x features) array, got shape {X.shape}")
    _check_finite(X, path)
    return X


def check_weights(W, path) -> sp.csr_matrix:
    W = sp.csr_matrix(W, dtype=np.float64)
    if W.shape[0] != W.shape[1]:
        raise DatasetError(f"{path}: the weight matrix is {W.shape[0]} x {W.shape[1]}; it must be square")
    if W.nnz and (not np.isfinite(W.data).all() or W.data.min() < 0):
        raise DatasetError(f"{path}: the weight matrix has negative, NaN or infinite weights; graph "
                           f"weights must be finite and >= 0")
    asym = abs(W - W.T)
    if asym.nnz and asym.max() > 1e-12 * max(abs(W).max(), 1.0):
        raise DatasetError(f"{path}: the weight matrix is not symmetric (|W - W.T| up to {asym.max():.3g}); "
                           f"symmetrize it first, e.g. (W + W.T) / 2 or max(W, W.T)")
    W.setdiag(0)
    W.eliminate_zeros()
    return W


def _read_labels_file(path: Path):
    if path.suffix.lower() == ".npy":
        return np.load(path, allow_pickle=False)
    lines = path.read_text().splitlines()
    while lines and not lines[-1].strip():  # a trailing newline is not an unlabeled point
        lines.pop()
    return np.asarray(lines, dtype=object)


def _read_npy(src: FileSource):
    try:
        X = np.load(src.path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{src.path}: cannot read as .npy ({exc})") from None
    y, classes = encode_labels(_read_labels_file(src.labels), str(src.labels))
    return check_features(X, src.path), y, classes, None, {}


def _read_svmlight(src: FileSource):
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(src.path), dtype=np.float64)
    except ValueError as exc:
        raise DatasetError(f"{src.path}: not an svmlight/libsvm file ({exc})") from None
    y, classes = encode_labels(y, str(src.path))
    return check_features(X, src.path), y, classes, None, {}


def _read_mtx(src: FileSource):
    import scipy.io

    try:
        W = scipy.io.mmread(src.path)
    except (ValueError, OSError) as exc:
        raise DatasetError(f"{src.path}: not a Matrix Market file ({exc})") from None
    y, classes = encode_labels(_read_labels_file(src.labels), str(src.labels))
    return None, y, classes, check_weights(W, src.path), {}


def _check_dataset(ds: Dataset, path: Path) -> None:
    n = ds.y.size
    for what, m in (("features", ds.X), ("weight matrix", ds.W)):
        if m is not None and m.shape[0] != n:
            raise DatasetError(f"{path}: {m.shape[0]} rows of {what} but {n} labels (unlabeled points "
                               f"count too: give them an empty or NaN label)")
    if (ds.y >= 0).sum() < 2:
        raise DatasetError(f"{path}: fewer than 2 labeled points")
