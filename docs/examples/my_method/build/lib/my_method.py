"""A new method in a few lines: label spreading by personalised PageRank (Zhou et al. 2004),
F = (I - alpha D^-1/2 W D^-1/2)^-1 Y, as a gssl solver."""
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from gssl import SemiSupervisedClassifier
from gssl.solvers.params import Real


class PageRankSpreading(SemiSupervisedClassifier):
    """Personalised-PageRank label spreading; ``alpha`` in (0, 1) is the walk's continuation."""

    _parameter_constraints = {"alpha": [Real(0, 1, closed="neither")]}

    def __init__(self, *, alpha=0.9):
        self.alpha = alpha

    def _fit(self, graph, codes, n_classes):  # codes: class index of labeled nodes, -1 elsewhere
        s = 1.0 / np.sqrt(np.maximum(graph.degrees(), 1e-12))
        S = sp.diags(s) @ graph.W @ sp.diags(s)
        Y = np.zeros((graph.n_nodes, n_classes))
        Y[codes >= 0, codes[codes >= 0]] = 1.0
        return spsolve((sp.identity(graph.n_nodes) - self.alpha * S).tocsc(), Y)  # scores (n, C)
