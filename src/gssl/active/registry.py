"""Acquisition names used in configs -> classes, like solvers (:mod:`gssl.solvers.registry`).

A config's ``acquisition:`` is one of gssl's names (:data:`gssl.active.acquisitions.ACQUISITIONS`),
a name an installed package registers under the ``gssl.acquisitions`` entry-point group, or an
import path ``package.module:ClassName`` of an :class:`~gssl.active.acquisitions.Acquisition`
subclass; :func:`acquisition_class` resolves all three and :func:`make_acquisition` builds one
with its parameters validated.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..registries import configured, entry_point_plugins, lookup
from .acquisitions import ACQUISITIONS, Acquisition

ENTRY_POINT_GROUP = "gssl.acquisitions"

HOW_TO_WRITE = ("subclass gssl.active.Acquisition and implement values(scores, candidates) -> one "
                "value per candidate, larger = more useful to label (start/update where it keeps "
                "a state)")


def plugin_acquisitions() -> dict:
    """Entry points of installed packages in the ``gssl.acquisitions`` group (gssl's names win)."""
    return entry_point_plugins(ENTRY_POINT_GROUP, ACQUISITIONS)


def acquisition_names() -> tuple[str, ...]:
    return (*ACQUISITIONS, *sorted(plugin_acquisitions()))


def acquisition_class(name: str):
    """The Acquisition subclass ``name`` stands for; ConfigError naming the problem and the fix."""
    if not isinstance(name, str):
        raise ConfigError(f"acquisition must be a name or an import path 'package.module:Class', "
                          f"got {name!r}")
    cls = lookup(name, "acquisition", ACQUISITIONS, ENTRY_POINT_GROUP)
    if cls is None:
        raise ConfigError(f"unknown acquisition {name!r}; known: {sorted(acquisition_names())}; "
                          f"or give an import path 'package.module:ClassName' of your own")
    if name in ACQUISITIONS:  # gssl's own: no check needed
        return cls
    if not (isinstance(cls, type) and issubclass(cls, Acquisition)):
        raise ConfigError(f"acquisition {name!r} is {cls!r}, not an Acquisition class: {HOW_TO_WRITE}")
    if cls.values is Acquisition.values:
        raise ConfigError(f"acquisition {name!r}: {cls.__name__} does not implement values(): "
                          f"{HOW_TO_WRITE}")
    return cls


def make_acquisition(name: str, params: dict | None = None) -> Acquisition:
    """A configured acquisition: ``make_acquisition("model_change", {"measure": "entropy"})``;
    unknown parameters and bad values raise ConfigError."""
    return configured(acquisition_class(name), dict(params or {}), f"acquisition {name!r}")


def acquisition_modules(name: str) -> list[str]:
    """Modules whose source determines an active method's results beyond its solver's (for rerun
    hashes): the loop and gssl's acquisitions with their gssl imports, and a plugin's module."""
    from ..store.hashing import import_closure, plugin_closure

    mods = {*import_closure("gssl.pipeline.active_split"), "gssl.pipeline.active_split",
            *import_closure("gssl.active"), "gssl.active"}
    module = acquisition_class(name).__module__
    if not module.startswith("gssl."):  # a plugin: with what it imports from its own package or folder
        mods |= {*plugin_closure(module), module}
    return sorted(mods)
