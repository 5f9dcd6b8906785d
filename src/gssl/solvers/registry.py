"""Solver names used in configs -> estimator classes, and the modules their results depend on."""

from __future__ import annotations

from ..errors import ConfigError
from .baselines import LabelSpreadingBaseline
from .rls import KernelRLS, LaplacianRLS
from .svm import KernelSVM

SOLVERS = {
    "rls": KernelRLS,
    "lap_rls": LaplacianRLS,
    "svm": KernelSVM,
    "label_spreading": LabelSpreadingBaseline,
}

_COMMON = ["gssl.solvers.base"]
_MODULES = {
    "rls": ["gssl.solvers.rls", "gssl.kernels", "gssl.optim"],
    "lap_rls": ["gssl.solvers.rls", "gssl.kernels", "gssl.optim", "gssl.graphs.base",
                "gssl.graphs.laplacian"],
    "svm": ["gssl.solvers.svm", "gssl.kernels"],
    "label_spreading": ["gssl.solvers.baselines"],
}


def register(name: str, cls, modules: list[str]) -> None:
    """Add a solver (used by modules that define more methods)."""
    SOLVERS[name] = cls
    _MODULES[name] = list(modules)


def _check_name(name: str):
    if name not in SOLVERS:
        raise ConfigError(f"unknown solver {name!r}; known solvers: {sorted(SOLVERS)}")
    return SOLVERS[name]


def make_solver(name: str, params: dict | None = None):
    """A configured, unfitted estimator; unknown names or parameters raise ConfigError."""
    cls = _check_name(name)
    params = dict(params or {})
    allowed = cls._get_param_names()
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ConfigError(f"solver {name!r}: unknown parameters {unknown}; allowed: {allowed}")
    solver = cls(**params)
    solver.check_params()
    return solver


def solver_modules(name: str) -> list[str]:
    """gssl modules whose source determines the solver's results (for rerun hashes)."""
    _check_name(name)
    return sorted(set(_MODULES[name] + _COMMON))
