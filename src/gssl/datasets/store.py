"""The canonical dataset file (h5io kind "dataset"): arrays X, y, classes, W, ids; attrs name,
fingerprint, meta."""

from __future__ import annotations

import json

from ..errors import CacheError
from ..store.h5io import read_h5, write_h5
from .dataset import Dataset

KIND = "dataset"


def save_dataset(path, ds: Dataset, params: dict, inputs: dict | None = None,
                 build_seconds: float | None = None) -> None:
    """Write ``ds`` atomically to ``path``. X may be dense or CSR; X or W may be None (not stored)."""
    write_h5(path, KIND, {"X": ds.X, "y": ds.y, "classes": ds.classes, "W": ds.W, "ids": ds.ids}, params, inputs,
             build_seconds=build_seconds,
             extra_attrs={"name": ds.name, "fingerprint": ds.fingerprint, "meta": json.dumps(ds.meta)})


def load_dataset(path, expect_params: dict | None = None, rule: str | None = None) -> Dataset:
    """Read a dataset file; CacheError if its arrays do not reproduce the stored fingerprint."""
    arrays, attrs = read_h5(path, KIND, expect_params=expect_params, required=("y", "classes"), rule=rule)
    ds = Dataset(str(attrs.get("name", "")), arrays.get("X"), arrays["y"], arrays["classes"],
                 W=arrays.get("W"), meta=json.loads(attrs.get("meta", "{}")), ids=arrays.get("ids"))
    if ds.fingerprint != attrs.get("fingerprint"):
        raise CacheError(f"{path}: arrays do not match the stored fingerprint (file damaged); "
                         f"delete it (rm {path}) and rebuild it")
    return ds
