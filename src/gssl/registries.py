"""What the solver and acquisition registries share (:mod:`gssl.solvers.registry`,
:mod:`gssl.active.registry`): a config's name resolved to a class (gssl's own, an import path
``package.module:Class``, or an installed package's entry point) and an instance made with its
parameters validated, each failure a ConfigError that names what was given and the fix."""

from __future__ import annotations

import importlib

from .errors import ConfigError


def entry_point_plugins(group: str, own) -> dict:
    """Entry points of installed packages in ``group``, by name (gssl's ``own`` names win)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=group) if ep.name not in own}


def load_import_path(path: str, what: str):
    """The object an import path ``package.module:attr`` names; ConfigError naming ``what`` it
    was given as (a solver, an acquisition function) and the fix."""
    module, _, attr = path.partition(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name != module and not module.startswith(exc.name + "."):  # a dependency
            raise ConfigError(f"{what} {path!r}: module {module!r} imports {exc.name!r}, which is "
                              f"not installed ({exc})") from exc
        raise ConfigError(f"{what} {path!r}: module {module!r} cannot be imported ({exc}); is it "
                          f"installed, or on PYTHONPATH where snakemake runs?") from exc
    except Exception as exc:  # the module was found; its own code raised while importing
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1]
        raise ConfigError(f"{what} {path!r}: importing module {module!r} raised "
                          f"{type(exc).__name__}: {exc} (at {frame.filename}, line "
                          f"{frame.lineno}); fix that line") from exc
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise ConfigError(f"{what} {path!r}: module {module!r} has no {attr!r}") from None


def lookup(name: str, what: str, own, group: str):
    """The class ``name`` stands for: ``own[name]``, the object of an import path, or the entry
    point of ``group`` that an installed package registers under it; None when it is none of
    these (the caller names what is known)."""
    if name in own:
        return own[name]
    if ":" in name:
        return load_import_path(name, what)
    plugins = entry_point_plugins(group, own)
    if name not in plugins:
        return None
    try:
        return plugins[name].load()
    except Exception as exc:  # any failure of a third-party import, reported by name
        raise ConfigError(f"{what} plugin {name!r} ({plugins[name].value}) cannot be imported: "
                          f"{type(exc).__name__}: {exc}") from exc


def configured(cls, params: dict, label: str):
    """``cls(**params)`` with its parameters checked (scikit-learn's ``_validate_params``); an
    unknown name is a ConfigError after ``label`` that lists the allowed ones."""
    allowed = cls._get_param_names()
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ConfigError(f"{label}: unknown parameters {unknown}; allowed: {allowed}")
    obj = cls(**params)
    obj._validate_params()
    return obj
