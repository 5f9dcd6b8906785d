"""The readers of :mod:`gssl.datasets.files` per format (npz, HDF5 and MATLAB arrays, npy, svmlight,
Matrix Market; the tables: :mod:`gssl.datasets.tables`) and the checks their arrays share. Each
takes a :class:`~gssl.datasets.files.FileSource` ``src`` (its path, format, keys and labels
file; not imported here: the files module imports this one) and returns (X, y, classes, W,
extra)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import DatasetError
from .labels import encode_labels
from .tables import check_finite_values


def parser_failure(exc: BaseException) -> str:
    """A parser's exception in words that name its type and the line it gives, and nothing of
    the message itself (which may quote the file)."""
    import re

    m = re.search(r"\bline[: ]+(\d+)", str(exc), flags=re.IGNORECASE)
    return f"{type(exc).__name__} at line {m.group(1)}" if m else f"{type(exc).__name__} (no line given)"



def read_arrays(src):
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


def _load_arrays(src, keys: dict) -> dict:
    if src.format == "npz":
        try:
            with np.load(src.path, allow_pickle=False) as f:
                names = set(f.files)
                out = {k: f[v] for k, v in keys.items() if v in names}
        except (OSError, ValueError) as exc:
            raise DatasetError(f"{src.path}: cannot read as .npz: {parser_failure(exc)}") from None
        return {**out, "_all": names}
    if src.format == "mat" and not _is_hdf5(src.path):  # v7.3 files are HDF5
        import scipy.io

        try:
            mat = scipy.io.loadmat(src.path)
        except Exception as exc:  # scipy raises several types for files it cannot parse
            raise DatasetError(f"{src.path}: cannot read as a MATLAB file: {parser_failure(exc)}") from None
        names = {k for k in mat if not k.startswith("__")}
        return {**{k: mat[v] for k, v in keys.items() if v in names}, "_all": names}
    return _load_hdf5(src, keys)


def _is_hdf5(path: Path) -> bool:
    with open(path, "rb") as fh:
        head = fh.read(1024)
    return b"\x89HDF\r\n\x1a\n" in head


def _load_hdf5(src, keys: dict) -> dict:
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
        raise DatasetError(f"{src.path}: cannot read as HDF5: {parser_failure(exc)}") from None
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
    check_finite_values(X, path)
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
    try:
        if path.suffix.lower() == ".npy":
            return np.load(path, allow_pickle=False)
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        raise DatasetError(f"{path}: not a labels file gssl reads (a .npy array, or UTF-8 text with one "
                           f"label per line): {parser_failure(exc)}") from None
    while lines and not lines[-1].strip():  # a trailing newline is not an unlabeled point
        lines.pop()
    return np.asarray(lines, dtype=object)


def read_npy(src):
    try:
        X = np.load(src.path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{src.path}: cannot read as .npy: {parser_failure(exc)}") from None
    y, classes = encode_labels(_read_labels_file(src.labels), str(src.labels))
    return check_features(X, src.path), y, classes, None, {}


def read_svmlight(src):
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(src.path), dtype=np.float64)
    except ValueError as exc:
        raise DatasetError(f"{src.path}: not an svmlight/libsvm file: {parser_failure(exc)}") from None
    y, classes = encode_labels(y, str(src.path))
    return check_features(X, src.path), y, classes, None, {}


# the most memory a data file's declared sizes may ask for before it is read: a bound, not a
# budget (the job's own memory is what limits it), so that a header's typo costs an error, not
# the machine; GSSL_MAX_DATA_BYTES overrides it
def max_data_bytes() -> int:
    env = os.environ.get("GSSL_MAX_DATA_BYTES")
    if env:
        return int(float(env))
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def check_mtx_header(path: Path, n_points: int | None = None) -> None:
    """A Matrix Market file's banner and size line read (nothing else) and checked before any
    allocation: a square matrix (a graph's W) of ``n_points`` rows where given (the labels
    file's count), entries that fit in the file's bytes (each takes
    at least 4 for a pattern, 6 with a value), and the memory its sizes ask for within
    :func:`max_data_bytes`. DatasetError naming the file and the line, never its content."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        banner = fh.readline(1024)
        if not banner.lower().startswith(b"%%matrixmarket"):
            raise DatasetError(f"{path}: line 1 is not a Matrix Market banner (%%MatrixMarket matrix ...)")
        fields = banner.decode("ascii", "replace").lower().split()
        layout = fields[2] if len(fields) > 2 else ""
        pattern = "pattern" in fields
        symmetric = any(f in ("symmetric", "skew-symmetric", "hermitian") for f in fields)
        line_no, line = 1, b""
        while True:
            line = fh.readline(1024)
            line_no += 1
            if not line:
                raise DatasetError(f"{path}: no size line after the banner and comments")
            if line.strip() and not line.lstrip().startswith(b"%"):
                break
    try:
        sizes = [int(x) for x in line.split()]
    except ValueError:
        raise DatasetError(f"{path}: line {line_no}, the size line, is not whole numbers") from None
    want = 3 if layout == "coordinate" else 2
    if len(sizes) != want or min(sizes) < 0:
        raise DatasetError(f"{path}: line {line_no}, the size line, has {len(sizes)} numbers; a {layout or 'Matrix Market'} "
                           f"file gives {want} (rows, columns{', entries' if want == 3 else ''}), none negative")
    rows, cols = sizes[:2]
    if rows != cols:
        raise DatasetError(f"{path}: line {line_no} declares a {rows:,} x {cols:,} matrix; a graph's weight "
                           f"matrix is square")
    if n_points is not None and rows != n_points:
        raise DatasetError(f"{path}: line {line_no} declares a {rows:,} x {cols:,} matrix, but its labels file "
                           f"gives {n_points:,} points: one row and column per point")
    if layout == "coordinate":
        entries = sizes[2]
        if entries > rows * cols:
            raise DatasetError(f"{path}: line {line_no} declares {entries:,} entries in a {rows:,} x {cols:,} matrix")
        least = entries * (4 if pattern else 6)
        if least > size:
            raise DatasetError(f"{path}: line {line_no} declares {entries:,} entries, which take at least "
                               f"{least:,} bytes, but the file has {size:,}: it is truncated, or its size line is wrong")
        need = 8 * (rows + 1) + 16 * entries * (2 if symmetric else 1) * 2  # COO read, then CSR
    else:
        need = 8 * rows * cols
        if rows * cols * 2 > size:  # each value at least a digit and a line break
            raise DatasetError(f"{path}: line {line_no} declares {rows * cols:,} values, but the file has "
                               f"{size:,} bytes: it is truncated, or its size line is wrong")
    bound = max_data_bytes()
    if need > bound:
        raise DatasetError(f"{path}: line {line_no} declares a {rows:,} x {cols:,} matrix that needs about "
                           f"{need / 2**30:.1f} GiB to read, over the bound of {bound / 2**30:.1f} GiB (half "
                           f"this machine's memory; GSSL_MAX_DATA_BYTES sets it)")


def read_mtx(src):
    import scipy.io

    y, classes = encode_labels(_read_labels_file(src.labels), str(src.labels))
    check_mtx_header(src.path, n_points=y.size)
    try:
        W = scipy.io.mmread(src.path)
    except (ValueError, OSError) as exc:
        raise DatasetError(f"{src.path}: not a Matrix Market file: {parser_failure(exc)}") from None
    return None, y, classes, check_weights(W, src.path), {}
