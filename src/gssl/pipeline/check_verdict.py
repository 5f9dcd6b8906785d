"""A passed config check, kept for the next plan of the same config on the same inputs.

``snakemake`` and ``snakemake -n`` plan in a new process each time, and the config check before
any job imports every solver the config names to check its parameters (scikit-learn and SciPy's
statistics: about 1.3 s of a 2.7 s dry run). The checked config (defaults filled in) is kept
under the planning folder (:data:`gssl.pipeline.paths.PLANNING`) and used again when everything
the check reads is unchanged: the config as given (in its order), the working directory, gssl's
own sources, Python, the import path and the installed packages (the modification time of each
site-packages and PYTHONPATH folder: an install or upgrade changes it), ``GSSL_*`` environment
variables, the data files' sizes and modification times, and the sources of the plugins the
config names (a solver, acquisition function or dataset loader of one's own, with what it
imports from its own folder). A refusal is never kept: the check runs again, with its message,
until the config passes. Nothing in it is a job's output; deleting it is safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

_FORMAT = 1  # of the stored file


def load_checked(config: dict, cache_dir) -> tuple[bool, str | None]:
    """(True, None) when a stored check of this config on these inputs was found: ``config`` is
    then filled in place with its checked form. Else (False, the key to store the checked config
    under after the check; None when this config cannot be kept)."""
    key = verdict_key(config)
    if key is None:
        return False, None
    try:
        stored = json.loads((Path(cache_dir) / f"config-{key[:24]}.json").read_text())
    except (OSError, ValueError):
        return False, key
    if isinstance(stored, dict) and stored.get("key") == key and isinstance(stored.get("config"), dict):
        config.clear()
        config.update(stored["config"])
        return True, None
    return False, key


def store_checked(config: dict, key: str | None, cache_dir) -> None:
    """Keep the checked ``config`` under ``key`` (a config that JSON cannot give back as it is,
    e.g. with non-string keys, is not kept)."""
    from ..store.h5io import atomic_write_text

    if key is None:
        return
    try:
        text = json.dumps({"key": key, "config": config})  # in its order: jobs' params print it as it is
        if json.loads(text)["config"] != config:
            return
        atomic_write_text(Path(cache_dir) / f"config-{key[:24]}.json", text)
    except (TypeError, ValueError, OSError):  # not JSON, or a read-only results folder
        pass


def verdict_key(config: dict) -> str | None:
    """The hash of everything the check reads; None when part of it cannot be known without the
    check itself (a data file or plugin that cannot be found or read: the check names the
    problem)."""
    try:
        parts = {"format": _FORMAT, "cwd": str(Path.cwd().resolve()),
                 # in its order: the replayed config is the stored one, and order is seen (a job's
                 # params print the entries as they are; a grid's points follow its keys)
                 "config": json.dumps(config, separators=(",", ":")),
                 "gssl": _gssl_sources(), "installed": _import_folders(),
                 "env": sorted((k, v) for k, v in os.environ.items() if k.startswith("GSSL_")),
                 "files": _data_files(config), "plugins": _plugin_sources(config)}
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    except Exception:  # noqa: BLE001 -- anything unreadable or unimportable: no key, the check says what
        return None


class _Unknown(Exception):
    """Part of the key cannot be known without the check."""


def _gssl_sources() -> list[str]:
    """gssl's code (every module, the registries' declarations among them) and its config schema."""
    from ..store.hashing import module_source_hash
    from .schema import schema_text

    return [module_source_hash("gssl", length=64), hashlib.sha256(schema_text().encode()).hexdigest()]


def _import_folders() -> list:
    """Python's version, the import path, and the modification time of each folder of installed
    distributions and each ``PYTHONPATH`` folder: installing, upgrading or removing a
    distribution (or a plugin's dist-info) adds or removes entries there."""
    watched = {p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")}
    watched |= {p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    return [sys.version, sys.path, *([p, os.stat(p).st_mtime_ns] for p in sorted(watched) if os.path.isdir(p))]


def _data_files(config: dict) -> list:
    """Each ``source: file`` dataset's files with their size and modification time."""
    from ..datasets import FILE_SOURCE
    from ..datasets.files import FileSource

    out = []
    for did, entry in sorted((config.get("datasets") or {}).items()):
        if isinstance(entry, dict) and entry.get("source") == FILE_SOURCE:
            try:
                src = FileSource.from_entry(entry, f"datasets.{did}")
                out.append([did, [[str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns] for p in src.files]])
            except Exception as exc:  # the check says what is wrong with the entry or the file
                raise _Unknown(did) from exc
    return out


def _plugin_sources(config: dict) -> list:
    """The source hash of each plugin the config names (its module and what it imports from its
    own folder or package): an edit there may change what the check finds."""
    from ..store.hashing import module_source_hash, plugin_closure

    return [[name, module_source_hash(*plugin_closure(module))] for name, module in sorted(_plugins(config))]


def _plugins(config: dict) -> set:
    """(name, module) of each solver, acquisition function and dataset loader the config names by
    an import path or an entry point (a name that is neither is gssl's own, or unknown: the check
    refuses that, and a refusal is not kept)."""
    named = set()
    for entry in (config.get("methods") or {}).values():
        if isinstance(entry, dict):
            named.add(("gssl.solvers", entry.get("solver")))
            if isinstance(entry.get("active"), dict):
                named.add(("gssl.acquisitions", entry["active"].get("acquisition")))
    for entry in (config.get("datasets") or {}).values():
        if isinstance(entry, dict):
            named.add(("gssl.datasets", entry.get("source")))
    found, others = set(), []
    for group, name in named:
        if not isinstance(name, str):
            raise _Unknown(name)
        own = None if ":" in name else _own(group, name)
        if ":" in name:
            found.add((name, name.partition(":")[0]))
        elif own:
            found.add((name, own))
        elif own is None:
            others.append((group, name))
    if others:  # one scan of the installed entry points (some 40 ms)
        from importlib.metadata import entry_points

        eps = entry_points()
        for group, name in others:
            found.update((name, ep.module) for ep in eps.select(group=group, name=name))
    return found


def _own(group: str, name: str) -> str | None:
    """"" when ``name`` is one of gssl's own in ``group``; the module of a class or loader
    registered under a gssl name at run time (``register()``), whose source is then hashed; None
    when it is neither (imports no solver)."""
    if group == "gssl.solvers":
        from ..solvers.registry import SOLVERS

        if name not in SOLVERS:
            return None
        module = SOLVERS.module_of(name)
    elif group == "gssl.datasets":
        from ..datasets.registry import FILE_SOURCE, REGISTRY

        if name == FILE_SOURCE:
            return ""
        if name not in REGISTRY:
            return None
        module = getattr(REGISTRY[name].loader, "__module__", None) or ""
    else:
        return None
    return "" if module.startswith("gssl.") else module
