"""Graph specs (config entries under ``graphs:``): each kind declared once, with its keys'
defaults, and each numeric key's bounds; :func:`validate_graph_spec` and the config reference
(docs/gen_config.py, through :func:`key_schema`) read them from here.

    {"kind": "knn", "k": 10, "weights": "heat", "sigma": "mean_knn_distance",
     "symmetrize": "max", "laplacian": "normalized", "laplacian_power": 1}
        weights "binary" takes no sigma; "self_tuning" takes "k_st" (default 7) instead of sigma;
        "gaussian_kth" (exp(-4 d^2 / d_k(x_i)^2), Calder et al. 2020) takes neither.
    {"kind": "lle", "k": 8, "reg": 1e-3, "symmetrize": "max", "laplacian": "lle", "laplacian_power": 1}
        W is the symmetric binary kNN graph, V the LLE barycentric weights.
    {"kind": "precomputed", "laplacian": "normalized", "laplacian_power": 1}
        uses the given W (symmetrized by max, diagonal dropped).
    ``laplacian_power`` p declares L^p, the name the solvers' parameter has; ``power`` is accepted
    as its old name.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from ..errors import ConfigError
from .knn import BACKENDS
from .laplacian import LAPLACIANS
from .weights import SIGMA_RULES, SYMMETRIZATIONS


@dataclass(frozen=True)
class GraphKind:
    """A graph kind: the keys it takes with their defaults, and the Laplacians it allows."""

    name: str
    defaults: dict
    laplacians: tuple
    from_features: bool  # built from X by a neighbour search: takes the search keys too


KINDS = {kind.name: kind for kind in (
    GraphKind("knn", {"k": 10, "weights": "heat", "symmetrize": "max", "laplacian": "normalized",
                      "laplacian_power": 1}, LAPLACIANS, True),
    # LLE's local Gram matrices are singular when k exceeds the dimension: reg must be > 0
    GraphKind("lle", {"k": 8, "reg": 1e-3, "symmetrize": "max", "laplacian": "lle", "laplacian_power": 1},
              LAPLACIANS + ("lle",), True),
    GraphKind("precomputed", {"laplacian": "normalized", "laplacian_power": 1}, LAPLACIANS, False),
)}
GRAPH_KINDS = tuple(KINDS)
# the keys each knn weighting adds, with their defaults
WEIGHT_KEYS = {"binary": {}, "heat": {"sigma": "mean_knn_distance"}, "self_tuning": {"k_st": 7},
               "gaussian_kth": {}}
WEIGHTS = tuple(WEIGHT_KEYS)
# neighbour search keys, kept out of the spec unless given: the graph ids and caches of configs
# that never name them stay as they were
SEARCH_DEFAULTS = {"backend": "exact", "min_recall": 0.5, "recall_queries": 1000}


@dataclass(frozen=True)
class Bound:
    """A numeric key's range: an integer or a number, from ``low`` (excluded when ``open_low``)
    up to ``high`` (included)."""

    integer: bool
    low: float
    open_low: bool = False
    high: float | None = None

    def words(self) -> str:
        if self.high is not None:
            return f"a number in {'(' if self.open_low else '['}{self.low}, {self.high}]"
        return f"{'an integer' if self.integer else 'a number'} {'>' if self.open_low else '>='} {self.low}"

    def check(self, key: str, value) -> None:
        kind = numbers.Integral if self.integer else numbers.Real
        ok = (not isinstance(value, bool) and isinstance(value, kind)
              and (value > self.low if self.open_low else value >= self.low)
              and (self.high is None or value <= self.high))
        if not ok:
            raise ConfigError(f"graph spec: {key} must be {self.words()}, got {value!r}")

    def schema(self) -> dict:
        """The bound in JSON schema's words."""
        out = {"exclusiveMinimum" if self.open_low else "minimum": self.low}
        return out if self.high is None else {**out, "maximum": self.high}


_COUNT = Bound(integer=True, low=1)
# (power, laplacian_power's old name, is renamed before the check; its bound is for the schema)
BOUNDS = {"k": _COUNT, "k_st": _COUNT, "laplacian_power": _COUNT, "power": _COUNT, "recall_queries": _COUNT,
          "reg": Bound(integer=False, low=0, open_low=True),
          "min_recall": Bound(integer=False, low=0, open_low=True, high=1)}
# the keys of the graphs built from features (none of them is a key of kind precomputed)
FEATURE_KEYS = ({k for kind in KINDS.values() if kind.from_features for k in kind.defaults}
                | {k for keys in WEIGHT_KEYS.values() for k in keys} | set(SEARCH_DEFAULTS)
                ) - set(KINDS["precomputed"].defaults)


def key_schema() -> dict[str, dict]:
    """Each key's bounds, in JSON schema's words, and its default, or ``defaults_by_kind`` where
    the kinds differ: what the config reference shows beside the schema's descriptions."""
    by_kind = {}
    for kind in KINDS.values():
        for key, value in kind.defaults.items():
            by_kind.setdefault(key, {})[kind.name] = value
    out = {key: ({"default": next(iter(values.values()))} if len(set(values.values())) == 1
                 else {"defaults_by_kind": values}) for key, values in by_kind.items()}
    for key, value in [*((k, v) for keys in WEIGHT_KEYS.values() for k, v in keys.items()),
                       *SEARCH_DEFAULTS.items()]:
        out[key] = {"default": value}
    for key, bound in BOUNDS.items():
        out.setdefault(key, {}).update(bound.schema())
    return out


def _choice(spec: dict, key: str, allowed) -> None:
    if spec[key] not in allowed:
        raise ConfigError(f"graph spec: {key}={spec[key]!r} is not allowed; "
                          f"allowed values: {list(allowed)}")


def _check_sigma(sigma) -> None:
    ok = sigma in SIGMA_RULES if isinstance(sigma, str) else (
        isinstance(sigma, numbers.Real) and not isinstance(sigma, bool) and sigma > 0)
    if not ok:
        raise ConfigError(f"graph spec: sigma={sigma!r} is not allowed; allowed values: a positive "
                          f"number or one of {list(SIGMA_RULES)}")


def _check_search(out: dict) -> None:
    backend = out.get("backend", SEARCH_DEFAULTS["backend"])
    if backend not in BACKENDS:
        raise ConfigError(f"graph spec: backend={backend!r} is not allowed; allowed values: {list(BACKENDS)}")
    if backend == "exact" and ({"min_recall", "recall_queries"} & set(out)):
        raise ConfigError("graph spec: min_recall and recall_queries apply to an approximate backend "
                          "(hnsw, nndescent); exact search has recall 1")
    BOUNDS["min_recall"].check("min_recall", out.get("min_recall", SEARCH_DEFAULTS["min_recall"]))
    if "recall_queries" in out:
        BOUNDS["recall_queries"].check("recall_queries", out["recall_queries"])


def _renamed_power(spec: dict) -> dict:
    """``spec`` with ``power``, the old name of laplacian_power (the solvers' name), renamed."""
    if "power" not in spec:
        return spec
    if "laplacian_power" in spec:
        raise ConfigError("graph spec: give laplacian_power only (power is its old name)")
    return {("laplacian_power" if k == "power" else k): v for k, v in spec.items()}


def validate_graph_spec(spec) -> dict:
    """Return ``spec`` with defaults filled in; ConfigError names the bad key and allowed values."""
    if not isinstance(spec, dict):
        raise ConfigError(f"graph spec must be a mapping, got {type(spec).__name__}")
    if spec.get("kind") not in GRAPH_KINDS:
        raise ConfigError(f"graph spec: kind={spec.get('kind')!r} is not allowed; "
                          f"allowed values: {list(GRAPH_KINDS)}")
    kind = KINDS[spec["kind"]]
    spec = _renamed_power(spec)
    out = {"kind": kind.name, **kind.defaults}
    if "weights" in out:
        out["weights"] = spec.get("weights", out["weights"])
        _choice(out, "weights", WEIGHTS)
        out.update(WEIGHT_KEYS[out["weights"]])
    allowed = set(out) | (set(SEARCH_DEFAULTS) if kind.from_features else set())
    bad = sorted(set(spec) - allowed)
    if bad:
        raise ConfigError(f"graph spec (kind {kind.name!r}): unknown key(s) {bad}; "
                          f"allowed keys: {sorted(allowed)}")
    out.update(spec)
    _choice(out, "laplacian", kind.laplacians)
    BOUNDS["laplacian_power"].check("laplacian_power", out["laplacian_power"])
    if kind.from_features:
        BOUNDS["k"].check("k", out["k"])
        _choice(out, "symmetrize", SYMMETRIZATIONS)
    if out.get("weights") == "heat":
        _check_sigma(out["sigma"])
    if out.get("weights") == "self_tuning":
        BOUNDS["k_st"].check("k_st", out["k_st"])
    if kind.from_features:
        _check_search(out)
    if "reg" in out:
        BOUNDS["reg"].check("reg", out["reg"])
    return out
