"""Self-describing, atomically written HDF5 files: the cache format of every pipeline stage.

Each file carries attrs ``gssl_kind``, ``gssl_version``, ``params`` (JSON), ``params_hash``,
``inputs`` (JSON: name -> sha256 of upstream file), ``created``, ``build_seconds`` and, written last,
``complete = True``; ``content_sha256`` hashes the arrays (names, dtypes, shapes, bytes) together
with the params, and :func:`read_h5` recomputes it. Readers refuse files that are truncated, of
another kind, built with other parameters, or whose contents or params no longer match their
checksum (bit rot, an edit), with a message naming the file and the fix. Files written before the
checksum existed carry none and are read unchecked.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import os
import socket
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np
import scipy.sparse as sp

from .._package import __version__
from ..errors import CacheError
from .hashing import canonical_json, params_hash

_SPARSE_TAG = "csr_matrix"


@contextlib.contextmanager
def atomic_path(path, suffix: str = ""):
    """Yield a temporary path beside ``path``; on success fsync and rename it into place.

    On any exception the temporary file is removed, so a killed or failed job never leaves a file
    that a later job accepts as complete.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # .NAME~HOST~PID~<random><suffix>.tmp: remove_stale_tmp knows whose it is
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}~{socket.gethostname()}~{os.getpid()}~",
                               suffix=suffix + ".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are meant to be shared
        os.replace(tmp, path)
        with contextlib.suppress(OSError):  # persist the rename itself
            dfd = os.open(path.parent, os.O_RDONLY)
            os.fsync(dfd)
            os.close(dfd)
    finally:
        tmp.unlink(missing_ok=True)


def remove_stale_tmp(root) -> list[Path]:
    """Delete the temporary files :func:`atomic_path` left under ``root`` when its process was
    killed: those written on this host by a process that no longer runs (the host and pid are in
    the name). A running writer's file, or another host's, is left alone; return the paths removed."""
    host, removed = socket.gethostname(), []
    for tmp in Path(root).rglob(".*~*~*~*.tmp") if Path(root).is_dir() else ():
        parts = tmp.name.split("~")
        if len(parts) < 4 or parts[-3] != host or not parts[-2].isdigit() or _alive(int(parts[-2])):
            continue
        tmp.unlink(missing_ok=True)
        removed.append(tmp)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or not a pid: not ours to judge
    return True


@functools.cache
def _umask() -> int:
    """The process umask, read without changing it where Linux tells it (/proc/self/status):
    os.umask(0) and back would open a window in which another thread creates files 0666/0777.
    Elsewhere it is read once, at the first atomic write, before jobs start threads."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status") as fh:
            return int(next(line for line in fh if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path, text: str) -> None:
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)


def _write_array(group: h5py.Group, name: str, value) -> None:
    if sp.issparse(value):
        m = sp.csr_matrix(value)
        g = group.create_group(name)
        g.attrs["encoding"] = _SPARSE_TAG
        g.attrs["shape"] = np.asarray(m.shape, dtype=np.int64)
        g.create_dataset("data", data=m.data)
        g.create_dataset("indices", data=m.indices)
        g.create_dataset("indptr", data=m.indptr)
    elif isinstance(value, np.ndarray) and value.dtype.kind == "U":
        group.create_dataset(name, data=value.astype(object), dtype=h5py.string_dtype())
    else:
        arr = np.asarray(value)
        kw = {"compression": "gzip", "compression_opts": 1} if arr.size > 4096 else {}
        group.create_dataset(name, data=arr, **kw)


def _read_array(obj):
    if isinstance(obj, h5py.Group):
        if obj.attrs.get("encoding") != _SPARSE_TAG:
            raise CacheError(f"unknown group encoding in {obj.name}")
        shape = tuple(int(s) for s in obj.attrs["shape"])
        return sp.csr_matrix((obj["data"][()], obj["indices"][()], obj["indptr"][()]), shape=shape)
    value = obj[()]
    if obj.dtype.kind == "O" or h5py.check_string_dtype(obj.dtype) is not None:
        return np.asarray([v.decode() if isinstance(v, bytes) else str(v) for v in np.atleast_1d(value)])
    return value


def content_hash(arrays: dict, params: dict) -> str:
    """sha256 over the params and every array's name, dtype, shape and bytes (sparse: its CSR
    parts), in name order: what a reader recomputes to catch flipped bytes or edited attrs."""
    import hashlib

    h = hashlib.sha256(canonical_json(params).encode())
    for name in sorted(arrays):
        value = arrays[name]
        if value is None:
            continue
        if sp.issparse(value):
            m = sp.csr_matrix(value)
            parts = [("shape", np.asarray(m.shape, dtype=np.int64)), ("data", m.data),  # index dtypes
                     ("indices", m.indices.astype(np.int64)), ("indptr", m.indptr.astype(np.int64))]  # vary on read
        else:
            arr = np.asarray(value)
            if arr.dtype.kind in "OU":  # strings: hash their UTF-8 text
                arr = np.frombuffer("\x1f".join(map(str, arr.ravel())).encode(), dtype=np.uint8)
            parts = [("", arr)]
        for part, a in parts:
            a = np.ascontiguousarray(a)
            h.update(f"{name}/{part}:{a.dtype.str}:{a.shape}".encode())
            h.update(a.tobytes() if a.size == 0 else memoryview(a).cast("B"))  # n x 0: no bytes
    return h.hexdigest()


def write_h5(path, kind: str, arrays: dict, params: dict, inputs: dict | None = None,
             build_seconds: float | None = None, extra_attrs: dict | None = None) -> None:
    """Write ``arrays`` (name -> ndarray or sparse matrix) atomically with the standard attrs."""
    t0 = time.perf_counter()
    with atomic_path(path, suffix=".h5") as tmp:
        with h5py.File(tmp, "w") as fh:
            for name, value in arrays.items():
                if value is not None:
                    _write_array(fh, name, value)
            a = fh.attrs
            a["gssl_kind"] = kind
            a["gssl_version"] = __version__
            a["params"] = canonical_json(params)
            a["params_hash"] = params_hash(params)
            a["inputs"] = canonical_json(inputs or {})
            a["created"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
            a["build_seconds"] = float(build_seconds if build_seconds is not None else 0.0)
            a["write_seconds"] = time.perf_counter() - t0
            for k, v in (extra_attrs or {}).items():
                a[k] = canonical_json(v) if isinstance(v, (dict, list)) else v
            a["content_sha256"] = content_hash(arrays, params)
            a["complete"] = True  # last: a file without it was never finished


def _fix_hint(path, rule: str | None) -> str:
    hint = f"delete it (rm {path})"
    if rule:
        hint += f" or rerun its rule (snakemake --forcerun {rule})"
    return hint


def read_attrs(path, kind: str | None = None, rule: str | None = None) -> dict:
    """Open ``path`` and return its decoded attrs, checking that it is a complete gssl file."""
    path = Path(path)
    if not path.exists():
        raise CacheError(f"{path}: file does not exist")
    try:
        with h5py.File(path, "r") as fh:
            attrs = dict(fh.attrs)
    except OSError as exc:
        raise CacheError(f"{path}: not a readable HDF5 file ({exc}); it is truncated or foreign: "
                         f"{_fix_hint(path, rule)}") from exc
    return _check_attrs(path, attrs, kind, rule)


def _check_attrs(path, attrs: dict, kind: str | None, rule: str | None) -> dict:
    if "gssl_kind" not in attrs:
        raise CacheError(f"{path}: HDF5 file was not written by gssl (no 'gssl_kind' attribute): "
                         f"{_fix_hint(path, rule)}")
    if not bool(attrs.get("complete", False)):
        raise CacheError(f"{path}: file was not completely written: {_fix_hint(path, rule)}")
    if kind is not None and attrs["gssl_kind"] != kind:
        raise CacheError(f"{path}: holds a {attrs['gssl_kind']!r} file, expected {kind!r}: "
                         f"{_fix_hint(path, rule)}")
    out = dict(attrs)
    for key in ("params", "inputs"):
        out[key] = json.loads(attrs[key])
    return out


def read_h5(path, kind: str, expect_params: dict | None = None, required: tuple = (),
            rule: str | None = None) -> tuple[dict, dict]:
    """Read every array of a gssl HDF5 file; return (arrays, attrs).

    ``expect_params``: parameters the caller expects the file to have been built with (checked by
    hash). ``required``: array names that must be present.
    """
    path = Path(path)
    attrs = read_attrs(path, kind, rule)
    if expect_params is not None and attrs["params_hash"] != params_hash(expect_params):
        raise CacheError(f"{path}: built with params {attrs['params']}, expected {expect_params}: "
                         f"{_fix_hint(path, rule)}")
    try:
        with h5py.File(path, "r") as fh:
            arrays = {name: _read_array(fh[name]) for name in fh.keys()}
    except (OSError, KeyError, ValueError) as exc:
        raise CacheError(f"{path}: cannot read arrays ({exc}): {_fix_hint(path, rule)}") from exc
    missing = [r for r in required if r not in arrays]
    if missing:
        raise CacheError(f"{path}: missing arrays {missing}: {_fix_hint(path, rule)}")
    if attrs["params_hash"] != params_hash(attrs["params"]):
        raise CacheError(f"{path}: its params attribute does not match its params_hash (the file was "
                         f"edited): {_fix_hint(path, rule)}")
    expected = attrs.get("content_sha256")
    if expected is None:  # every file gssl writes has one: an older writer's, or an edited file
        raise CacheError(f"{path}: has no content_sha256 checksum to verify its arrays against: "
                         f"{_fix_hint(path, rule)}")
    if content_hash(arrays, attrs["params"]) != expected:
        raise CacheError(f"{path}: its contents do not match their checksum (bit rot or an edit; "
                         f"content_sha256 {expected[:12]}...): {_fix_hint(path, rule)}")
    return arrays, attrs


def describe(path) -> str:
    """Human-readable summary of a gssl HDF5 file (used by ``gssl graph info``)."""
    attrs = read_attrs(path)
    lines = [f"file:          {path}",
             f"kind:          {attrs['gssl_kind']}",
             f"gssl version:  {attrs['gssl_version']}",
             f"created:       {attrs['created']}",
             f"build seconds: {float(attrs['build_seconds']):.3f}",
             f"params_hash:   {attrs['params_hash']}",
             f"params:        {canonical_json(attrs['params'])}",
             f"inputs:        {canonical_json(attrs['inputs'])}"]
    skip = {"gssl_kind", "gssl_version", "created", "build_seconds", "params_hash", "params",
            "inputs", "complete", "write_seconds"}
    for k, v in attrs.items():
        if k not in skip:
            lines.append(f"{k + ':':<14} {v}")  # a space even after keys longer than the column
    lines.append("arrays:")
    with h5py.File(path, "r") as fh:
        for name in sorted(fh.keys()):
            obj = fh[name]
            if isinstance(obj, h5py.Group):
                shape = tuple(int(s) for s in obj.attrs["shape"])
                nnz = obj["data"].shape[0]
                lines.append(f"  {name:<12} sparse CSR {shape[0]}x{shape[1]}, nnz={nnz}, "
                             f"dtype={obj['data'].dtype}")
            else:
                lines.append(f"  {name:<12} {obj.dtype} {obj.shape}")
    return "\n".join(lines)
