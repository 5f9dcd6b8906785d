"""Semi-supervised classifiers (scikit-learn style estimators over a gssl Graph)."""

from .base import SemiSupervisedClassifier, check_labels
from .baselines import LabelSpreadingBaseline
from .registry import SOLVERS, make_solver, register, solver_modules
from .rls import KernelRLS, LaplacianRLS
from .svm import KernelSVM

__all__ = ["SOLVERS", "KernelRLS", "KernelSVM", "LabelSpreadingBaseline", "LaplacianRLS",
           "SemiSupervisedClassifier", "check_labels", "make_solver", "register", "solver_modules"]
