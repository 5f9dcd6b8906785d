"""Solver names used in configs -> estimator classes, and the modules their results depend on.

A config's ``solver:`` is one of gssl's names (:data:`SOLVERS`), a name an installed package
registers under the ``gssl.solvers`` entry-point group, or an import path
``package.module:ClassName``; :func:`solver_class` resolves all three.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..store.hashing import import_closure
from .baselines import LabelSpreadingBaseline
from .graph_learning import LaplaceLearning, PLaplaceLearning, PoissonLearning, PoissonMBO
from .clustering import KMeansClustering, SpectralGraphClustering
from .mbo import MulticlassMBO, VolumeMBO
from .lapsvm import LapRLSC, LapSVMDual, LapSVMNewton, LapSVMPCG
from .mtv import MTVClustering
from .rls import KernelRLS, LaplacianRLS
from .ssdl import SSDLGA, SparseCodingSVM
from .svm import KernelSVM
from .tv import CheegerRLS, CheegerSVM, LapRLSSimplex, LapSVMSimplex, TVRLS, TVSVM

SOLVERS = {
    "rls": KernelRLS,
    "lap_rls": LaplacianRLS,
    "svm": KernelSVM,
    "label_spreading": LabelSpreadingBaseline,
    "laplace": LaplaceLearning,
    "poisson": PoissonLearning,
    "poisson_mbo": PoissonMBO,
    "plaplace": PLaplaceLearning,
    "volume_mbo": VolumeMBO,
    "multiclass_mbo": MulticlassMBO,
    "ssdl_ga": SSDLGA,
    "sc_svm": SparseCodingSVM,
    "lapsvm_dual": LapSVMDual,
    "lapsvm_newton": LapSVMNewton,
    "lapsvm_pcg": LapSVMPCG,
    "laprlsc": LapRLSC,
    "mtv": MTVClustering,
    "spectral_clustering": SpectralGraphClustering,
    "kmeans": KMeansClustering,
    "tv_rls": TVRLS,
    "cheeger_rls": CheegerRLS,
    "tv_svm": TVSVM,
    "cheeger_svm": CheegerSVM,
    "lap_rls_simplex": LapRLSSimplex,
    "lap_svm_mc": LapSVMSimplex,
}

ENTRY_POINT_GROUP = "gssl.solvers"


def register(name: str, cls) -> None:
    """Add a solver (used by modules that define more methods)."""
    SOLVERS[name] = cls


def plugin_solvers() -> dict:
    """Entry points of installed packages in the ``gssl.solvers`` group, by name (gssl's own
    names win over a plugin's)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in SOLVERS}


def solver_names() -> tuple[str, ...]:
    """The names a config may give as ``solver:`` (besides import paths)."""
    return (*SOLVERS, *sorted(plugin_solvers()))


def solver_class(name: str):
    """The estimator class ``name`` stands for; ConfigError naming the problem and the fix."""
    if not isinstance(name, str):
        raise ConfigError(f"solver must be a name or an import path 'package.module:Class', got {name!r}")
    if name in SOLVERS:
        return SOLVERS[name]
    if ":" in name:
        return _checked_class(_import_path(name), name)
    plugins = plugin_solvers()
    if name in plugins:
        try:
            cls = plugins[name].load()
        except Exception as exc:  # any failure of a third-party import, reported by name
            raise ConfigError(f"solver plugin {name!r} ({plugins[name].value}) cannot be imported: "
                              f"{type(exc).__name__}: {exc}") from exc
        return _checked_class(cls, name)
    raise ConfigError(f"unknown solver {name!r}; known solvers: {sorted(solver_names())}; or give an "
                      f"import path 'package.module:ClassName' of your own estimator")


def _import_path(path: str):
    import importlib

    module, _, attr = path.partition(":")
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # ImportError, or whatever the module raises while importing
        raise ConfigError(f"solver {path!r}: module {module!r} cannot be imported "
                          f"({type(exc).__name__}: {exc}); is it installed, or on PYTHONPATH where "
                          f"snakemake runs?") from exc
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise ConfigError(f"solver {path!r}: module {module!r} has no {attr!r}") from None


def _checked_class(cls, name: str):
    from sklearn.base import BaseEstimator

    if not (isinstance(cls, type) and issubclass(cls, BaseEstimator) and callable(getattr(cls, "fit", None))):
        raise ConfigError(f"solver {name!r} is {cls!r}, not an estimator class: subclass "
                          f"gssl.SemiSupervisedClassifier (see `gssl solvers check`)")
    return cls


def solver_provenance(name: str) -> dict:
    """Where a solver's code comes from, for MLflow tags: gssl, a plugin's distribution and
    version, or a module's file and sha256."""
    import inspect
    from importlib.metadata import packages_distributions, version

    from ..store.hashing import file_sha256

    cls = solver_class(name)
    top = cls.__module__.split(".")[0]
    if top == "gssl":
        return {"origin": "gssl"}
    out = {"origin": f"{cls.__module__}:{cls.__qualname__}"}
    ep = plugin_solvers().get(name)
    dists = [ep.dist.name] if ep is not None and ep.dist is not None else packages_distributions().get(top)
    if dists:
        out["distribution"] = f"{dists[0]} {version(dists[0])}"
    source = inspect.getsourcefile(cls)
    if source:
        out["source_sha256"] = file_sha256(source)
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
    params = {**(params or {}), **kwargs}
    allowed = cls._get_param_names()
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ConfigError(f"solver {name!r}: unknown parameters {unknown}; allowed: {allowed}")
    solver = cls(**params)
    solver._validate_params()
    return solver


def solver_modules(name: str) -> list[str]:
    """Modules whose source determines the solver's results (for rerun hashes): the gssl import
    closure of the module defining it, read from the sources so it cannot go stale, and a
    plugin's own module (editing it reruns its jobs, and only those)."""
    module = _check_name(name).__module__
    return sorted({*import_closure(module), module})
