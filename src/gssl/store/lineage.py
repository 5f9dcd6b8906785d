"""Where each cache file came from: the content hash of every gssl file it was built from.

A cache file's ``inputs`` attribute maps the name of each input (``data``, ``features``, ...) to
that input's *digest*: the ``content_sha256`` a gssl file carries (:mod:`.h5io`), or, for a file
gssl did not write (a raw data file), its sha256. A reader given a file and the files it should
have been built from checks each recorded digest against the file it was given
(:func:`check_inputs`): a valid file of another dataset (same shape, same params) copied into an
input's place is refused by name.

Cheap by design: a gssl file's digest is an attribute, read without touching its arrays (a few
milliseconds, whatever the file's size), and kept per process by (path, size, mtime, inode). The
digest's truth is checked where the file's arrays are read: every :func:`~.h5io.read_h5`
recomputes ``content_sha256``. Nothing is re-hashed on a read, except a file written before
lineage was recorded: its ``inputs`` hold the sha256 of its inputs' bytes, recomputed (once per
process) only when the digest does not match.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from ..errors import CacheError

LINEAGE_TAG = "gssl.lineage"  # a job's runs: JSON, the content digest of each input file


def digest(path) -> str:
    """The content digest of a gssl file (its ``content_sha256`` attribute); CacheError, naming
    the file, for one that is missing or is not a complete gssl file."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise CacheError(f"{path}: file does not exist") from None
    return _digest(str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)


@functools.lru_cache(maxsize=256)
def _digest(path: str, size: int, mtime_ns: int, ino: int) -> str:
    from .h5io import read_attrs

    value = read_attrs(path).get("content_sha256")
    if value is None:
        raise CacheError(f"{path}: has no content_sha256 to trace it by: delete it (rm {path}) and rerun")
    return str(value)


@functools.lru_cache(maxsize=64)
def _bytes_sha256(path: str, size: int, mtime_ns: int, ino: int) -> str:
    from .hashing import file_sha256

    return file_sha256(path)


def input_digests(**paths) -> dict:
    """``{name: digest}`` of each input file: what a writer records in its ``inputs``."""
    return {name: digest(p) for name, p in paths.items() if p is not None}


def matches(recorded: str | None, path) -> bool:
    """Whether ``recorded`` (a digest an ``inputs`` attribute holds) names the file ``path``: its
    content digest, or (a file written before lineage was recorded) the sha256 of its bytes."""
    if recorded is None:
        return False
    if recorded == digest(path):
        return True
    st = os.stat(path)
    return recorded == _bytes_sha256(str(Path(path).resolve()), st.st_size, st.st_mtime_ns, st.st_ino)


def rebuild_hint(path, rule: str | None) -> str:
    """The command that rebuilds ``path``: a forced rerun of that very file (a plain rerun finds
    nothing to do when the file is newer than its inputs, as a copied one is)."""
    cmd = f"snakemake --configfile <the config you ran> --cores N --forcerun {path}"
    return f"rebuild it ({cmd})" + (f", or every {rule} file (--forcerun {rule})" if rule else "")


def check_inputs(path, attrs: dict, rule: str | None = None, strict: bool = True, **given) -> None:
    """Refuse ``path`` (whose decoded attrs are ``attrs``) unless each file in ``given`` (name ->
    path; None: not given) is the one it was built from. The message names both files, and
    the command that rebuilds ``path`` from the inputs given. ``strict=False``: a file that
    records no input of that name (one written by hand with the library) is let through."""
    recorded = attrs.get("inputs") or {}
    for name, upstream in given.items():
        if upstream is None:
            continue
        want = recorded.get(name)
        if want is None and not strict:
            continue
        if want is None:
            raise CacheError(f"{path}: records no {name} file it was built from (it predates lineage, "
                             f"or was built without one), so it cannot be traced to {upstream}: "
                             f"{rebuild_hint(path, rule)}")
        if not matches(want, upstream):
            raise CacheError(f"{path}: was built from a {name} file with content_sha256 {str(want)[:12]}..., "
                             f"but {upstream} has {digest(upstream)[:12]}...: it belongs to another "
                             f"dataset or config (a file copied in?): {rebuild_hint(path, rule)}")


def same_source(name: str, first: tuple, second: tuple) -> None:
    """Two files that should share an input (``first`` and ``second``: (path, attrs)), e.g. the
    data file a features and a splits file were built from: CacheError naming both if not."""
    (p1, a1), (p2, a2) = first, second
    d1, d2 = (a1.get("inputs") or {}).get(name), (a2.get("inputs") or {}).get(name)
    if d1 is not None and d2 is not None and d1 != d2:
        raise CacheError(f"{p1} and {p2} were built from different {name} files ({str(d1)[:12]}... and "
                         f"{str(d2)[:12]}...): one belongs to another dataset; `gssl verify` names "
                         f"which, and the command that rebuilds it")
