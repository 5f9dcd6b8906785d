"""What gssl logs, without MLflow: its tag names, run names and the pending-runs files.

Compute jobs describe the runs they want logged as run trees (:func:`run_tree`) in a pending-runs
file beside their output (:func:`write_pending`); the experiment's logging job reads them
(:func:`read_pending`) and logs them with :mod:`gssl.tracking.client` (it and :mod:`gssl.tracking.store`
are the only modules that import MLflow).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from pathlib import Path

from ..errors import TrackingError

TAG_PREFIX = "gssl."
SUMMARY_TAG = "gssl.summary"
SUPERSEDED_TAG = "gssl.superseded"
KIND_TAG = "gssl.kind"  # cell | block | split | selection_cell | selection_block | selection | summary | representation
REPRESENTATION_TAG = "gssl.representation_run_id"  # a cell's link to the network that learned its features
RECORD_TAG = "gssl.record"  # a root run: the pending record it came from (file path, sha256, index)
INDEX_TAG = "gssl.record_index"  # a child run: its place among the record's children


def run_name(cell: dict, variant: str | None = None, split=None, splits: str = "") -> str:
    """``method[variant] · protocol [splits a-b] · split i · dataset/prep/graph``: the run names of
    cells, blocks and splits lead with what tells them apart in the UI's table."""
    label = f"{cell['method']}[{variant}]" if variant else cell["method"]
    parts = [label, cell["protocol"] + (f" [splits {splits}]" if splits else "")]
    if split is not None:
        parts.append(f"split {split}")
    return " · ".join(parts + [f"{cell['dataset']}/{cell['prep']}/{cell['graph']}"])


def run_tree(run: dict, children: list[dict] = ()) -> dict:
    """A pending record: a root run and its child runs, each a dict as for :func:`log_run`
    (``name``, ``tags``, ``params``, ``metrics``, optional ``history``, ``artifacts``, ``files``,
    and ``start_time`` / ``end_time`` in ms since the epoch: when the job computed it)."""
    return {"run": run, "children": list(children)}


def write_pending(path, trees: list[dict]) -> str:
    """A job's runs to log, as run trees (:func:`run_tree`), in a gzip-compressed JSON file written
    atomically (a killed job leaves none); :func:`log_pending` logs them. The file records the
    sha256 of its trees (``trees_sha256``), which :func:`read_pending` checks; returns it."""
    from ..store.h5io import atomic_path

    # the trees as a reader will see them (numpy numbers as Python's, keys as JSON's strings)
    trees = json.loads(json.dumps(trees, default=_json_number))
    digest = trees_sha256(trees)
    data = json.dumps({"gssl_pending_runs": 1, "trees_sha256": digest, "trees": trees},
                      sort_keys=True).encode()
    with atomic_path(path) as tmp, open(tmp, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as fh:
            fh.write(data)
    return digest


def trees_sha256(trees: list[dict]) -> str:
    """sha256 of run trees as JSON (keys sorted): what a pending-runs file records of its trees."""
    return hashlib.sha256(json.dumps(trees, sort_keys=True).encode()).hexdigest()


def _json_number(obj):
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def read_pending(path) -> list[dict]:
    """The run trees of a pending-runs file; TrackingError, naming the file, for a file that is
    truncated, not gzip, not JSON, or whose trees no longer match the sha256 they were written with
    (bytes overwritten or edited). Files written before that checksum existed carry none and are
    checked by gzip's CRC only."""
    return read_pending_file(path)[1]


def read_pending_file(path) -> tuple[str, list[dict]]:
    """(sha256 of the file's bytes, its run trees), both from one read of the file: what the
    logging job logs is what its ledger records the sha256 of. Refused as by :func:`read_pending`."""
    fix = "delete it and its job's output and rerun the job that wrote it (snakemake --rerun-incomplete)"
    try:
        raw = Path(path).read_bytes()
        payload = json.loads(gzip.decompress(raw))
        trees = payload["trees"]
        expected = payload.get("trees_sha256")
    except (OSError, EOFError, ValueError, KeyError, TypeError, AttributeError, zlib.error) as exc:
        raise TrackingError(f"{path} is not a complete pending-runs file ({exc}): {fix}") from exc
    if expected is not None and trees_sha256(trees) != expected:
        raise TrackingError(f"{path}: its runs do not match the sha256 they were written with "
                            f"({str(expected)[:12]}...): the file was damaged or edited: {fix}")
    return hashlib.sha256(raw).hexdigest(), trees
