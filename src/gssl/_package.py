"""Package infrastructure that imports nothing of gssl: its version, and the helper by which gssl,
gssl.optim and gssl.solvers import names on first use. A module of its own so that importing it
does not pull in gssl/__init__.py (whose package would otherwise enter every rule's code hash as
every file below it)."""

from __future__ import annotations

import importlib

__version__ = "0.1.0"


def lazy_attributes(package: str, table: dict[str, str], namespace: dict):
    """``(__getattr__, __dir__)`` for a package (PEP 562): a name in ``table`` (name -> defining
    module; gssl.store.hashing reads these ``_LAZY`` tables too) is imported from its module on
    first use; ``namespace`` is the package's globals()."""

    def __getattr__(name):
        if name in table:
            return getattr(importlib.import_module(table[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted([*namespace, *table])

    return __getattr__, __dir__
