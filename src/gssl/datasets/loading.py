"""load(): fetched files -> parser -> canonical Dataset checked against its registered fingerprint."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ConfigError, DatasetError
from .dataset import Dataset
from .download import default_mirror, fetch, local_mirror_files
from .registry import DatasetSpec, get_spec


def _files(spec: DatasetSpec, raw_dir, mirror) -> dict[str, Path]:
    """Local paths of the dataset's files: raw_dir (fetching what is missing) or a local mirror."""
    if raw_dir is not None:
        return fetch(spec.name, raw_dir, mirror, spec=spec)
    paths = local_mirror_files(spec, mirror if mirror is not None else default_mirror())
    if paths is None:
        raise DatasetError(f"dataset {spec.name!r}: no raw_dir given and no local mirror holds its files; "
                           f"pass raw_dir=... (files are fetched there) or set GSSL_DATA_MIRROR")
    return paths


def check_fingerprint(ds: Dataset, expected: str | None, origin: str = "") -> None:
    """DatasetError if ``ds`` does not reproduce the registered canonical fingerprint."""
    if expected is None:
        return
    actual = ds.fingerprint
    if actual != expected:
        raise DatasetError(f"dataset {ds.name!r}{origin}: parsed arrays have fingerprint {actual}, "
                           f"expected {expected}; the files or the parser changed: delete the raw "
                           f"files and fetch again, or update the registry after checking the data")


def load(name: str, raw_dir=None, params: dict | None = None, random_state=None, *,
         mirror=None, spec: DatasetSpec | None = None, verify: bool = True) -> Dataset:
    """Load dataset ``name`` in canonical form.

    Mirror datasets: files are fetched into ``raw_dir`` if missing (see :func:`fetch`), or read in
    place from a local mirror folder when ``raw_dir`` is None; the parsed arrays must match the
    registered fingerprint (``verify``). Generators: ``params`` override the defaults;
    ``random_state`` (or ``params["random_state"]``) seeds them (default 0).
    """
    spec = spec or get_spec(name)
    if spec.kind == "mirror":
        if params:
            raise ConfigError(f"dataset {name!r} is read from files and takes no params, got {params}")
        paths = _files(spec, raw_dir, mirror)
        ds = spec.loader(paths)
    else:
        kwargs = spec.generator_params(params, random_state)
        ds = spec.loader(**kwargs)
        ds.meta.setdefault("params", {k: v for k, v in kwargs.items()
                                      if not isinstance(v, (np.random.Generator, np.random.RandomState))})
    ds.name = name
    ds.meta.setdefault("source", spec.kind)
    if verify:
        check_fingerprint(ds, spec.fingerprint)
    return ds
