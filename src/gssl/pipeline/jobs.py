"""Helpers for workflow job scripts: logging to the rule's log file and thread limits."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import traceback
from pathlib import Path

from ..errors import GsslError, mask_credentials


@contextlib.contextmanager
def job_context(log_path, threads: int = 1):
    """Log to ``log_path``, cap BLAS/OpenMP and numba threads at ``threads``, and record any
    failure.

    The traceback goes to the log and the exception propagates, so Snakemake marks the job failed
    and removes its outputs.
    """
    from threadpoolctl import threadpool_limits

    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_path, mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    try:
        with threadpool_limits(limits=max(1, int(threads))), numba_threads(threads):
            yield logging.getLogger("gssl.job")
    except BaseException as exc:
        what = mask_credentials(str(exc) if isinstance(exc, GsslError) else f"{type(exc).__name__}: {exc}")
        root.error("job failed: %s\n%s", what, mask_credentials(traceback.format_exc()))
        print(f"gssl job failed: {what} (log: {log_path})", file=sys.stderr)
        raise
    finally:
        root.removeHandler(handler)
        handler.close()


@contextlib.contextmanager
def numba_threads(threads: int):
    """numba's thread pool (the compiled MTV kernels) limited to ``threads`` inside the block.

    When numba is not loaded yet (most jobs never load it) its pool is sized through
    NUMBA_NUM_THREADS for a later import instead of importing it here (~0.3 s per job)."""
    n = max(1, min(int(threads), os.cpu_count() or 1))
    numba = sys.modules.get("numba")
    if numba is None:
        previous = os.environ.get("NUMBA_NUM_THREADS")
        os.environ["NUMBA_NUM_THREADS"] = str(n)
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop("NUMBA_NUM_THREADS", None)
            else:
                os.environ["NUMBA_NUM_THREADS"] = previous
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def git_commit(path=".") -> str | None:
    """Commit of the checkout at ``path`` (with ``-dirty`` if it has local changes), or None.

    Recorded as a tag only, never as a rule param: a new commit must not rerun finished jobs.
    """
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=path,
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}-dirty" if dirty else head
