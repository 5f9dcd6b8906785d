"""Solver names used in configs -> estimator classes, and the modules their results depend on.

A config's ``solver:`` is one of gssl's names (:data:`SOLVERS`), a name an installed package
registers under the ``gssl.solvers`` entry-point group, or an import path
``package.module:ClassName``; :func:`solver_class` resolves all three.
"""

from __future__ import annotations

import importlib
from collections.abc import MutableMapping

from ..errors import ConfigError
from ..registries import configured, entry_point_plugins, lookup
from ..store.hashing import plugin_closure


class _Registry(MutableMapping):
    """Solver name (or an older name it answers to) -> estimator class, each class imported on
    its first lookup: a job or a config check imports the solvers it names, not all 25 (0.8 s of
    a process, half of it numba's import, which a Laplacian RLS job never needs). Iterating gives
    the names, each followed by its older ones, and imports nothing."""

    def __init__(self, paths: dict[str, str], aliases: dict[str, str], clusterers=frozenset()):
        self._classes, self._aliases, self._clusterers = {}, dict(aliases), set(clusterers)
        # each name followed by its older names: a config may give either, so both are listed
        self._paths = {n: p for name, p in paths.items()
                       for n in (name, *(a for a, to in aliases.items() if to == name))}

    def names(self) -> list[str]:
        """The solvers' own names, without the older names they answer to as well."""
        return [n for n in self._paths if n not in self._aliases]

    def __getitem__(self, name: str):
        if name not in self._classes:
            module, _, attr = self._paths[name].partition(":")  # KeyError: not a registered name
            self._classes[name] = getattr(importlib.import_module(module), attr)
        return self._classes[name]

    def is_clusterer(self, name: str) -> bool:
        """Whether the class ``name`` stands for is a clusterer (scikit-learn's ``ClusterMixin``
        among its bases): for gssl's own read from their sources (imports nothing)."""
        return self._aliases.get(name, name) in self._clusterers

    def module_of(self, name: str) -> str:
        """The module defining the class ``name`` stands for, read from its path (imports nothing)."""
        return self._paths[name].partition(":")[0]

    def __setitem__(self, name: str, cls) -> None:
        # a class registered at run time: asked, not read from its source
        from sklearn.base import ClusterMixin

        self._paths[name], self._classes[name] = f"{cls.__module__}:{cls.__qualname__}", cls
        (self._clusterers.add if issubclass(cls, ClusterMixin) else self._clusterers.discard)(name)

    def __delitem__(self, name: str) -> None:
        del self._paths[name]
        self._aliases.pop(name, None)
        self._classes.pop(name, None)
        self._clusterers.discard(name)

    def __contains__(self, name) -> bool:  # a name test imports nothing
        return name in self._paths

    def __iter__(self):
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __repr__(self) -> str:
        return f"SOLVERS({self._paths})"


def _declarations() -> tuple[dict[str, str], dict[str, str], set[str]]:
    """Every class in gssl.solvers' modules that declares ``__gssl_tags__ = {...}``
    (:mod:`gssl.solvers.tags`), read from the sources without importing them: name ->
    "module:Class", alias -> name, and the names whose class has ``ClusterMixin`` among its bases
    in its module (tests/test_solvers.py checks it against scikit-learn's
    ``is_clusterer``). Modules in alphabetical order, classes in source order."""
    import ast
    import pkgutil
    from pathlib import Path

    here = Path(__file__).parent
    paths, aliases, clusterers = {}, {}, set()
    for module in sorted(m.name for m in pkgutil.iter_modules([str(here)])):
        tree = ast.parse((here / f"{module}.py").read_text(encoding="utf-8"))
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
        bases = {n.name: [getattr(b, "id", getattr(b, "attr", None)) for b in n.bases] for n in classes}
        for node in classes:
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] \
                        == ["__gssl_tags__"]:
                    tags = ast.literal_eval(stmt.value)
                    paths[tags["name"]] = f"{__package__}.{module}:{node.name}"
                    aliases.update(dict.fromkeys(tags.get("aliases", ()), tags["name"]))
                    if "ClusterMixin" in _ancestors(node.name, bases):
                        clusterers.add(tags["name"])
    return paths, aliases, clusterers


def _ancestors(name: str, bases: dict) -> set:
    """The base class names of ``name``, transitively through the classes of its module."""
    seen, todo = set(), list(bases.get(name, ()))
    while todo:
        b = todo.pop()
        if b not in seen:
            seen.add(b)
            todo.extend(bases.get(b, ()))
    return seen


SOLVERS = _Registry(*_declarations())

ENTRY_POINT_GROUP = "gssl.solvers"


def register(name: str, cls) -> None:
    """Add a solver (used by modules that define more methods)."""
    SOLVERS[name] = cls


def plugin_solvers() -> dict:
    """Entry points of installed packages in the ``gssl.solvers`` group, by name (gssl's own
    names win over a plugin's)."""
    return entry_point_plugins(ENTRY_POINT_GROUP, SOLVERS)


def solver_names() -> tuple[str, ...]:
    """The names a config may give as ``solver:`` (besides import paths)."""
    return (*SOLVERS, *sorted(plugin_solvers()))


def solver_class(name: str):
    """The estimator class ``name`` stands for; ConfigError naming the problem and the fix."""
    if not isinstance(name, str):
        raise ConfigError(f"solver must be a name or an import path 'package.module:Class', got {name!r}")
    cls = lookup(name, "solver", SOLVERS, ENTRY_POINT_GROUP)
    if cls is None:
        raise ConfigError(f"unknown solver {name!r}; known solvers: {sorted(solver_names())}; or give an "
                          f"import path 'package.module:ClassName' of your own estimator")
    return cls if name in SOLVERS else _checked_class(cls, name)


HOW_TO_WRITE = ("subclass gssl.SemiSupervisedClassifier and return class scores (n, C) from "
                "_fit(graph, codes, n_classes) (docs/examples/my_method/my_method.py); `gssl "
                "solvers check` tests the contract")


def _checked_class(cls, name: str):
    """``cls`` if the workflow can fit it: an estimator class whose ``fit`` takes (graph, labels,
    n_classes=C), as every job calls it, and which, subclassing SemiSupervisedClassifier,
    implements ``_fit``. A class that could never fit is refused here, before any job starts."""
    import inspect

    from sklearn.base import BaseEstimator

    from .base import SemiSupervisedClassifier

    if not (isinstance(cls, type) and issubclass(cls, BaseEstimator) and callable(getattr(cls, "fit", None))):
        raise ConfigError(f"solver {name!r} is {cls!r}, not an estimator class: {HOW_TO_WRITE}")
    params = inspect.signature(cls.fit).parameters
    if "n_classes" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise ConfigError(f"solver {name!r}: {cls.__name__}.fit takes no n_classes, so it is not a "
                          f"gssl solver (gssl fits one as fit(graph, labels, n_classes=C)): "
                          f"{HOW_TO_WRITE}")
    if issubclass(cls, SemiSupervisedClassifier) and cls._fit is SemiSupervisedClassifier._fit:
        raise ConfigError(f"solver {name!r}: {cls.__name__} does not implement _fit(graph, codes, "
                          f"n_classes), which returns the class scores (n, C): {HOW_TO_WRITE}")
    if issubclass(cls, SemiSupervisedClassifier):
        _check_fit_signature(cls, name)
    return cls


def _check_fit_signature(cls, name: str) -> None:
    """ConfigError when ``_fit`` cannot take what fit passes it, ``_fit(graph, codes, n_classes)``
    positionally: found from its signature, before a job (where it would fail after the
    dataset, features, graph and splits jobs)."""
    import inspect

    raw = inspect.getattr_static(cls, "_fit")
    fit = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    try:
        sig = inspect.signature(fit)
    except (TypeError, ValueError):  # a builtin or C callable: nothing to read
        return
    args = (None,) * (3 if isinstance(raw, staticmethod) else 4)  # (self or cls,) graph, codes, n_classes
    try:
        sig.bind(*args)
    except TypeError as exc:
        raise ConfigError(f"solver {name!r}: {cls.__name__}._fit{sig} cannot be called as fit calls "
                          f"it, _fit(graph, codes, n_classes) ({exc}); write def _fit(self, graph, "
                          f"codes, n_classes) (docs/examples/my_method/my_method.py)") from None


def solver_provenance(name: str) -> dict:
    """Where a solver's code comes from, for MLflow tags: gssl, or a plugin's class, distribution
    and version, and ``source_sha256``: the sha256 of its own source, the modules of its import
    closure outside gssl (:func:`solver_modules`: the module that defines it and the helpers it
    imports from its package or folder), the same code whose edit reruns its jobs."""
    from importlib.metadata import packages_distributions, version

    from ..store.hashing import module_source_hash

    if _defining_module(name).split(".")[0] == "gssl":
        return {"origin": "gssl"}
    cls = solver_class(name)
    top = cls.__module__.split(".")[0]
    out = {"origin": f"{cls.__module__}:{cls.__qualname__}"}
    ep = plugin_solvers().get(name)
    dists = [ep.dist.name] if ep is not None and ep.dist is not None else packages_distributions().get(top)
    if dists:
        out["distribution"] = f"{dists[0]} {version(dists[0])}"
    own = [m for m in solver_modules(name) if m.split(".")[0] != "gssl"]
    out["source_sha256"] = module_source_hash(*own, length=64)
    return out


def _check_name(name: str):
    return solver_class(name)


def make_solver(name: str, params: dict | None = None, /, **kwargs):
    """A configured, unfitted estimator: ``make_solver("poisson", tol=1e-3)``, or with the
    config's ``params:`` mapping, ``make_solver("poisson", {"tol": 1e-3})``.

    Parameters
    ----------
    name : str
        A solver name (the config's ``solver:``; ``gssl.solvers.registry.SOLVERS``).
    params : dict, optional
        Parameters by name, as the config's ``params:``.
    **kwargs
        Parameters as keywords, merged over ``params``; a parameter given both ways is a
        ConfigError.

    Returns
    -------
    estimator
        The solver's estimator with these parameters, validated. Unknown names or parameters,
        and bad values, raise ConfigError.
    """
    from collections.abc import Mapping

    cls = _check_name(name)
    if params is not None and not isinstance(params, Mapping):
        raise ConfigError(f"make_solver({name!r}, params): params must be a mapping of parameter "
                          f"names to values, got {type(params).__name__}; e.g. make_solver({name!r}, "
                          f"{{'tol': 1e-3}}) or make_solver({name!r}, tol=1e-3)")
    both = sorted(set(params or {}) & set(kwargs))
    if both:
        raise ConfigError(f"solver {name!r}: parameter(s) {both} given both in params and as "
                          f"keywords; give each once")
    return configured(cls, {**(params or {}), **kwargs}, f"solver {name!r}")


def solver_modules(name: str) -> list[str]:
    """Modules whose source determines the solver's results (for rerun hashes): the gssl import
    closure of the module defining it, read from the sources so it cannot go stale, and for a
    plugin, its module and what that imports from the plugin's own package or folder, directly
    or not (editing a helper module reruns its jobs, and only those;
    :func:`gssl.store.hashing.plugin_closure`)."""
    module = _defining_module(name)
    return sorted({*plugin_closure(module), module})


def _defining_module(name: str) -> str:
    """The module defining the solver's class: for a registered name the one its declaration names
    (planning imports no solver, nor scikit-learn); for a plugin its class's, imported."""
    return SOLVERS.module_of(name) if name in SOLVERS else _check_name(name).__module__
