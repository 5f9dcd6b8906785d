"""Workflow configuration: checked against the schema (:mod:`.schema`), its ids cross-referenced
(:mod:`.references`), its data preflighted (:mod:`.preflight`); files read by :mod:`.config_files`.

What a valid config asks to run (jobs, grid points, split blocks) is :mod:`gssl.pipeline.plan`."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from . import paths
from .config_files import load_yaml, load_yaml_files
from .preflight import preflight_problems
from .references import SECTIONS, reference_problems
from .schema import (REGISTRY_KEYWORD, SCHEMA_RESOURCE, check_schema, inject_steps, load_schema, registries,
                     schema_text)

__all__ = ["REGISTRY_KEYWORD", "SCHEMA_RESOURCE", "SECTIONS", "check_references", "inject_steps", "load_schema",
           "load_yaml", "load_yaml_files", "registries", "schema_text", "selected_by", "table_entry",
           "validate_config"]


def validate_config(config: dict, schema_path=None, *, planning_cache: bool = False) -> dict:
    """Validate against the JSON schema, fill defaults, check that experiments name existing ids.
    ``planning_cache``: keep what the data files hold under the results folder
    (:data:`gssl.pipeline.paths.PLANNING`), so that the next check of an unchanged file does not
    read it, and the checked config, so that the next check of the same config on unchanged
    inputs is not run again (the workflow's planning does: :mod:`.check_verdict`)."""
    planning = verdict = None
    if planning_cache and schema_path is None and isinstance(config.get("results"), str):
        from .check_verdict import load_checked

        planning = paths.path(config["results"], paths.PLANNING)
        checked, verdict = load_checked(config, planning)
        if checked:  # the folder may have become a file since
            _check_results_folder(config["results"], config.get("results_outside_workdir", False))
            return config
    schema = check_schema(config, schema_path)
    for key, sub in schema["properties"].items():
        if "default" in sub:
            config.setdefault(key, sub["default"])
    _check_results_folder(config["results"], config.get("results_outside_workdir", False))
    apply_cell_params(config)
    check_references(config, paths.path(config["results"], paths.PLANNING) if planning_cache else None)
    if planning is not None:
        from .check_verdict import store_checked

        store_checked(config, verdict, planning)
    return config


def apply_cell_params(config: dict) -> None:
    """Every method of a workflow cell uses the cell's graph: a gssl solver's ``cell_params``
    (:class:`gssl.solvers.tags.SolverTags`; label_spreading's ``graph: given``) fill in what a
    method entry's ``params`` (and grid) leave out, so the jobs, the selection and the MLflow
    params all see them. A parameter they make unused (label_spreading's ``n_neighbors``) given
    without the one that uses it is refused, naming both ways out."""
    from ..solvers.registry import SOLVERS
    from ..solvers.tags import solver_tags

    for mid, entry in config.get("methods", {}).items():
        if not isinstance(entry, dict) or entry.get("solver") not in SOLVERS:
            continue
        tags = solver_tags(SOLVERS[entry["solver"]])
        if tags is None or not tags.cell_params:
            continue
        params, grid = entry.setdefault("params", {}), entry.get("grid") or {}
        if not isinstance(params, dict):
            continue
        filled = {k: v for k, v in tags.cell_params.items() if k not in params and k not in grid}
        unused = [k for k in tags.cell_params_unused if k in params or k in grid]
        if filled and unused:
            given = ", ".join(f"{k}: {v}" for k, v in filled.items())
            raise ConfigError(
                f"method '{mid}': {entry['solver']} in a workflow cell uses the cell's graph ({given}, "
                f"the default there), which leaves {', '.join(unused)} unused; give "
                f"{', '.join(f'{k}: {_other(entry, k)}' for k in filled)} in its params for its own "
                f"graph of the features (as before gssl's cells defaulted to theirs), or drop "
                f"{', '.join(unused)}")
        params.update(filled)


def _other(entry: dict, key: str) -> str:
    """The value of ``key`` other than the cell's default: the solver's constructor default."""
    import inspect

    from ..solvers.registry import SOLVERS

    return inspect.signature(SOLVERS[entry["solver"]]).parameters[key].default


def _check_results_folder(results, outside_allowed: bool = False) -> None:
    """The results folder: a folder (not a file), neither empty nor the filesystem root nor the
    working directory itself (the workflow writes data/, runs/, ... right under it), and inside
    the working directory unless ``results_outside_workdir`` says otherwise."""
    if not str(results).strip():
        raise ConfigError("results: '' is empty: the outputs would go to data/, runs/, ... at the filesystem "
                          "root or the working directory; name a folder, e.g. results: results")
    path = Path(results)
    where = Path.cwd().resolve()
    full = (where / path).resolve()
    if full == Path(full.anchor):
        raise ConfigError(f"results: {str(results)!r} is the filesystem root: name a folder, e.g. results: results")
    if full == where:
        raise ConfigError(f"results: {str(results)!r} is the working directory itself: the outputs (data/, "
                          "runs/, ...) would mix with the workflow's files; name a folder in it, e.g. "
                          "results: results")
    if not outside_allowed and where not in full.parents:
        raise ConfigError(f"results: {str(results)!r} is outside the working directory ({full}): name a folder "
                          "in it (results: results), or set results_outside_workdir: true to write there")
    for folder in (path, *path.parents):
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"results: {str(results)!r} cannot be the results folder: {str(folder)!r} "
                              "is a file; name a folder (created if missing), e.g. results: results")


def check_references(config: dict, planning_cache=None) -> None:
    """ConfigError listing every id that does not resolve; where all do, what the data preflight
    finds (the data files are read once the names they are used under are right)."""
    problems = reference_problems(config) or preflight_problems(config, planning_cache)
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))


def selected_by(config: dict, method: str) -> str | None:
    """The method whose selection stage gives ``method`` its parameters: itself when it has a grid,
    the one it names in ``selected_as``, or None (fixed parameters)."""
    entry = config["methods"][method]
    return method if entry.get("grid") else entry.get("selected_as")


def table_entry(config: dict, experiment: str) -> dict:
    """An experiment's entry as the aggregate rule passes it to :mod:`gssl.analysis.report`: with
    ``gridded_methods``, its methods whose parameters a selection stage chooses."""
    entry = config["experiments"][experiment]
    return {**entry, "gridded_methods": [m for m in entry["methods"] if selected_by(config, m) is not None]}
