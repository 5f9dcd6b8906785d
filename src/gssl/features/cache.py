"""The HDF5 features cache (h5io kind "features"): X (dense or CSR) and y."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import CacheError, DatasetError
from ..store.h5io import read_h5, write_h5


def save_features(path, X, y, params: dict, inputs: dict | None = None,
                  build_seconds: float | None = None) -> None:
    """Write a features file (h5io kind "features") with arrays X (dense or CSR) and y. A graph-only
    dataset (X None: e.g. the 20NEWS graph) stores an n x 0 X, read back as None."""
    y = np.asarray(y)
    if X is None:
        X = np.zeros((y.shape[0], 0))
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise DatasetError(f"y must be 1-D with one label per row of X ({X.shape[0]}), got {y.shape}")
    write_h5(path, "features", {"X": X, "y": y}, params, inputs=inputs, build_seconds=build_seconds,
             extra_attrs={"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
                          "sparse": bool(sp.issparse(X))})


def load_features(path, expect_params: dict | None = None, rule: str | None = None):
    """Read a features file; returns (X, y). CacheError names the file and the fix."""
    arrays, _ = read_h5(path, "features", expect_params=expect_params, required=("X", "y"), rule=rule)
    X, y = arrays["X"], np.asarray(arrays["y"])
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        fix = f"delete it (rm {path})" + (f" or snakemake --forcerun {rule}" if rule else "")
        raise CacheError(f"{path}: inconsistent features file (X {X.shape}, y {y.shape}): {fix}")
    return (None if X.shape[1] == 0 else X), y
