"""Parsers from the served files of each mirror dataset to the canonical :class:`Dataset`.

Every parser takes ``paths`` (file name -> local Path, as returned by ``fetch``) and returns a
Dataset whose ``name`` the loader fills in. Conventions (see the data mirror's PROVENANCE.md files):

- 1-based labels (``gnd``, ``C``) become 0-based; class names are the original labels as strings.
- Sindhwani's ±1 labels map -1 -> 0, +1 -> 1 with classes ``["-1", "1"]``.
- Train and test parts are concatenated (train first); ``meta["n_train"]`` keeps the boundary.
- Pixels keep their stored values and order: COIL20/YaleB rows are MATLAB column-major 32x32 images
  (``reshape(32, 32, order="F")``), USPS/USPST/MNIST rows are row-major.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import h5py
import numpy as np
import scipy.io
import scipy.sparse as sp

from ..errors import DatasetError
from .dataset import Dataset

DIGITS = np.asarray([str(i) for i in range(10)])
PLUS_MINUS = np.asarray(["-1", "1"])
FASHION_CLASSES = np.asarray(["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal",
                              "Shirt", "Sneaker", "Bag", "Ankle boot"])


def _numbered(n: int) -> np.ndarray:
    """Class names "1".."n" for 1-based label sets."""
    return np.asarray([str(i) for i in range(1, n + 1)])


def _labels(values, offset: int = 0) -> np.ndarray:
    return (np.asarray(values).ravel().astype(np.int64) - offset)


def _plus_minus(values) -> np.ndarray:
    v = np.asarray(values).ravel()
    if not np.all(np.isin(v, (-1, 1))):
        raise DatasetError(f"expected labels in {{-1, +1}}, found {np.unique(v)[:10]}")
    return (v > 0).astype(np.int64)


def _loadmat(path: Path, keys: tuple[str, ...]) -> dict:
    try:
        mat = scipy.io.loadmat(path, variable_names=keys)
    except Exception as exc:  # scipy raises several types for corrupt files
        raise DatasetError(f"{path}: cannot read MATLAB file ({exc}); delete it and fetch again") from exc
    missing = [k for k in keys if k not in mat]
    if missing:
        raise DatasetError(f"{path}: variables {missing} missing (found {sorted(mat)}); wrong file?")
    return mat


def parse_sindhwani(paths: dict) -> Dataset:
    """Sindhwani's manifold-regularization .mat (X, y, idxLabs, idxUnls); X float64."""
    (path,) = paths.values()
    mat = _loadmat(path, ("X", "y"))
    X = sp.csr_matrix(mat["X"], dtype=np.float64) if sp.issparse(mat["X"]) else np.asarray(mat["X"], np.float64)
    y = mat["y"].ravel()
    if set(np.unique(y).tolist()) <= {-1, 1}:
        return Dataset("", X, _plus_minus(y), PLUS_MINUS.copy(), meta={"labels": "+-1"})
    return Dataset("", X, _labels(y), DIGITS.copy())


def parse_cai(paths: dict) -> Dataset:
    """Deng Cai's .mat (fea, gnd with 1-based labels); pixels kept as stored, column-major, float64."""
    (path,) = paths.values()
    mat = _loadmat(path, ("fea", "gnd"))
    y = _labels(mat["gnd"], offset=1)
    return Dataset("", np.asarray(mat["fea"], dtype=np.float64), y, _numbered(int(y.max()) + 1),
                   meta={"pixel_order": "column-major 32x32"})


def parse_usps_h5(paths: dict) -> Dataset:
    """Kaggle-layout usps.h5: train then test, pixels in [0, 1] (stored float32, cast to float64)."""
    (path,) = paths.values()
    try:
        with h5py.File(path, "r") as fh:
            parts = [(fh[f"{s}/data"][()], fh[f"{s}/target"][()]) for s in ("train", "test")]
    except (OSError, KeyError) as exc:
        raise DatasetError(f"{path}: not the expected usps.h5 layout ({exc})") from exc
    X = np.concatenate([p[0] for p in parts]).astype(np.float64)
    y = _labels(np.concatenate([p[1] for p in parts]))
    return Dataset("", X, y, DIGITS.copy(), meta={"n_train": int(parts[0][0].shape[0])})


def parse_uci_csv(paths: dict) -> Dataset:
    """UCI comma-separated .tra + .tes (integer features, class in the last column), float64."""
    tra = next(p for n, p in paths.items() if n.endswith(".tra"))
    tes = next(p for n, p in paths.items() if n.endswith(".tes"))
    parts = []
    for p in (tra, tes):
        try:
            parts.append(np.loadtxt(p, delimiter=",", dtype=np.int64, ndmin=2))
        except ValueError as exc:
            raise DatasetError(f"{p}: not a headerless integer CSV ({exc})") from exc
    A = np.concatenate(parts)
    return Dataset("", A[:, :-1].astype(np.float64), A[:, -1].copy(), DIGITS.copy(),
                   meta={"n_train": int(parts[0].shape[0])})


def _read_idx(path: Path, magic: int) -> np.ndarray:
    """Read a gzip'd IDX file (images: magic 2051, labels: magic 2049) as uint8."""
    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    head = np.frombuffer(raw, dtype=">i4", count=2)
    if int(head[0]) != magic:
        raise DatasetError(f"{path}: IDX magic {int(head[0])}, expected {magic}")
    if magic == 2049:
        return np.frombuffer(raw, np.uint8, offset=8)
    dims = np.frombuffer(raw, dtype=">i4", count=3, offset=4)
    return np.frombuffer(raw, np.uint8, offset=16).reshape(int(dims[0]), int(dims[1] * dims[2]))


def _parse_idx(paths: dict, prefixes: tuple[str, ...], classes: np.ndarray) -> Dataset:
    Xs, ys = [], []
    for pre in prefixes:
        Xs.append(_read_idx(paths[f"{pre}-images-idx3-ubyte.gz"], 2051))
        ys.append(_read_idx(paths[f"{pre}-labels-idx1-ubyte.gz"], 2049))
    # float32 holds 0..255 exactly; float64 would double the memory of 70000x784 for nothing.
    X = np.concatenate(Xs).astype(np.float32)
    meta = {"pixel_order": "row-major 28x28", "pixel_range": "0..255"}
    if len(Xs) > 1:
        meta["n_train"] = int(Xs[0].shape[0])
    return Dataset("", X, np.concatenate(ys).astype(np.int64), classes.copy(), meta=meta)


def parse_mnist_test(paths: dict) -> Dataset:
    """MNIST test set, 10000x784 float32 pixels 0..255 (row-major)."""
    return _parse_idx(paths, ("t10k",), DIGITS)


def parse_fashion_mnist(paths: dict) -> Dataset:
    """Fashion-MNIST train (60000) then test (10000): 70000x784 float32 pixels 0..255."""
    return _parse_idx(paths, ("train", "t10k"), FASHION_CLASSES)


def parse_graph_mat(paths: dict) -> Dataset:
    """NMFR/MTV graph .mat (A sparse adjacency, C 1-based classes): graph-only, X is None."""
    (path,) = paths.values()
    mat = _loadmat(path, ("A", "C"))
    W = sp.csr_matrix(mat["A"], dtype=np.float64)
    y = _labels(mat["C"], offset=1)
    return Dataset("", None, y, _numbered(int(y.max()) + 1), W=W)


def class_names(parser, n_classes: int) -> tuple[str, ...] | None:
    """The class names ``parser`` gives a dataset of ``n_classes`` classes, known without reading
    its files (the conventions above); None for a parser not listed."""
    names = {parse_usps_h5: DIGITS, parse_uci_csv: DIGITS, parse_mnist_test: DIGITS,
             parse_fashion_mnist: FASHION_CLASSES, parse_cai: _numbered(n_classes),
             parse_graph_mat: _numbered(n_classes),
             parse_sindhwani: PLUS_MINUS if n_classes == 2 else DIGITS}.get(parser)
    return None if names is None else tuple(str(x) for x in names)


def may_be_sparse(parser) -> bool:
    """Whether ``parser`` keeps CSR features when its file stores them so (Sindhwani's .mat files)."""
    return parser is parse_sindhwani
