"""Solver names used in configs -> estimator classes, and the modules their results depend on."""

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

def register(name: str, cls) -> None:
    """Add a solver (used by modules that define more methods)."""
    SOLVERS[name] = cls


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
    solver._validate_params()
    return solver


def solver_modules(name: str) -> list[str]:
    """gssl modules whose source determines the solver's results (for rerun hashes): the import
    closure of the module defining it, read from the sources so it cannot go stale."""
    return import_closure(_check_name(name).__module__)
