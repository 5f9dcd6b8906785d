"""The config schema: loaded with the registries' names and the preprocessing steps' bounds filled
in, and a config checked against it with one short line per problem."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import yaml

from ..errors import ConfigError

# YAML 1.1 (PyYAML, hence Snakemake) reads 1e-06 as a *string*: a float needs a dot, 1.0e-06
_YAML11_FLOAT = re.compile(r"^[-+]?\d+[eE][-+]?\d+$")
# shipped in the package (a non-editable install has no workflow/ beside it); workflow/schemas/ links here
SCHEMA_RESOURCE = ("schemas", "config.schema.yaml")
# where the schema names a registry instead of listing its names: {x-gssl-registry: <name>}
REGISTRY_KEYWORD = "x-gssl-registry"
# where the schema lists the preprocessing steps' entries: filled in from their classes
STEPS_KEYWORD = "x-gssl-steps"


def registries() -> dict[str, tuple[str, ...]]:
    """The names a config may use, read from the registries that define them (in their order):
    the schema's ``x-gssl-registry`` entries get these as their ``enum`` when it is loaded, so
    that no list of names is kept twice."""
    from ..datasets import FILE_SOURCE, REGISTRY
    from ..datasets.registry import plugin_datasets
    from ..features import STEPS
    from ..graphs import BACKENDS, GRAPH_KINDS, LAPLACIAN_KINDS, SIGMA_RULES, SYMMETRIZATIONS, WEIGHTS
    from ..solvers.registry import solver_names
    from ..splits import PROTOCOL_KINDS

    return {"datasets": (*REGISTRY, *sorted(plugin_datasets()), FILE_SOURCE), "preprocessing_steps": tuple(STEPS),
            "graph_kinds": GRAPH_KINDS, "graph_weights": WEIGHTS, "graph_symmetrize": SYMMETRIZATIONS,
            "laplacians": LAPLACIAN_KINDS, "sigma_rules": SIGMA_RULES, "knn_backends": BACKENDS,
            "solvers": solver_names(), "protocols": PROTOCOL_KINDS}


def _inject_registries(node, names: dict) -> None:
    if isinstance(node, dict):
        if REGISTRY_KEYWORD in node:
            try:
                node["enum"] = list(names[node[REGISTRY_KEYWORD]])
            except KeyError:
                raise ConfigError(f"the config schema names an unknown registry "
                                  f"{node[REGISTRY_KEYWORD]!r} (known: {', '.join(names)})") from None
        for value in node.values():
            _inject_registries(value, names)
    elif isinstance(node, list):
        for value in node:
            _inject_registries(value, names)


def schema_text(path=None) -> str:
    """The config schema as written: the file at ``path``, or the one shipped in the package
    (read with importlib.resources, so an installed copy finds it wherever it lives)."""
    if path is not None:
        return Path(path).read_text()
    return resources.files(__package__).joinpath(*SCHEMA_RESOURCE).read_text(encoding="utf-8")


def inject_steps(schema: dict) -> dict:
    """The schema with the preprocessing steps' entries (``x-gssl-steps``) filled in from their
    classes (gssl.features: description, parameters with types, bounds and defaults), in place;
    returned for chaining."""
    from ..features import step_schemas

    for alt in schema.get("$defs", {}).get("prep_step", {}).get("oneOf", []):
        if alt.pop(STEPS_KEYWORD, False):
            alt["properties"] = step_schemas()
    return schema


def load_schema(path=None) -> dict:
    """The config schema (the package's, or the file at ``path``) with the registries' names filled
    in as the ``enum`` of every entry that names a registry, and the preprocessing steps' entries
    from their classes: what every consumer validates with (the workflow, ``gssl config check``,
    :func:`validate_config`)."""
    # libyaml's loader where PyYAML has it: the schema's 30 kB take 5 ms there, 55 ms in Python
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    schema = inject_steps(yaml.load(schema_text(path), Loader=loader))
    _inject_registries(schema, registries())
    return schema


def _where(error) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "<top level>"


def _describe(error) -> str:
    """One line: the key path, the offending value and what is allowed."""
    while error.validator in ("oneOf", "anyOf") and error.context:
        # the alternative that got furthest into the value, preferring a real mismatch over "wrong type"
        error = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
    msg = f"config key '{_where(error)}': {error.message}"
    if error.validator == "not":  # the schema's "at most one of" rules: name the keys
        keys = sorted({k for alt in error.validator_value.get("anyOf", [error.validator_value])
                       for k in alt.get("required", [])})
        given = [k for k in keys if isinstance(error.instance, dict) and k in error.instance]
        msg = f"config key '{_where(error)}': give at most one of {', '.join(keys)} (got {', '.join(given)})"
    elif error.validator == "enum":
        msg = (f"config key '{_where(error)}': {error.instance!r} is not allowed "
               f"(allowed values: {', '.join(map(str, error.validator_value))})")
        if list(error.absolute_path)[-1:] == ["solver"]:
            msg += ("; a method of your own: an import path 'package.module:ClassName', or a name "
                    "its package registers under the gssl.solvers entry points once installed "
                    "(pip install -e <its folder>)")
    elif error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        if allowed:
            msg += f" (allowed keys: {', '.join(allowed)})"
    return msg


def _scalar_problems(value, where="") -> list[str]:
    """Values YAML reads differently from what was meant: 1e-06 as text, .nan as a number no
    parameter accepts (a NaN fails, if at all, deep inside a job, without naming its key)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _scalar_problems(v, f"{where}.{k}" if where else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _scalar_problems(v, f"{where}[{i}]")]
    if isinstance(value, float) and value != value:
        return [f"config key '{where}' is NaN (.nan); give a number"]
    if isinstance(value, str) and _YAML11_FLOAT.match(value.strip()):
        mantissa, exponent = re.split("[eE]", value.strip())
        return [f"config key '{where}': {value!r} is read as text by YAML 1.1; "
                f"write it with a dot, e.g. {mantissa}.0e{exponent}"]
    return []


def check_schema(config: dict, schema_path=None) -> dict:
    """ConfigError listing (at most ten of) the values YAML misreads, else the schema's
    complaints; returns the loaded schema."""
    import jsonschema

    problems = _scalar_problems(config)
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems[:10]))
    schema = load_schema(schema_path)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = [_describe(e) for e in errors[:10]]
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    return schema
