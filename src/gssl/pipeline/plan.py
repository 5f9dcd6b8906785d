"""What a validated workflow config asks to run: the experiments, their solve jobs and split
blocks, the grid points of a method and the selection jobs over them, and the headline metric.
The Snakemake rules (``workflow/rules/common.smk``) enumerate their jobs from these."""

from __future__ import annotations

import itertools
import json

from ..errors import ConfigError
from ..metrics import HIGHER_IS_BETTER, headline_score

# what names a cell within an experiment: one row of its results table, one MLflow cell run
CELL_KEYS = ("dataset", "prep", "graph", "method", "protocol")


def grid_variants(entry: dict) -> list[tuple[str, dict]]:
    """(variant id, constructor params) of every point of a method's grid, in grid order (the
    product of the value lists, the first key varying slowest). The id is a short hash of the
    params, so it names the same point whatever else the grid holds."""
    from ..store.hashing import params_hash

    grid = entry.get("grid") or {}
    out = []
    for values in itertools.product(*grid.values()):
        params = json.loads(json.dumps(entry.get("params") or {}))
        for key, value in zip(grid, values):
            set_dotted(params, key, json.loads(json.dumps(value)))  # never the config's own object
        out.append(("g" + params_hash(params, 8), params))
    return out


def grid_values(entry: dict, variant: str) -> dict:
    """The grid's values at one variant: {dotted key: value}."""
    for vid, params in grid_variants(entry):
        if vid == variant:
            return {key: get_dotted(params, key) for key in entry["grid"]}
    raise ConfigError(f"no grid point {variant!r}")


def set_dotted(d: dict, key: str, value) -> None:
    *path, last = key.split(".")
    for part in path:
        d = d.setdefault(part, {})
        if not isinstance(d, dict):
            raise ConfigError(f"grid key {key!r}: {part!r} is not a mapping in the method's params")
    d[last] = value


def get_dotted(d: dict, key: str):
    for part in key.split("."):
        d = d[part]
    return d


def selection_jobs(config: dict, experiment: str) -> list[dict]:
    """Wildcard dicts of the grid jobs an experiment's selection stage runs: one per gridded method
    and block of the selection protocol's splits, fitting every grid point."""
    e = config["experiments"][experiment]
    sel = e.get("selection")
    if not sel:
        return []
    blocks = split_blocks(config, sel["protocol"])
    jobs = []
    for ds, prep, graph, method in itertools.product(
            e["datasets"], e["preprocessing"], e["graphs"], e["methods"]):
        if config["methods"][method].get("grid"):  # every grid point of a block in one job
            jobs += [dict(experiment=experiment, dataset=ds, prep=prep, graph=graph, method=method,
                          protocol=sel["protocol"], first=a, last=b) for a, b in blocks]
    return jobs


def split_blocks(config: dict, protocol: str) -> list[tuple[int, int]]:
    """(first, last) split of each solve job of a protocol's cell: blocks of ``splits_per_job``."""
    from ..splits import n_splits

    n = n_splits(config["protocols"][protocol])
    step = config.get("splits_per_job") or n
    return [(first, min(first + step, n) - 1) for first in range(0, n, step)]


def experiments_to_run(config: dict) -> list[str]:
    return list(config.get("run") or config["experiments"])


def solve_jobs(config: dict, experiment: str) -> list[dict]:
    """Wildcard dicts of every solve job of one experiment: one per cell (dataset, prep, graph,
    method, protocol) and block of ``splits_per_job`` consecutive splits (``first``..``last``)."""
    e = config["experiments"][experiment]
    jobs = []
    for ds, prep, graph, method, proto in itertools.product(
            e["datasets"], e["preprocessing"], e["graphs"], e["methods"], e["protocols"]):
        cell = dict(zip(CELL_KEYS, (ds, prep, graph, method, proto)))
        jobs += [dict(experiment=experiment, **cell, first=a, last=b) for a, b in split_blocks(config, proto)]
    return jobs


def scored_protocols(config: dict, experiment: str) -> list[str]:
    """An experiment's protocols that score points (its tables' columns): all but kind predict."""
    from ..splits import is_predict

    return [p for p in config["experiments"][experiment]["protocols"] if not is_predict(config["protocols"][p])]


def scored_solve_jobs(config: dict, experiment: str) -> list[dict]:
    """The solve jobs whose splits score points (the tables' and statistics' inputs)."""
    scored = set(scored_protocols(config, experiment))
    return [j for j in solve_jobs(config, experiment) if j["protocol"] in scored]


def predict_cells(config: dict, experiment: str) -> list[dict]:
    """Wildcard dicts (experiment and CELL_KEYS) of the cells whose protocol is kind predict."""
    scored = set(scored_protocols(config, experiment))
    return [{k: j[k] for k in ("experiment", *CELL_KEYS)} for j in solve_jobs(config, experiment)
            if j["protocol"] not in scored]


def expected_headline(config: dict, experiment: str) -> tuple[str, bool]:
    """(score, lower is better) an experiment's tables lead with, known before anything runs:
    purity for clustering methods, the test error for protocols with test points, else the error
    on the unlabeled points (:func:`gssl.metrics.headline_score`, which
    :func:`gssl.analysis.tables.headline_metric` asks from the results)."""
    e = config["experiments"][experiment]
    test_files = all(config["datasets"][d].get("test") for d in e["datasets"])  # each a test file (test:)
    score = headline_score(all(_is_clusterer(config["methods"][m]["solver"]) for m in e["methods"]),
                           test_files or all(_has_test_points(config["protocols"][p])
                                             for p in scored_protocols(config, experiment)))
    return score, not score.startswith(HIGHER_IS_BETTER)


def _has_test_points(spec: dict) -> bool:
    """melacci_cv's held-out fold, a fixed test part, or per_class_counts test points (a count,
    or null: the rest of each class)."""
    if spec["kind"] == "melacci_cv" or spec.get("test_from") is not None:
        return True
    return spec["kind"] == "per_class_counts" and ("test" in spec and spec["test"] is None
                                                  or bool(spec.get("test")))


def _is_clusterer(solver: str) -> bool:
    """gssl's own solvers answered from their sources (planning imports no solver); a plugin's
    class imported and asked."""
    from ..solvers.registry import SOLVERS, solver_class

    if solver in SOLVERS:
        return SOLVERS.is_clusterer(solver)
    from sklearn.base import is_clusterer

    return bool(is_clusterer(solver_class(solver)()))
