"""Streaming downloads with retries, sha256 verification and atomic placement into raw_dir.

A *source* is a string: an http(s):// or file:// URL, or a local file path. Sources are tried in
order; each is retried on transient failures (5xx, 429, connection errors, timeouts) with
exponential backoff. Bytes are streamed into a temporary file beside the target, hashed on the way,
and renamed into place only when the sha256 matches, so raw_dir never holds a bad or partial file.
"""

from __future__ import annotations

import hashlib
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

from ..errors import ChecksumError, SourcesUnavailableError
from ..store.h5io import atomic_path
from ..store.hashing import file_sha256
from .registry import DatasetSpec, FileSpec, get_spec

CHUNK = 1 << 20
USER_AGENT = "gssl-dataset-fetch/0.1"


class _Permanent(Exception):
    """A failure that retrying the same source cannot fix (404, missing local file)."""


def default_mirror() -> str | None:
    """The mirror named by ``GSSL_DATA_MIRROR`` (empty means none)."""
    return os.environ.get("GSSL_DATA_MIRROR") or None


def offline() -> bool:
    """``GSSL_OFFLINE=1``: use the mirror only, never the public URLs (air-gapped clusters, tests)."""
    return os.environ.get("GSSL_OFFLINE", "").strip().lower() not in ("", "0", "false", "no")


def mirror_source(mirror: str | os.PathLike, folder: str, filename: str) -> str:
    """The source string of ``<mirror>/<folder>/<filename>`` (URL join or filesystem path)."""
    m = str(mirror)
    if m.startswith(("http://", "https://", "file://")):
        return f"{m.rstrip('/')}/{folder}/{filename}"
    return str(Path(m) / folder / filename)


def sources_for(spec: DatasetSpec, file: FileSpec, mirror=None, public: bool = True) -> list[str]:
    """Sources of ``file`` in the order tried: the mirror (if any), then its public URLs."""
    out = [mirror_source(mirror, spec.folder, file.name)] if mirror else []
    return out + (list(file.urls) if public else [])


def _open(source: str, timeout: float):
    """Open a source for streaming; raise _Permanent for failures retrying cannot fix."""
    if not source.startswith(("http://", "https://", "file://")):
        try:
            return open(source, "rb")
        except FileNotFoundError as exc:
            raise _Permanent(f"no such file: {source}") from exc
    req = urllib.request.Request(source, headers={"User-Agent": USER_AGENT})
    try:
        return urllib.request.urlopen(req, timeout=timeout)  # noqa: S310 (schemes checked above)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code >= 500 or exc.code == 429:
            raise
        raise _Permanent(f"HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, FileNotFoundError) or source.startswith("file://"):
            raise _Permanent(str(exc.reason)) from exc
        raise


def _stream_once(source: str, dest: Path, sha256: str, timeout: float) -> Path:
    """Copy one source into ``dest`` atomically; ChecksumError (nothing kept) on a sha mismatch."""
    h = hashlib.sha256()
    with atomic_path(dest) as tmp:
        with _open(source, timeout) as src, open(tmp, "wb") as out:
            for block in iter(lambda: src.read(CHUNK), b""):
                h.update(block)
                out.write(block)
        actual = h.hexdigest()
        if actual != sha256:
            raise ChecksumError(f"{source}: sha256 mismatch for {dest.name}: expected {sha256}, "
                                f"actual {actual}; the source serves other bytes (file not kept)")
    return dest


def _try_source(source: str, dest: Path, sha256: str, retries: int, backoff: float, timeout: float) -> Path:
    """Fetch from one source, retrying transient errors ``retries`` times with backoff*2^k sleeps."""
    for attempt in range(retries + 1):
        try:
            return _stream_once(source, dest, sha256, timeout)
        except (ChecksumError, _Permanent):
            raise
        except (urllib.error.URLError, OSError, TimeoutError) as exc:  # HTTPError is a URLError
            if attempt == retries:
                raise
            time.sleep(backoff * 2**attempt)
    raise AssertionError("unreachable")


def download_file(filename: str, sha256: str, sources: list[str], raw_dir, retries: int = 3,
                  backoff: float = 0.5, timeout: float = 60.0) -> Path:
    """Ensure ``raw_dir/filename`` exists with ``sha256``, fetching it from the first source that works.

    A file already present with the right sha256 is not fetched again. If every source fails:
    ChecksumError when some source served wrong bytes, else SourcesUnavailableError; either lists
    every source with its error.
    """
    dest = Path(raw_dir) / filename
    if dest.is_file() and file_sha256(dest) == sha256:
        return dest
    errors: list[tuple[str, Exception]] = []
    for source in sources:
        try:
            return _try_source(source, dest, sha256, retries, backoff, timeout)
        except (ChecksumError, _Permanent, urllib.error.URLError, OSError, TimeoutError) as exc:
            errors.append((source, exc))
    detail = "\n".join(f"  - {s}: {type(e).__name__}: {e}" for s, e in errors) or "  (no sources given)"
    if any(isinstance(e, ChecksumError) for _, e in errors):
        raise ChecksumError(f"no source served {filename} with sha256 {sha256}:\n{detail}")
    raise SourcesUnavailableError(
        f"could not fetch {filename} from any source:\n{detail}\n"
        f"Set GSSL_DATA_MIRROR to a folder or URL that holds <dataset>/{filename}, or check the network"
        f"{' (GSSL_OFFLINE is set: public URLs were not tried)' if offline() else ''}.")


def fetch(name: str, raw_dir, mirror=None, *, spec: DatasetSpec | None = None,
          public: bool | None = None,
          retries: int = 3, backoff: float = 0.5, timeout: float = 60.0) -> dict[str, Path]:
    """Fetch every file of dataset ``name`` into ``raw_dir``; return {file name: path}.

    mirror: folder or http(s) base URL tried first (default ``GSSL_DATA_MIRROR``). spec: a
    DatasetSpec to use instead of the registry's (tests inject loopback URLs this way). public:
    False skips the public URLs (default: skip them when ``GSSL_OFFLINE`` is set). Bundled and
    generated datasets need no files: returns {}.
    """
    spec = spec or get_spec(name)
    public = not offline() if public is None else public
    if spec.kind != "mirror":
        return {}
    mirror = mirror if mirror is not None else default_mirror()
    Path(raw_dir).mkdir(parents=True, exist_ok=True)
    return {f.name: download_file(f.name, f.sha256, sources_for(spec, f, mirror, public), raw_dir,
                                  retries=retries, backoff=backoff, timeout=timeout)
            for f in spec.files}


def local_mirror_files(spec: DatasetSpec, mirror) -> dict[str, Path] | None:
    """Paths of the dataset's files in a local mirror folder if all are there with the right sha256."""
    if not mirror or str(mirror).startswith(("http://", "https://", "file://")):
        return None
    paths = {f.name: Path(mirror) / spec.folder / f.name for f in spec.files}
    for f in spec.files:
        p = paths[f.name]
        if not p.is_file():
            return None
        if file_sha256(p) != f.sha256:
            raise ChecksumError(f"{p}: sha256 mismatch: expected {f.sha256}, actual {file_sha256(p)}; "
                                f"the mirror copy is corrupt: replace it")
    return paths


__all__ = ["download_file", "fetch", "sources_for", "mirror_source", "default_mirror",
           "local_mirror_files"]
