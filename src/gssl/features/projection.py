"""Steps that project features to fewer columns: pca, random_projection."""

from __future__ import annotations

import scipy.sparse as sp
from sklearn.decomposition import PCA
from sklearn.random_projection import GaussianRandomProjection, SparseRandomProjection

from ..errors import ConfigError
from ..solvers.params import Int, StrOptions
from .step import NO_CHECK, Step


def _too_many_components(k: int, limit: int, shape) -> ConfigError:
    return ConfigError(f"pca n_components={k} exceeds the maximum {limit} for features of "
                       f"shape {shape}; lower n_components")


class PCAStep(Step):
    """The first ``n_components`` principal components; on CSR input scikit-learn's arpack solver,
    which centres implicitly (true PCA, dense output, no densified copy of X)."""

    name = "pca"
    _parameter_constraints = {"n_components": [Int(1)], "whiten": NO_CHECK}
    required = {"n_components": "an integer >= 1"}
    defaults = {"whiten": False}

    def output_shape(self, n, d, sparse, n_exact=True):
        k = int(self.params["n_components"])
        if sparse is None:  # dense or CSR: its maximum differs by one
            if k > min(n, d):
                raise ConfigError(f"pca n_components={k} exceeds the maximum {min(n, d)} (or "
                                  f"{min(n, d) - 1} for sparse features) for features of shape "
                                  f"{(n, d)}; lower n_components")
        elif n_exact:
            limit = min(n, d) - (1 if sparse else 0)
            if k > limit:
                raise _too_many_components(k, limit, (n, d))
        elif k > d - (1 if sparse else 0):  # fewer than n rows after the class view
            raise ConfigError(f"pca n_components={k} exceeds the maximum {d - (1 if sparse else 0)} "
                              f"for features of {d} columns (and at most {n} rows); lower n_components")
        return k, False

    def apply(self, X, seed):
        k, sparse = int(self.params["n_components"]), sp.issparse(X)
        limit = min(X.shape) - (1 if sparse else 0)  # arpack needs k < min(n, d)
        if k > limit:
            raise _too_many_components(k, limit, X.shape)
        return PCA(n_components=k, whiten=bool(self.params.get("whiten", False)),
                   svd_solver="arpack" if sparse else "auto", random_state=seed).fit_transform(X)


class RandomProjection(Step):
    """A seeded Gaussian or sparse random projection to ``n_components`` columns (the sparse one
    keeps CSR input sparse)."""

    name = "random_projection"
    _parameter_constraints = {"kind": [StrOptions(("gaussian", "sparse"))],
                              "n_components": [Int(1), StrOptions(("auto",))],
                              "density": NO_CHECK, "eps": NO_CHECK}
    required = {"n_components": "an integer or 'auto'"}
    defaults = {"kind": "gaussian"}

    def _check_width(self, d: int) -> None:
        k = self.params["n_components"]
        if k != "auto" and int(k) > d:  # scikit-learn only warns: it adds no information
            raise ConfigError(f"random_projection n_components={k} exceeds the {d} features it "
                              "projects; give at most that many components, or drop the step")

    def output_shape(self, n, d, sparse, n_exact=True):
        if self.params["n_components"] == "auto":
            return None, sparse
        self._check_width(d)
        gaussian = self.params.get("kind", "gaussian") == "gaussian"
        return int(self.params["n_components"]), False if gaussian else sparse

    def apply(self, X, seed):
        self._check_width(X.shape[1])
        kw = {"n_components": self.params["n_components"], "random_state": seed}
        if "eps" in self.params:
            kw["eps"] = self.params["eps"]
        if self.params.get("kind", "gaussian") == "gaussian":
            return GaussianRandomProjection(**kw).fit_transform(X)
        return SparseRandomProjection(density=self.params.get("density", "auto"), **kw).fit_transform(X)
