"""What gssl logs, without MLflow: its tag names, run names and the pending-runs files.

Compute jobs describe the runs they want logged as run trees (:func:`run_tree`) in a pending-runs
file beside their output (:func:`write_pending`); the experiment's logging job reads them
(:func:`read_pending`) and logs them with :mod:`gssl.tracking.client`, the one module that imports MLflow.
"""

from __future__ import annotations

import gzip
import json

from ..errors import TrackingError

TAG_PREFIX = "gssl."
SUMMARY_TAG = "gssl.summary"
SUPERSEDED_TAG = "gssl.superseded"
KIND_TAG = "gssl.kind"  # cell | block | split | selection_cell | selection_block | selection | summary
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


def write_pending(path, trees: list[dict]) -> None:
    """A job's runs to log, as run trees (:func:`run_tree`), in a gzip-compressed JSON file written
    atomically (a killed job leaves none); :func:`log_pending` logs them."""
    from ..store.h5io import atomic_path

    data = json.dumps({"gssl_pending_runs": 1, "trees": trees}, sort_keys=True,
                      default=_json_number).encode()
    with atomic_path(path) as tmp, open(tmp, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as fh:
            fh.write(data)


def _json_number(obj):
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def read_pending(path) -> list[dict]:
    """The run trees of a pending-runs file."""
    try:
        with gzip.open(path, "rt") as fh:
            payload = json.load(fh)
        return payload["trees"]
    except (OSError, EOFError, ValueError, KeyError) as exc:
        raise TrackingError(f"{path} is not a complete pending-runs file ({exc}): delete it and "
                            f"rerun the job that wrote it (snakemake --rerun-incomplete)") from exc
