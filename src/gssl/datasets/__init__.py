"""Datasets: registry, downloads, parsers, generators, class-subset views and the canonical file.

Typical use::

    from gssl.datasets import fetch, load, select, save_dataset
    fetch("usps", "resources/raw/usps")            # mirror first (GSSL_DATA_MIRROR), then public URLs
    ds = load("usps", "resources/raw/usps")         # canonical arrays, fingerprint checked
    b = select(ds, groups=[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])
    save_dataset("results/data/usps.h5", ds, params={"dataset": "usps"})
    mine = read_file_dataset({"path": "my.csv", "label": "species"})  # a config's source: file entry
"""

from __future__ import annotations

from .dataset import Dataset
from .download import default_mirror, download_file, fetch, sources_for
from .loading import check_fingerprint, load
from .files import read_file_dataset
from .registry import (FILE_SOURCE, REGISTRY, DatasetSpec, FileSpec, generated_datasets, get_spec,
                       graph_only_datasets, list_datasets)
from .store import load_dataset, save_dataset
from .views import select


def fetch_and_save(name: str, raw_dir, out_path, params: dict | None = None, view: dict | None = None,
                   mirror=None, inputs: dict | None = None) -> Dataset:
    """fetch + load + optional ``select(**view)`` + save_dataset; returns the saved Dataset.

    The file's params are ``{"dataset": name, "params": params or {}, "view": view}``; generators
    take their seed from ``params["random_state"]`` (default 0) so that the file records it.
    """
    import time

    t0 = time.perf_counter()
    if raw_dir is not None:
        fetch(name, raw_dir, mirror)
    ds = load(name, raw_dir, params, mirror=mirror)
    if view:
        ds = select(ds, **view)
    save_dataset(out_path, ds, {"dataset": name, "params": params or {}, "view": view}, inputs,
                 build_seconds=time.perf_counter() - t0)
    return ds


__all__ = ["Dataset", "DatasetSpec", "FILE_SOURCE", "FileSpec", "REGISTRY", "read_file_dataset", "check_fingerprint", "default_mirror",
           "download_file", "fetch", "fetch_and_save", "generated_datasets", "get_spec",
           "graph_only_datasets", "list_datasets", "load",
           "load_dataset", "save_dataset", "select", "sources_for"]
