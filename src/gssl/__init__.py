"""gssl: reproducible benchmarking of graph-based semi-supervised learning and clustering.

From Python (the workflow is the main road; see the README's "Use from Python"):

    import gssl
    G = gssl.build_graph(X, k=10, weights="gaussian_kth", symmetrize="mean")
    labels = gssl.make_solver("poisson").fit(G, y).predict()   # y: -1 where unlabeled

``build_graph``, ``make_solver``, ``Graph``, ``shared_graph_operators`` (fit many label draws
on one graph with its operators built once), ``SemiSupervisedClassifier`` (the base class of a
method of your own), ``check_solver`` (its estimator-contract checks) and ``read_file_dataset``
(a data file as the workflow reads it) are imported on first use, so that ``import gssl`` stays
light for the workflow's job scripts.
"""

from ._package import __version__  # noqa: F401  (one home for the version)

_LAZY = {"build_graph": "gssl.graphs", "Graph": "gssl.graphs", "make_solver": "gssl.solvers.registry",
         "shared_graph_operators": "gssl.optim.shared_operators",
         # your own method: subclass it, and check it as gssl checks its own solvers
         "SemiSupervisedClassifier": "gssl.solvers.base", "check_solver": "gssl.solvers.checks",
         "read_file_dataset": "gssl.datasets.files"}


from ._package import lazy_attributes  # noqa: E402

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
