"""Semi-supervised classifiers (scikit-learn style estimators over a gssl Graph)."""

# name -> the module defining it, imported on first use (PEP 562), so that a job importing one
# solver's module does not import the others' (scikit-learn's SVC and LabelSpreading among them)
_LAZY = {"SOLVERS": "gssl.solvers.registry", "make_solver": "gssl.solvers.registry",
         "register": "gssl.solvers.registry", "solver_modules": "gssl.solvers.registry",
         "SemiSupervisedClassifier": "gssl.solvers.base", "check_labels": "gssl.solvers.base",
         "KernelRLS": "gssl.solvers.rls", "LaplacianRLS": "gssl.solvers.rls",
         "KernelSVM": "gssl.solvers.svm", "LabelSpreadingBaseline": "gssl.solvers.baselines"}


from .._package import lazy_attributes  # noqa: E402

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())


__all__ = sorted(_LAZY)
