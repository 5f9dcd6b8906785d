"""Workflow configuration: schema validation with short messages, cross-references, strict YAML.

What a valid config asks to run (jobs, grid points, split blocks) is :mod:`gssl.pipeline.plan`."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import yaml

from ..errors import ConfigError
from ..metrics import SCORE_PREFIXES
from .plan import get_dotted, grid_values, grid_variants, set_dotted

SECTIONS = ("datasets", "preprocessing", "graphs", "methods", "protocols")
# YAML 1.1 (PyYAML, hence Snakemake) reads 1e-06 as a *string*: a float needs a dot, 1.0e-06
_YAML11_FLOAT = re.compile(r"^[-+]?\d+[eE][-+]?\d+$")
# shipped in the package (a non-editable install has no workflow/ beside it); workflow/schemas/ links here
SCHEMA_RESOURCE = ("schemas", "config.schema.yaml")
# where the schema names a registry instead of listing its names: {x-gssl-registry: <name>}
REGISTRY_KEYWORD = "x-gssl-registry"


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


def load_schema(path=None) -> dict:
    """The config schema (the package's, or the file at ``path``) with the registries' names filled
    in as the ``enum`` of every entry that names a registry, and the preprocessing steps' bounds and
    defaults from their classes: what every consumer validates with
    (the workflow, ``gssl config check``, :func:`validate_config`)."""
    from ..features import fill_step_schema

    schema = yaml.safe_load(schema_text(path))
    _inject_registries(schema, registries())
    fill_step_schema(schema["$defs"]["prep_step"])
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


def validate_config(config: dict, schema_path=None) -> dict:
    """Validate against the JSON schema, fill defaults, check that experiments name existing ids."""
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
    for key, sub in schema["properties"].items():
        if "default" in sub:
            config.setdefault(key, sub["default"])
    check_references(config)
    _check_results_folder(config["results"])
    return config


def _check_results_folder(results) -> None:
    path = Path(results)
    for folder in (path, *path.parents):
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"results: {str(results)!r} cannot be the results folder: {str(folder)!r} "
                              "is a file; name a folder (created if missing), e.g. results: results")


def check_references(config: dict) -> None:
    from ..datasets import graph_only_datasets

    problems, graph_only = [], graph_only_datasets()
    for exp, entry in config["experiments"].items():
        for section in SECTIONS:
            for ident in entry[section]:
                if ident not in config[section]:
                    known = ", ".join(sorted(config[section])) or "none"
                    problems.append(f"experiment '{exp}' names unknown {section} id '{ident}' "
                                    f"(defined: {known})")
        for ds in entry["datasets"]:
            if ds in config["datasets"] and config["datasets"][ds]["source"] in graph_only:
                problems += [f"experiment '{exp}': dataset '{ds}' is graph-only, so graph '{g}' must have "
                             f"kind: precomputed" for g in entry["graphs"]
                             if config["graphs"].get(g, {}).get("kind") != "precomputed"]
                problems += [f"experiment '{exp}': dataset '{ds}' is graph-only (no features), so "
                             f"preprocessing '{p}' must be an empty list" for p in entry["preprocessing"]
                             if config["preprocessing"].get(p)]
        problems += _selection_problems(config, exp, entry)
        problems += _reference_problems(exp, entry)
    problems += _method_problems(config["methods"])
    problems += _protocol_problems(config["protocols"])
    for exp in config.get("run", []):
        if exp not in config["experiments"]:
            problems.append(f"run names unknown experiment '{exp}' "
                            f"(defined: {', '.join(sorted(config['experiments']))})")
    if not problems:  # the data files are read once the names they are used under are right
        problems += _data_file_problems(config)
    if not problems:  # sizes, classes and feature counts known before any job
        problems += _known_shape_problems(config)
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))


def _data_file_problems(config: dict) -> list[str]:
    """What the jobs would find in a ``source: file`` dataset, found before any job: the file
    (missing, ragged, non-numeric or non-finite features, one class, duplicated ids), its class
    view, and whether each protocol an experiment runs on it can draw its splits."""
    from ..datasets import FILE_SOURCE, select
    from ..datasets.views import class_view
    from ..errors import DatasetError, SplitError
    from ..splits import make_splits

    problems = []
    for did, entry in config["datasets"].items():
        if entry["source"] != FILE_SOURCE:
            continue
        try:
            ds = _read_file_cached(entry, did)
            view = class_view(entry)
            ds = select(ds, **view) if view else ds
        except (ConfigError, DatasetError) as exc:
            problems.append(f"datasets.{did}: {exc}")
            continue
        for exp, e in config["experiments"].items():
            if did not in e["datasets"]:
                continue
            for pid in e["protocols"]:
                try:
                    make_splits(ds.y, config["protocols"][pid], did, pid)
                except (ConfigError, SplitError) as exc:
                    problems.append(f"experiment '{exp}': protocol '{pid}' on dataset '{did}' "
                                    f"({entry['path']}): {exc}{_short_class_hint(exc, ds, did)}")
    return problems


def _short_class_hint(exc, ds, did: str) -> str:
    """The short classes by name, and the config key that drops them."""
    short = getattr(exc, "short_classes", None)
    if short is None or not len(short):
        return ""
    names = [str(ds.classes[int(c)]) for c in short]
    kept = [str(c) for c in ds.classes if str(c) not in names]
    drop = (f"; to drop them, give datasets.{did} classes: [{', '.join(kept)}]"
            if len(kept) >= 2 else "")
    return f". Class {short[0]} is {names[0]!r} (short: {', '.join(names)}){drop}"


# ----------------------------------------------------------------------------- known shapes
# What a dataset, features or graph job would refuse, found from what is known before any job:
# the dataset specs' sizes, class counts, class names and generator params, a data
# file's contents (read once by _data_file_problems). Each message is the job's own (the same
# function raises it, or the same text), after where it comes from; a check that needs what only a
# job knows (a plugin's data, the class sizes of a view of downloaded data) is skipped.


class _Facts:
    """What is known of a dataset (after its class view) before its job runs."""

    def __init__(self, n=None, n_exact=True, d=None, sparse=False):
        self.n, self.n_exact, self.d, self.sparse = n, n_exact, d, sparse


def _registry_facts(did: str, entry: dict) -> _Facts | None:
    """A registered dataset's size, features and classes after its view; ConfigError (the job's
    message) for generator params the job refuses, an unknown class name, a class index out of
    range or overlapping groups. None where too little is known (a plugin)."""
    import numpy as np

    from ..datasets import get_spec, select
    from ..datasets.dataset import Dataset
    from ..datasets.synthetic import check_params
    from ..datasets.views import class_view

    spec = get_spec(entry["source"])
    if spec.kind == "plugin":
        return None
    params = entry.get("params")
    if spec.kind == "mirror":
        if params:
            raise ConfigError(f"dataset {spec.name!r} is read from files and takes no params, got {params}")
        n, d = spec.n_samples, spec.n_features
        counts = None
    else:
        kwargs = check_params(spec.name, spec.generator_params(params, None))
        n, d = kwargs.get("n_samples", spec.n_samples), kwargs.get("n_features", spec.n_features)
        c = spec.n_classes
        counts = [len(range(i, n, c)) for i in range(c)] if spec.kind == "generator" else None
    facts = _Facts(n, True, None if spec.graph_only else d, spec.sparse)
    view = class_view(entry)
    if not view:
        return facts
    names = spec.class_names()
    if names is None:
        facts.n_exact = False
        return facts
    stub = Dataset(spec.name, None, np.arange(len(names)), np.asarray(names))  # one point per class
    kept = select(stub, **view).meta["view"]  # the job's own checks and messages
    flat = kept.get("classes") or [c for g in kept.get("groups", []) for c in g]
    if counts is None:
        facts.n_exact = False  # at most the parent's size
    else:
        facts.n = sum(counts[c] for c in flat)
    return facts


def _file_facts(did: str, entry: dict) -> _Facts | None:
    """A data file's size and features after its view, as read by :func:`_data_file_problems`."""
    import scipy.sparse as sp

    from ..datasets import select
    from ..datasets.views import class_view

    try:
        ds = _read_file_cached(entry, did)
        view = class_view(entry)
        ds = select(ds, **view) if view else ds
    except Exception:  # noqa: BLE001 - reported by _data_file_problems
        return None
    X = ds.X
    return _Facts(ds.n_samples, True, None if X is None else X.shape[1], bool(X is not None and sp.issparse(X)))


def _graph_problem(spec: dict, n: int, n_exact: bool) -> str | None:
    """What the graph job would refuse for ``n`` points: k (and k_st) >= n (gssl.graphs.check_k)."""
    from ..errors import GraphError
    from ..graphs import check_k, validate_graph_spec

    spec = validate_graph_spec(spec)
    if spec["kind"] not in ("knn", "lle"):
        return None
    keys = (["k_st"] if spec.get("weights") == "self_tuning" else []) + ["k"]
    for key in keys:
        if n_exact:
            try:
                check_k(spec[key], n, key)
            except GraphError as exc:
                return str(exc)
        elif spec[key] >= n:
            return (f"{key}={spec[key]} neighbours requested but the data has at most {n} points "
                    f"(fewer after its class view); the maximum allowed {key} is below {n}")
    return None


def _known_shape_problems(config: dict) -> list[str]:
    """k >= n, unknown class names, class indices out of range, overlapping groups, more PCA or
    random-projection components than features, and generator params the generator refuses: each
    found before any job from what the registry, the generators' params and the data files tell,
    with the message the job would give."""
    from ..datasets import FILE_SOURCE
    from ..features import chain_output_shape

    problems, facts = [], {}
    for did, entry in config["datasets"].items():
        try:
            facts[did] = (_file_facts(did, entry) if entry["source"] == FILE_SOURCE
                          else _registry_facts(did, entry))
        except ConfigError as exc:
            problems.append(f"datasets.{did}: {exc}")
            facts[did] = None
    seen = set()
    for exp, e in config["experiments"].items():
        for did in e["datasets"]:
            base = facts.get(did)
            if base is None or base.n is None:
                continue
            for prep in e["preprocessing"]:
                try:  # the chain itself, or a step refusing these shapes: the features job's message
                    chain_output_shape(config["preprocessing"][prep], base.n, base.d, base.sparse,
                                       base.n_exact)
                    found = None
                except ConfigError as exc:
                    found = str(exc)
                if found and (did, prep) not in seen:
                    seen.add((did, prep))
                    problems.append(f"experiment '{exp}': preprocessing '{prep}' on dataset '{did}': {found}")
                if found:
                    continue
                for gid in e["graphs"]:
                    try:
                        found = _graph_problem(config["graphs"][gid], base.n, base.n_exact)
                    except ConfigError as exc:  # the spec itself: the graph job's message
                        found = str(exc)
                    if found and (did, gid) not in seen:
                        seen.add((did, gid))
                        problems.append(f"experiment '{exp}': graph '{gid}' on dataset '{did}': {found}")
    return problems


_FILE_CACHE: dict = {}


def _read_file_cached(entry: dict, did: str):
    """A data file read once per process while it is unchanged (``snakemake -n`` validates the
    config more than once)."""
    from ..datasets import read_file_dataset
    from ..datasets.files import FileSource

    src = FileSource.from_entry(entry, f"dataset {did!r}")
    src.check_exists()
    key = (src, tuple((p.stat().st_mtime_ns, p.stat().st_size) for p in src.files))
    if key not in _FILE_CACHE:
        _FILE_CACHE[key] = read_file_dataset(entry, did)
    return _FILE_CACHE[key]


def _protocol_problems(protocols: dict) -> list[str]:
    """What the split jobs would refuse (e.g. label_fraction with fraction 1.0), caught here so
    that ``gssl config check`` and the workflow's DAG stage agree."""
    from ..splits import validate_protocol

    problems = []
    for pid, spec in protocols.items():
        try:
            validate_protocol(spec)
        except ConfigError as exc:
            problems.append(f"protocols.{pid}: {exc}")
    return problems


def _method_problems(methods: dict) -> list[str]:
    """Unknown solver names or parameters (of every grid point), caught before any job starts."""
    from ..solvers.registry import make_solver

    problems = []
    for mid, entry in methods.items():
        grid = entry.get("grid") or {}
        nested = [k for k in grid for other in grid if other.startswith(k + ".")]
        if nested:
            problems.append(f"method '{mid}': grid key '{nested[0]}' contains another grid key; "
                            f"give either the whole value or its parts")
            continue
        points = grid_variants(entry) if grid else []
        if len({v for v, _ in points}) < len(points):
            problems.append(f"method '{mid}': its grid lists the same point twice (repeated "
                            f"values); each point must be different")
            continue
        for variant, params in points or [("", entry.get("params"))]:
            try:
                solver = make_solver(entry["solver"], params)
            except (ConfigError, TypeError, ValueError) as exc:
                where = f" (grid point {variant}: {grid_values(entry, variant)})" if variant else ""
                problems.append(f"method '{mid}'{where}: {exc}")
                break
        else:
            problems += _class_prior_problems(mid, entry, solver)
    return problems


def _class_prior_problems(mid: str, entry: dict, solver) -> list[str]:
    """A method-level ``class_priors`` needs class scores to correct, and is refused where the
    solver has the option itself (one place to set it)."""
    from sklearn.base import is_classifier

    from ..solvers.class_priors import check_class_priors

    if entry.get("class_priors") is None:
        return []
    if "class_priors" in solver.get_params():
        return [f"method '{mid}': solver '{entry['solver']}' takes class_priors as a parameter; "
                f"set params.class_priors instead of the method-level key"]
    if not is_classifier(solver):
        return [f"method '{mid}': class_priors corrects class scores, but solver "
                f"'{entry['solver']}' is not a classifier with class scores"]
    try:
        check_class_priors(f"method '{mid}'", entry["class_priors"])
    except ConfigError as exc:
        return [str(exc)]
    return []


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


def _selection_problems(config: dict, exp: str, entry: dict) -> list[str]:
    """A selection must name a protocol and, unless it reproduces a paper's tuning on the scored
    points, never read the label of a point that a reported protocol scores."""
    methods = config["methods"]
    problems = []
    for m in entry["methods"]:
        src = methods.get(m, {}).get("selected_as")
        if src is None:
            continue
        if methods[m].get("grid"):
            problems.append(f"method '{m}' has both a grid and selected_as: keep one")
        elif src not in entry["methods"] or not methods.get(src, {}).get("grid"):
            problems.append(f"experiment '{exp}': method '{m}' is selected_as '{src}', which must be "
                            f"a method of the experiment with a grid")
        else:
            problems += _selected_as_problems(m, methods[m], src, methods[src])
    gridded = [m for m in entry["methods"] if methods.get(m, {}).get("grid")]
    sel = entry.get("selection")
    if sel is None:
        return problems + [f"experiment '{exp}': method '{m}' has a grid but the experiment names "
                           f"no selection (add selection: {{protocol: <id>}})" for m in gridded]
    if not gridded:
        return problems + [f"experiment '{exp}': selection is given but none of its methods has a grid"]
    proto = sel["protocol"]
    if proto not in config["protocols"]:
        return problems + [f"experiment '{exp}': selection names unknown protocols id '{proto}' "
                           f"(defined: {', '.join(sorted(config['protocols']))})"]
    if sel.get("per_split"):
        return problems + _per_split_problems(config, exp, entry, sel)
    if sel.get("scored_points"):
        return problems
    if proto in entry["protocols"]:
        return problems + [f"experiment '{exp}': selection protocol '{proto}' is also a reported "
                           f"protocol; choose on other splits, or set selection.per_split: true "
                           f"with a metric on the validation points, or selection.scored_points: "
                           f"true to reproduce a paper that tuned on its scored points"]
    hold = config["protocols"][proto].get("holdout") or {}
    if hold.get("part") != "inside":
        problems.append(f"experiment '{exp}': selection protocol '{proto}' must draw inside a "
                        f"holdout set (holdout: {{fraction: f, part: inside}}) so that it never "
                        f"reads the label of a point the reported protocols score; or set "
                        f"selection.scored_points: true")
    for p in entry["protocols"]:
        ph = config["protocols"].get(p, {}).get("holdout") or {}
        if ph != {"fraction": hold.get("fraction"), "part": "outside"}:
            problems.append(f"experiment '{exp}': reported protocol '{p}' must leave the selection "
                            f"holdout unused: give it holdout: {{fraction: {hold.get('fraction')}, "
                            f"part: outside}} (selection protocol '{proto}')")
    return problems


def _selected_as_problems(mid: str, entry: dict, src: str, source: dict) -> list[str]:
    """Every value the source's grid can choose must fit the method's own params, which must not
    set those keys themselves (the choice would silently replace them)."""
    from ..solvers.registry import make_solver

    own = [k for k in source["grid"] if _has_dotted(entry.get("params") or {}, k)]
    if own:
        return [f"method '{mid}' is selected_as '{src}' but sets {', '.join(own)} itself; remove "
                f"them from its params (the selection chooses them)"]
    for variant, params in grid_variants(source):
        mine = json.loads(json.dumps(entry.get("params") or {}))
        try:
            for key in source["grid"]:
                set_dotted(mine, key, get_dotted(params, key))
            make_solver(entry["solver"], mine)
        except (ConfigError, TypeError, ValueError) as exc:
            return [f"method '{mid}' is selected_as '{src}', but grid point {variant} "
                    f"({grid_values(source, variant)}) does not fit it: {exc}"]
    return []


def _has_dotted(d: dict, key: str) -> bool:
    try:
        get_dotted(d, key)
    except (KeyError, TypeError):
        return False
    return True


def _per_split_problems(config: dict, exp: str, entry: dict, sel: dict) -> list[str]:
    """Per-split selection is honest when each split chooses on its own validation points, which
    no reported score of that split counts."""
    proto, problems = sel["protocol"], []
    if entry["protocols"] != [proto]:
        problems.append(f"experiment '{exp}': per-split selection chooses for the splits of "
                        f"'{proto}', so it must be the experiment's only protocol (it reports "
                        f"{', '.join(entry['protocols'])})")
    spec = config["protocols"][proto]
    if not spec.get("validation"):
        problems.append(f"experiment '{exp}': per-split selection needs validation points, but "
                        f"protocol '{proto}' has none (a melacci_cv protocol with validation: n)")
    if not sel.get("scored_points"):
        for key in ("metric", "tie_break"):
            name = sel.get(key, "error_unlabeled" if key == "metric" else None)
            if name is not None and not name.endswith("_validation"):
                problems.append(f"experiment '{exp}': per-split selection.{key} '{name}' would read "
                                f"labels the split scores; use a metric on the validation points "
                                f"(e.g. error_validation), or set selection.scored_points: true")
    return problems


def _reference_problems(exp: str, entry: dict) -> list[str]:
    """Every id a reference or the tuned list names must be one of the experiment's own."""
    problems = []
    refs = entry.get("reference") or []
    for ref in refs if isinstance(refs, list) else [refs]:
        if ref.get("dataset") and ref["dataset"] not in entry["datasets"]:
            problems.append(f"experiment '{exp}': reference dataset '{ref['dataset']}' is not one of "
                            f"its datasets ({', '.join(entry['datasets'])})")
        for method, row in ref["values"].items():
            if method not in entry["methods"]:
                problems.append(f"experiment '{exp}': reference names method '{method}', which is not "
                                f"one of its methods ({', '.join(entry['methods'])})")
            problems += [f"experiment '{exp}': reference for method '{method}' names protocol "
                         f"(column) '{p}', which is not one of its protocols "
                         f"({', '.join(entry['protocols'])})" for p in row if p not in entry["protocols"]]
    problems += [f"experiment '{exp}': tuned_on_scored_points names '{m}', which is not one of its "
                 f"methods" for m in entry.get("tuned_on_scored_points") or [] if m not in entry["methods"]]
    lowest = (entry.get("paper_statistic") or {}).get("lowest", "")
    if lowest.startswith(SCORE_PREFIXES):
        problems.append(f"experiment '{exp}': paper_statistic.lowest '{lowest}' reads labels: picking "
                        f"the split with the lowest score would report a cherry-picked draw; name a "
                        f"label-free quantity such as solver_discrete_energy")
    return problems


class _StrictLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping (plain YAML keeps the last one
    silently: ``k: 10`` then ``k: 30`` would build a k = 30 graph)."""


def _strict_mapping(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # <<: *base: its keys may be overridden
            continue
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise ConfigError(f"key {key!r} is given twice in one mapping (lines {seen[key] + 1} and "
                              f"{key_node.start_mark.line + 1}): keep one")
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _strict_mapping)


def load_yaml(path) -> dict:
    """A config file as a mapping. ConfigError, naming the file, for a YAML syntax error, a key
    given twice in one mapping, an empty file, or a top level that is not a mapping."""
    try:
        data = yaml.load(Path(path).read_text(), Loader=_StrictLoader)  # noqa: S506 - a SafeLoader
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    if data is None:  # Snakemake refuses an empty config file too
        raise ConfigError(f"{path} is empty (or only comments): give config keys (datasets:, "
                          "methods:, ...) or leave the file out")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of config keys (datasets:, "
                          f"methods:, ...), got a {type(data).__name__}")
    return data


def load_yaml_files(paths) -> dict:
    """Config files merged in order, as Snakemake merges several ``--configfile``: a later file's
    mapping updates an earlier one's key by key, at every depth; anything else replaces it."""
    config: dict = {}
    for path in paths:
        _deep_update(config, load_yaml(path))
    return config


def _deep_update(base: dict, new: dict) -> None:
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _deep_update(base[k], v)
        else:
            base[k] = v
