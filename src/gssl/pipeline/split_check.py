"""Whether a protocol can draw its splits on a data file's labels: the config check asks it before
any job, for every protocol an experiment runs on a ``source: file`` dataset.

Drawing is the only way to know (melacci_cv's draws may fail at random), and it takes about 15 ms a
split on 100,000 labels, at every ``snakemake`` plan. So the verdict is kept under the planning
folder (:data:`gssl.pipeline.paths.PLANNING`, beside the data files' facts), keyed by what decides
it: the labels' content, the protocol, the dataset and protocol ids (the seeds), the code that
draws and numpy's version. Nothing in it is a job's output; deleting it is safe.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from ..errors import ConfigError, SplitError

_ERRORS = {"ConfigError": ConfigError, "SplitError": SplitError}


def check_draws(y, spec: dict, dataset: str, protocol_id: str, cache_dir=None) -> None:
    """Raise what :func:`gssl.splits.make_splits` raises for these labels and protocol
    (ConfigError, or SplitError with its ``short_classes``); nothing when every split draws.
    ``cache_dir``: where the verdict is kept for the next process (None: not kept)."""
    y = np.ascontiguousarray(y)
    store = None if cache_dir is None else Path(cache_dir) / f"draws-{_key(y, spec, dataset, protocol_id)}.json"
    verdict = _load(store)
    if verdict is None:
        verdict = _verdict(y, spec, dataset, protocol_id)
        _save(store, verdict)
    if verdict:
        err = _ERRORS[verdict["error"]](verdict["message"])
        if verdict.get("short_classes") is not None:
            err.short_classes = np.asarray(verdict["short_classes"])
        raise err


def _verdict(y, spec, dataset, protocol_id) -> dict:
    """{} when the protocol draws every split; else the refusal's class, message and short classes."""
    from ..splits import make_splits

    try:
        make_splits(y, spec, dataset, protocol_id)
    except (ConfigError, SplitError) as exc:
        short = getattr(exc, "short_classes", None)
        return {"error": "SplitError" if isinstance(exc, SplitError) else "ConfigError", "message": str(exc),
                "short_classes": None if short is None else np.asarray(short).tolist()}
    return {}


def _key(y: np.ndarray, spec: dict, dataset: str, protocol_id: str) -> str:
    from ..store.hashing import canonical_json, import_closure, module_source_hash

    h = hashlib.sha256(canonical_json({
        "spec": spec, "dataset": dataset, "protocol": protocol_id, "numpy": np.__version__,
        "code": module_source_hash(*import_closure("gssl.splits.protocols")),
        "labels": [y.dtype.str, list(y.shape)]}).encode())
    h.update(y.tobytes())
    return h.hexdigest()[:24]


def _load(store: Path | None) -> dict | None:
    """The stored verdict; None when there is none or it cannot be read (then it is drawn again)."""
    if store is None:
        return None
    try:
        verdict = json.loads(store.read_text())
    except (OSError, ValueError):
        return None
    return verdict if isinstance(verdict, dict) and (not verdict or verdict.get("error") in _ERRORS) else None


def _save(store: Path | None, verdict: dict) -> None:
    from ..store.h5io import atomic_write_text

    if store is None:
        return
    try:
        atomic_write_text(store, json.dumps(verdict))
    except OSError:  # a read-only results folder: the next plan draws again, as before
        pass
