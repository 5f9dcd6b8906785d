"""Workflow configuration: schema validation with short messages, cross-references, job enumeration."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import yaml

from .errors import ConfigError

SECTIONS = ("datasets", "preprocessing", "graphs", "methods", "protocols")
GRAPH_ONLY_SOURCES = {"20news"}
# YAML 1.1 (PyYAML, hence Snakemake) reads 1e-06 as a *string*: a float needs a dot, 1.0e-06
_YAML11_FLOAT = re.compile(r"^[-+]?\d+[eE][-+]?\d+$")
DEFAULT_SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def load_schema(path=None) -> dict:
    return yaml.safe_load(Path(path or DEFAULT_SCHEMA).read_text())


def _where(error) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "<top level>"


def _describe(error) -> str:
    """One line: the key path, the offending value and what is allowed."""
    while error.validator in ("oneOf", "anyOf") and error.context:
        # the alternative that got furthest into the value, preferring a real mismatch over "wrong type"
        error = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
    msg = f"config key '{_where(error)}': {error.message}"
    if error.validator == "enum":
        msg += f" (allowed values: {', '.join(map(str, error.validator_value))})"
    elif error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        if allowed:
            msg += f" (allowed keys: {', '.join(allowed)})"
    return msg


def _strings_meant_as_numbers(value, where="") -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _strings_meant_as_numbers(v, f"{where}.{k}" if where else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _strings_meant_as_numbers(v, f"{where}[{i}]")]
    if isinstance(value, str) and _YAML11_FLOAT.match(value.strip()):
        mantissa, exponent = re.split("[eE]", value.strip())
        return [f"config key '{where}': {value!r} is read as text by YAML 1.1; "
                f"write it with a dot, e.g. {mantissa}.0e{exponent}"]
    return []


def validate_config(config: dict, schema_path=None) -> dict:
    """Validate against the JSON schema, fill defaults, check that experiments name existing ids."""
    import jsonschema

    problems = _strings_meant_as_numbers(config)
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems[:10]))
    schema = load_schema(schema_path)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = [_describe(e) for e in errors[:10]]
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    for key, sub in schema["properties"].items():
        if "default" in sub:
            config.setdefault(key, sub["default"])
    check_references(config)
    return config


def check_references(config: dict) -> None:
    problems = []
    for exp, entry in config["experiments"].items():
        for section in SECTIONS:
            for ident in entry[section]:
                if ident not in config[section]:
                    known = ", ".join(sorted(config[section])) or "none"
                    problems.append(f"experiment '{exp}' names unknown {section} id '{ident}' "
                                    f"(defined: {known})")
        for ds in entry["datasets"]:
            if ds in config["datasets"] and config["datasets"][ds]["source"] in GRAPH_ONLY_SOURCES:
                problems += [f"experiment '{exp}': dataset '{ds}' is graph-only, so graph '{g}' must have "
                             f"kind: precomputed" for g in entry["graphs"]
                             if config["graphs"].get(g, {}).get("kind") != "precomputed"]
                problems += [f"experiment '{exp}': dataset '{ds}' is graph-only (no features), so "
                             f"preprocessing '{p}' must be an empty list" for p in entry["preprocessing"]
                             if config["preprocessing"].get(p)]
    problems += _method_problems(config["methods"])
    for exp in config.get("run", []):
        if exp not in config["experiments"]:
            problems.append(f"run names unknown experiment '{exp}' "
                            f"(defined: {', '.join(sorted(config['experiments']))})")
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))


def _method_problems(methods: dict) -> list[str]:
    """Unknown solver names or parameters, caught before any job starts."""
    from .solvers.registry import make_solver

    problems = []
    for mid, entry in methods.items():
        try:
            make_solver(entry["solver"], entry.get("params"))
        except (ConfigError, TypeError, ValueError) as exc:
            problems.append(f"method '{mid}': {exc}")
    return problems


def experiments_to_run(config: dict) -> list[str]:
    return list(config.get("run") or config["experiments"])


def solve_jobs(config: dict, experiment: str) -> list[dict]:
    """Wildcard dicts of every solve job of one experiment."""
    from .splits import n_splits

    e = config["experiments"][experiment]
    jobs = []
    for ds, prep, graph, method, proto in itertools.product(
            e["datasets"], e["preprocessing"], e["graphs"], e["methods"], e["protocols"]):
        for split in range(n_splits(config["protocols"][proto])):
            jobs.append(dict(experiment=experiment, dataset=ds, prep=prep, graph=graph,
                             method=method, protocol=proto, split=split))
    return jobs


def load_yaml(path) -> dict:
    return yaml.safe_load(Path(path).read_text())
