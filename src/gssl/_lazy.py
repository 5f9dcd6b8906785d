"""Names a package imports on first use (PEP 562): one implementation for gssl, gssl.optim and
gssl.solvers, whose ``_LAZY`` tables (name -> defining module) gssl.store.hashing also reads."""

from __future__ import annotations

import importlib


def lazy_attributes(package: str, table: dict[str, str], namespace: dict):
    """``(__getattr__, __dir__)`` for a package: a name in ``table`` is imported from its module
    on first use; ``namespace`` is the package's globals()."""

    def __getattr__(name):
        if name in table:
            return getattr(importlib.import_module(table[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted([*namespace, *table])

    return __getattr__, __dir__
