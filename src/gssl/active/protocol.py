"""Active learning in the workflow: what a config's ``active:`` keys hold, and what is refused
before any job.

A split protocol with ``active: {budget, batch, policy, prop_gamma, report_at}`` makes its
labeled set the *start* set of a query loop (``labels_per_class`` n: 1 -> one label per class),
and a method with ``active: {acquisition, params}`` runs that loop on each split: its solver is
the model, refitted after every batch, and the acquisition picks the queries among the split's
unlabeled points, whose labels are revealed as they are queried. All methods of an experiment
see the same start sets (the splits are the protocol's), so acquisition functions compare
paired, draw by draw.

    protocols:
      al1: {kind: labels_per_class, n: 1, repeats: 10,
            active: {budget: 100, batch: 1, report_at: [10, 50, 100]}}
    methods:
      poisson_vopt: {solver: poisson, active: {acquisition: vopt}}
"""

from __future__ import annotations

from ..errors import ConfigError

PROTOCOL_DEFAULTS = {"budget": None, "batch": 1, "policy": "max", "prop_gamma": 1.0, "report_at": None}
METHOD_KEYS = ("acquisition", "params")


def _count(spec: dict, key: str, minimum: int, what: str) -> int:
    v = spec[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise ConfigError(f"active.{key} must be an integer >= {minimum} ({what}), got {v!r}")
    return v


def validate_protocol_active(active) -> dict:
    """A protocol's ``active`` mapping with defaults filled in; ConfigError naming the key."""
    if not isinstance(active, dict):
        raise ConfigError(f"active must be a mapping {{budget, batch, policy, prop_gamma, report_at}}, "
                          f"got {active!r}")
    unknown = sorted(set(active) - set(PROTOCOL_DEFAULTS))
    if unknown:
        raise ConfigError(f"active: unknown keys {unknown}; allowed: {sorted(PROTOCOL_DEFAULTS)}")
    out = {**PROTOCOL_DEFAULTS, **active}
    if out["budget"] is None:
        raise ConfigError("active.budget is required: the labels to query after the start set")
    budget = _count(out, "budget", 1, "labels to query after the start set")
    _count(out, "batch", 1, "labels queried per round; 0 would never query")
    if out["policy"] not in ("max", "prop"):
        raise ConfigError(f"active.policy must be max or prop, got {out['policy']!r}")
    g = out["prop_gamma"]
    if isinstance(g, bool) or not isinstance(g, (int, float)) or not g > 0:
        raise ConfigError(f"active.prop_gamma must be a number > 0, got {g!r}")
    at = out["report_at"] if out["report_at"] is not None else [budget]
    if not (isinstance(at, list) and at and all(isinstance(b, int) and not isinstance(b, bool)
                                                and 0 <= b <= budget for b in at)):
        raise ConfigError(f"active.report_at must be a list of query counts in [0, budget = "
                          f"{budget}], got {out['report_at']!r}")
    out["report_at"] = sorted(set(at))
    return out


def validate_method_active(active) -> dict:
    """A method's ``active`` mapping: its acquisition (a name, import path or plugin) built with
    its params, so that an unknown name or a bad value is refused here."""
    from .registry import make_acquisition

    if not isinstance(active, dict) or "acquisition" not in active:
        raise ConfigError(f"a method's active must be a mapping {{acquisition: NAME, params: {{...}}}}, "
                          f"got {active!r}")
    unknown = sorted(set(active) - set(METHOD_KEYS))
    if unknown:
        raise ConfigError(f"active: unknown keys {unknown}; allowed: {list(METHOD_KEYS)}")
    make_acquisition(active["acquisition"], active.get("params"))
    return {"acquisition": active["acquisition"], "params": dict(active.get("params") or {})}


def has_eigenpairs(solver_cls) -> bool:
    """Whether a solver fits on the graph's own Laplacian, whose eigenpairs the covariance
    acquisitions read: gssl's graph-learning family, or a class that says so
    (``_graph_laplacian_model = True``, a plugin's)."""
    from ..solvers.tags import solver_tags

    tags = solver_tags(solver_cls)
    return bool(getattr(solver_cls, "_graph_laplacian_model", False)
                or (tags is not None and tags.family == "graph_learning"))


def experiment_problems(config: dict, exp: str, entry: dict) -> list[str]:
    """An experiment's methods and protocols that cannot run together: a method with an
    acquisition on a protocol without ``active`` (or the reverse), and an acquisition that needs
    Laplacian eigenpairs on a method that fits no graph Laplacian."""
    from ..solvers.registry import solver_class
    from .registry import acquisition_class

    problems = []
    methods = {m: config["methods"][m] for m in entry["methods"] if m in config["methods"]}
    protocols = {p: config["protocols"][p] for p in entry["protocols"] if p in config["protocols"]}
    active_m = [m for m, e in methods.items() if e.get("active")]
    active_p = [p for p, e in protocols.items() if e.get("active")]
    passive_m = [m for m in methods if m not in active_m]
    passive_p = [p for p in protocols if p not in active_p]
    if active_m and passive_p:
        problems.append(f"experiment '{exp}': methods {active_m} query labels (active:) but protocols "
                        f"{passive_p} give no budget; add active: {{budget: ...}} to those protocols "
                        f"or run them in another experiment")
    if active_p and passive_m:
        problems.append(f"experiment '{exp}': protocols {active_p} are active-learning protocols but "
                        f"methods {passive_m} have no acquisition; give each active: {{acquisition: "
                        f"random}} (the baseline) or another")
    for m in active_m:
        try:
            acq = acquisition_class(methods[m]["active"]["acquisition"])
            solver = solver_class(methods[m]["solver"])
        except (ConfigError, KeyError, TypeError):
            continue  # reported by the method's own checks
        if acq.needs_eigenpairs and not has_eigenpairs(solver):
            problems.append(f"experiment '{exp}': method '{m}': acquisition "
                            f"'{methods[m]['active']['acquisition']}' needs the eigenpairs of the graph "
                            f"Laplacian the model is fitted on, and solver '{methods[m]['solver']}' fits "
                            f"none (not a graph-learning method); use a graph-learning solver (laplace, "
                            f"poisson, poisson_mbo, ...) or an acquisition without eigenpairs "
                            f"(uncertainty, random)")
    return problems


def start_size(spec: dict, n: int, n_classes: int) -> int | None:
    """The start set's size under a protocol, where known from the dataset's size and classes."""
    if spec["kind"] == "labels_per_class":
        return spec["n"] * n_classes
    if spec["kind"] == "per_class_counts":
        return spec["labeled"] * n_classes
    return None


def pool_problem(spec: dict, n: int, n_classes: int) -> str | None:
    """A budget larger than the unlabeled pool the loop queries from (the points not in the start
    set; all of a labels_per_class split's others are unlabeled)."""
    active = spec.get("active")
    if not active or spec["kind"] != "labels_per_class" or spec.get("holdout") or spec.get("test_from"):
        return None
    pool = n - start_size(spec, n, n_classes)
    if active["budget"] > pool:
        return (f"active.budget {active['budget']} exceeds the {pool} unlabeled points left after "
                f"the start set ({n} points, {start_size(spec, n, n_classes)} labeled); lower the budget")
    return None
