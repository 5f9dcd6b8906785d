"""Stable hashes: of parameters (canonical JSON), of files, of arrays and of module sources."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def canonical_json(obj) -> str:
    """JSON with sorted keys and no whitespace, so equal parameters give equal text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default)


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__} to JSON")


def params_hash(obj, length: int = 16) -> str:
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:length]


def file_sha256(path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def array_fingerprint(*arrays) -> str:
    """sha256 over dtype, shape and bytes of each array (CSR matrices: canonical CSR parts)."""
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"none")
            continue
        if sp.issparse(a):
            a = sp.csr_matrix(a)
            a.sum_duplicates()
            a.sort_indices()
            parts = [np.asarray(a.shape, dtype=np.int64), a.indptr.astype(np.int64),
                     a.indices.astype(np.int64), a.data]
        else:
            a = np.asarray(a)
            if a.dtype.kind in "US":
                a = np.asarray([s.encode() if isinstance(s, str) else s for s in a.ravel()], dtype=object)
                h.update(b"|".join(a.tolist()))
                continue
            parts = [np.asarray(a.shape, dtype=np.int64), a]
        for p in parts:
            p = np.ascontiguousarray(p)
            h.update(p.dtype.str.encode())
            h.update(p.tobytes())
    return h.hexdigest()


def module_source_hash(*modules: str, length: int = 16) -> str:
    """Hash of the source files of the given importable modules (packages: every .py below them).

    Snakemake does not see code a script imports; rules put this hash in ``params:`` so that editing
    a module reruns exactly the jobs that use it.
    """
    h = hashlib.sha256()
    for name in sorted(set(modules)):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ImportError(f"module {name!r} not found")
        origin = Path(spec.origin)
        files = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
        for f in files:
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:length]


def import_closure(*modules: str, package: str = "gssl", follows=None) -> list[str]:
    """The modules of ``package`` that the given modules import, directly or not (themselves included).

    Read from the source (``ast``), so lazy imports inside functions count too. A name imported
    from a package resolves to its submodule when there is one, else to the package's ``__init__``
    (whose own imports are then followed): import from submodules to keep closures narrow.
    ``follows``, a test of a top-level name, widens ``package`` (:func:`plugin_closure`).
    """
    def inside(top: str) -> bool:
        return top == package or (follows is not None and follows(top))

    seen, todo = set(), list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ImportError(f"module {name!r} not found")
        seen.add(name)
        is_pkg = spec.submodule_search_locations is not None
        for level, base, names in _import_statements(*_source_key(spec.origin)):
            if level:
                parts = name.split(".") if is_pkg else name.split(".")[:-1]
                parts = parts[: len(parts) - (level - 1)]
                base = ".".join(parts + ([base] if base else []))
            if not inside(base.split(".")[0]):
                continue
            if names is None:  # import a.b
                todo.append(base)
                continue
            base_spec = importlib.util.find_spec(base)
            if base_spec is None:
                raise ImportError(f"{name} imports {base!r}, which is not found")
            for alias in names:
                sub = f"{base}.{alias}"
                is_sub = (base_spec.submodule_search_locations is not None
                          and importlib.util.find_spec(sub) is not None)
                lazy = [] if is_sub else _lazy_module(base, alias)
                todo += [sub] if is_sub else lazy or [base]
    return sorted(seen)


def _source_key(origin: str) -> tuple[str, int, int]:
    stat = Path(origin).stat()
    return origin, stat.st_mtime_ns, stat.st_size


@functools.cache  # keyed by the file's modification time and size: an edited file is read again
def _import_statements(origin: str, mtime_ns: int, size: int) -> tuple:
    """A source file's import statements, nested ones included, as (level, module, names):
    names None for ``import module``. Solvers' closures share most of gssl: each file is parsed
    once a process, not once per closure (planning computes one closure per solver)."""
    import ast

    out = []
    for node in ast.walk(ast.parse(Path(origin).read_text(), filename=origin)):
        if isinstance(node, ast.Import):
            out += [(0, a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node.level, node.module or "", tuple(a.name for a in node.names)))
    return tuple(out)


def _lazy_module(base: str, name: str) -> list[str]:
    """The module a package's ``__init__`` imports ``name`` from on first use (PEP 562: its
    ``_LAZY`` table, as gssl's, gssl.optim's and gssl.solvers's), else nothing."""
    import importlib

    if importlib.util.find_spec(base).submodule_search_locations is None:
        return []
    module = getattr(importlib.import_module(base), "_LAZY", {}).get(name)
    return [module] if module else []


def plugin_closure(module: str, package: str = "gssl") -> list[str]:
    """:func:`import_closure` of a plugin's module (a solver or dataset loader outside gssl): the
    ``package`` modules it imports, and its own, those of its package or folder that it imports
    directly or not (a helper module beside it, a sibling in its package), themselves included.
    A module in the same folder that another installed distribution owns (numpy in
    site-packages, beside a plugin pip installed as one module) is not its own."""
    from importlib.metadata import packages_distributions

    top = module.split(".")[0]
    if top == package:
        return import_closure(module, package=package)
    root = _import_root(top)
    # top-level name -> the distributions that install it: read (0.1-1 s) only for a module in
    # the plugin's folder, once
    dists = functools.cache(packages_distributions)

    def own(name: str) -> bool:
        if name == top:
            return True
        if root is None or _import_root(name) != root:
            return False
        theirs, owners = dists().get(name), dists().get(top)
        return not theirs or (owners is not None and bool(set(theirs) & set(owners)))

    return import_closure(module, package=package, follows=own)


def _import_root(top: str):
    """The folder on sys.path a top-level module or package is imported from; None for a
    built-in, frozen or missing one."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations is not None:  # a package (regular or namespace)
        locations = list(spec.submodule_search_locations)
        return Path(locations[0]).resolve().parent if locations else None
    if not spec.has_location or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent
