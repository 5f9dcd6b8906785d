"""The scikit-learn preprocessing steps, each declared once: see ``step.py``.

scikit-learn is imported where a step runs, not here: planning (the config schema, the chains'
output shapes) reads these classes in every ``snakemake`` process and needs none of it.
"""

from __future__ import annotations

import warnings

import scipy.sparse as sp

from ..errors import ConfigError
from .step import Param, Shape, Step, register


@register
class Standardize(Step):
    name = "standardize"
    description = ("Zero mean and unit variance per feature (scikit-learn's StandardScaler; sparse "
                   "features are scaled only, not centred).")
    params = {"with_mean": Param("Centre each feature (default: true for dense features, false "
                                 "for sparse ones, which centring would densify).", {"type": "boolean"}),
              "with_std": Param("Scale each feature to unit variance.", {"type": "boolean"}, True)}

    def _dense_mean_refusal(self) -> str:
        return ("standardize with_mean=true would densify sparse features; drop with_mean "
                "(sparse input is scaled only) or densify upstream")

    def output(self, shape: Shape) -> Shape:
        if shape.sparse and self.p.get("with_mean", False):
            raise ConfigError(self._dense_mean_refusal())
        return shape

    def apply(self, X, seed):
        sparse = sp.issparse(X)
        with_mean = self.p.get("with_mean", not sparse)
        if with_mean and sparse:
            raise ConfigError(self._dense_mean_refusal())
        from sklearn.preprocessing import StandardScaler

        return StandardScaler(with_mean=with_mean, with_std=self.get("with_std")).fit_transform(X)


@register
class MinMax(Step):
    name = "minmax"
    description = ("Scale each feature to feature_range (default [0, 1]; MinMaxScaler). Densifies "
                   "sparse features, with a warning.")
    params = {"feature_range": Param("[low, high], low < high.",
                                     {"type": "array", "items": {"type": "number"},
                                      "minItems": 2, "maxItems": 2}, [0, 1])}

    def check(self):
        fr = self.p.get("feature_range", (0, 1))
        if not (isinstance(fr, (list, tuple)) and len(fr) == 2 and fr[0] < fr[1]):
            return f"feature_range must be [low, high] with low < high, got {fr!r}"
        return None

    def output(self, shape):
        return Shape(shape.n, shape.d, False, shape.n_exact)

    def apply(self, X, seed):
        if sp.issparse(X):
            warnings.warn("minmax densifies sparse features (the shift fills every zero)",
                          UserWarning, stacklevel=3)
            X = X.toarray()
        from sklearn.preprocessing import MinMaxScaler

        return MinMaxScaler(feature_range=tuple(self.get("feature_range"))).fit_transform(X)


@register
class Normalize(Step):
    name = "normalize"
    description = ("Scale each point to unit norm (`{normalize: l2}` is short for "
                   "`{normalize: {norm: l2}}`).")
    params = {"norm": Param("The norm each point is divided by.", {"enum": ["l1", "l2", "max"]}, "l2"),
              "scale": Param("Multiply the normalized points by this factor.",
                             {"type": "number", "exclusiveMinimum": 0,
                              "x-message": "{key} must be a positive number, got {value!r}"}, 1.0)}
    shorthand = "norm"

    def apply(self, X, seed):
        from sklearn.preprocessing import normalize

        return normalize(X, norm=self.get("norm")) * float(self.get("scale"))


_COMPONENTS = {"type": "integer", "minimum": 1}


@register
class PCAStep(Step):
    name = "pca"
    description = ("Project on the first n_components principal components (scikit-learn's PCA, "
                   "seeded by `seed`; on sparse features the arpack solver, which centres implicitly).")
    params = {"n_components": Param("Components kept (at most min(n_samples, n_features)).", _COMPONENTS),
              "whiten": Param("Scale the components to unit variance.", {"type": "boolean"}, False)}
    required = ("n_components",)

    def missing_message(self, key):
        return "pca needs n_components (an integer >= 1)"

    def output(self, s: Shape) -> Shape:
        k, n, d = int(self.p["n_components"]), s.n, s.d
        if d is None:
            return s
        if s.sparse is None:  # dense or CSR: its maximum differs by one
            if k > min(n, d):
                raise ConfigError(f"pca n_components={k} exceeds the maximum {min(n, d)} (or "
                                  f"{min(n, d) - 1} for sparse features) for features of shape "
                                  f"{(n, d)}; lower n_components")
        elif s.n_exact:
            self._check_limit(k, (n, d), bool(s.sparse))
        elif k > d - (1 if s.sparse else 0):  # fewer than n rows after the class view
            raise ConfigError(f"pca n_components={k} exceeds the maximum {d - (1 if s.sparse else 0)} "
                              f"for features of {d} columns (and at most {n} rows); lower n_components")
        return Shape(n, k, False, s.n_exact)

    @staticmethod
    def _check_limit(k: int, shape: tuple, sparse: bool) -> None:
        limit = min(shape) - (1 if sparse else 0)  # arpack needs k < min(n, d)
        if k > limit:
            raise ConfigError(f"pca n_components={k} exceeds the maximum {limit} for features of "
                              f"shape {shape}; lower n_components")

    def apply(self, X, seed):
        k = int(self.p["n_components"])
        self._check_limit(k, X.shape, sp.issparse(X))
        from sklearn.decomposition import PCA

        return PCA(n_components=k, whiten=bool(self.get("whiten")),
                   svd_solver="arpack" if sp.issparse(X) else "auto",
                   random_state=seed).fit_transform(X)


@register
class RandomProjection(Step):
    name = "random_projection"
    description = ("A seeded random projection to n_components dimensions (scikit-learn's "
                   "GaussianRandomProjection or SparseRandomProjection; the sparse one keeps CSR "
                   "input sparse).")
    params = {"kind": Param("Gaussian or sparse random matrix.", {"enum": ["gaussian", "sparse"]},
                            "gaussian"),
              "n_components": Param("Target dimension (at most the number of features), or auto "
                                    "(from eps and the number of points).",
                                    {"anyOf": [{"enum": ["auto"]}, _COMPONENTS],
                                     "x-message": "{key} must be a positive integer, got {value!r}"}),
              "density": Param("Share of nonzero entries of the sparse matrix (default: 1 / "
                               "sqrt(n_features)).", {"type": "number", "exclusiveMinimum": 0,
                                                      "maximum": 1}),
              "eps": Param("Distortion bound of the Johnson-Lindenstrauss lemma (with n_components "
                           "'auto').", {"type": "number", "exclusiveMinimum": 0})}
    required = ("n_components",)

    def missing_message(self, key):
        return "random_projection needs n_components (an integer or 'auto')"

    def output(self, s):
        k = self.p["n_components"]
        if k == "auto" or s.d is None:
            return Shape(s.n, None, s.sparse, s.n_exact)
        self._check_width(k, s.d)
        return Shape(s.n, int(k), s.sparse if self.get("kind") == "sparse" else False, s.n_exact)

    @staticmethod
    def _check_width(k, d: int) -> None:
        if int(k) > d:  # scikit-learn only warns: it adds no information
            raise ConfigError(f"random_projection n_components={k} exceeds the {d} features it "
                              "projects; give at most that many components, or drop the step")

    def apply(self, X, seed):
        k = self.p["n_components"]
        if k != "auto":
            self._check_width(k, X.shape[1])
        kw = {"n_components": k, "random_state": seed}
        if "eps" in self.p:
            kw["eps"] = self.p["eps"]
        from sklearn import random_projection as rp

        if self.get("kind") == "gaussian":
            return rp.GaussianRandomProjection(**kw).fit_transform(X)
        return rp.SparseRandomProjection(density=self.p.get("density", "auto"), **kw).fit_transform(X)
