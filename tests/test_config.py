import copy
from pathlib import Path

import pytest
import yaml

from gssl.pipeline.config import load_yaml, validate_config
from gssl.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


@pytest.fixture()
def config(default_config):
    return default_config


def test_default_config_is_valid_and_gets_defaults(config):
    out = validate_config(config, SCHEMA)
    assert out["results"] == "results" and out["seed"] == 0 and out["threads"] == 1


@pytest.mark.parametrize("path", sorted((REPO / "config" / "experiments").glob("*.yaml")))
def test_experiment_configs_are_valid(config, path):
    from gssl.cli import _deep_update
    from gssl.pipeline.config import SECTIONS

    added = yaml.safe_load(path.read_text())
    _deep_update(config, added)
    out = validate_config(config, SCHEMA)
    # the file's experiments are there with what they name, and the defaults are filled in
    assert added["experiments"] and out["results"] == "results"
    for name, entry in added["experiments"].items():
        assert out["experiments"][name] == entry
        assert all(set(entry[section]) <= set(out[section]) for section in SECTIONS), name


def test_bad_enum_names_key_and_allowed_values(config):
    config["graphs"]["knn10"]["weights"] = "gaussian"
    with pytest.raises(ConfigError) as exc:
        validate_config(config, SCHEMA)
    msg = str(exc.value)
    assert "graphs.knn10.weights" in msg and "'gaussian'" in msg
    assert "binary, heat, self_tuning" in msg


@pytest.mark.parametrize("entry, message", [
    ({"solver": "poisson", "class_priors": "uniform"}, "set params.class_priors instead"),
    ({"solver": "kmeans", "class_priors": "uniform"}, "is not a classifier with class scores"),
    ({"solver": "rls", "class_priors": "true"}, "methods.rls.class_priors"),
    ({"solver": "rls", "class_priors": [0.5, 0]}, "methods.rls.class_priors"),
    ({"solver": "rls", "class_priors": [0.5, float("inf")]}, "positive class fractions"),
])
def test_method_level_class_priors_are_checked(config, entry, message):
    config["methods"]["rls"] = entry
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)


def test_method_level_class_priors_accepted_on_a_classifier(config):
    config["methods"]["rls"]["class_priors"] = "labeled"
    assert validate_config(config, SCHEMA)["methods"]["rls"]["class_priors"] == "labeled"  # kept as given


def test_unknown_key_lists_allowed_keys(config):
    config["graphs"]["knn10"]["neighbours"] = 5
    with pytest.raises(ConfigError, match="graphs.knn10.*neighbours.*allowed keys: backend, k, k_st, kind, laplacian"):
        validate_config(config, SCHEMA)


def test_unknown_dataset_source(config):
    config["datasets"]["digits"]["source"] = "cifar10"
    with pytest.raises(ConfigError, match="datasets.digits.source.*allowed values: digits"):
        validate_config(config, SCHEMA)


@pytest.mark.parametrize("section", ["datasets", "graphs", "methods", "protocols", "preprocessing"])
def test_unknown_ids_in_experiment(config, section):
    config["experiments"]["demo_digits"][section] = ["nope"]
    with pytest.raises(ConfigError, match=f"unknown {section} id 'nope'.*defined: "):
        validate_config(config, SCHEMA)


def test_graph_only_dataset_needs_precomputed_graph(config):
    cfg = copy.deepcopy(config)
    cfg["datasets"]["news"] = {"source": "20news"}
    cfg["experiments"]["demo_digits"]["datasets"] = ["news"]
    with pytest.raises(ConfigError, match="graph-only"):
        validate_config(cfg, SCHEMA)


def test_run_must_name_experiments(config):
    config["run"] = ["missing"]
    with pytest.raises(ConfigError, match="run names unknown experiment 'missing'"):
        validate_config(config, SCHEMA)


def test_yaml11_exponent_without_dot_gets_the_fix(config):
    config.update(yaml.safe_load("methods: {lr: {solver: lap_rls, params: {gamma_A: 1e-06}}}"))
    with pytest.raises(ConfigError, match=r"methods\.lr\.params\.gamma_A.*'1e-06'.*1\.0e-06"):
        validate_config(config, SCHEMA)


def test_expected_headline_is_known_before_anything_runs():
    from gssl.pipeline.plan import expected_headline

    cfg = {"methods": {"m": {"solver": "mtv"}, "r": {"solver": "rls"}},
           "protocols": {"u": {"kind": "unsupervised"}, "cv": {"kind": "melacci_cv"},
                         "l": {"kind": "labels_per_class", "n": 1}},
           "experiments": {"clu": {"methods": ["m"], "protocols": ["u"]},
                           "cv": {"methods": ["r"], "protocols": ["cv"]},
                           "lab": {"methods": ["r", "m"], "protocols": ["l"]}}}
    assert expected_headline(cfg, "clu") == ("purity", False)
    assert expected_headline(cfg, "cv") == ("error_test", True)
    assert expected_headline(cfg, "lab") == ("error_unlabeled", True)
    # a fixed test part, or the rest of each class as test points: the test error leads
    cfg["protocols"].update(tf={"kind": "per_class_counts", "labeled": 10, "unlabeled": 0, "test": 0,
                                "test_from": 7291},
                            rest={"kind": "per_class_counts", "labeled": 2, "unlabeled": 18, "test": None},
                            none={"kind": "per_class_counts", "labeled": 2, "unlabeled": 18})
    cfg["experiments"].update(tf={"methods": ["r"], "protocols": ["tf", "rest"]},
                              none={"methods": ["r"], "protocols": ["none"]})
    assert expected_headline(cfg, "tf") == ("error_test", True)
    assert expected_headline(cfg, "none") == ("error_unlabeled", True)


def test_load_yaml_refuses_keys_given_twice_syntax_errors_and_non_mappings(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("graphs:\n  knn10: {kind: knn, k: 10}\n  knn30: {kind: knn, k: 30}\n")
    assert load_yaml(f)["graphs"]["knn30"]["k"] == 30  # the same key in two mappings is fine
    f.write_text("graphs:\n  knn10:\n    k: 10\n    k: 30\n")
    with pytest.raises(ConfigError, match=r"c.yaml: key 'k' is given twice in one mapping \(lines 3 and 4\)"):
        load_yaml(f)
    f.write_text("a: [1,\n")
    with pytest.raises(ConfigError, match="c.yaml is not valid YAML"):
        load_yaml(f)
    f.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_yaml(f)
    f.write_text("# nothing yet\n")
    with pytest.raises(ConfigError, match="is empty"):
        load_yaml(f)


def test_load_yaml_keeps_yaml_merge_keys(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text("base: &b {k: 10, weights: heat}\ngraphs:\n  g:\n    <<: *b\n    k: 30\n")
    assert load_yaml(f)["graphs"]["g"] == {"k": 30, "weights": "heat"}  # an override, not a repeat


# ---------------------------------------------------------------- registries: one list of names each
def _raw_nodes(node, path=()):
    """(path, mapping) of every mapping in the schema as written on disk."""
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from _raw_nodes(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _raw_nodes(v, (*path, i))


def test_schema_file_lists_no_registry_names():
    """The registries are the one list of dataset sources, solvers, graph, Laplacian and protocol
    kinds: the schema on disk names the registry (x-gssl-registry), never its names."""
    from gssl.pipeline.config import REGISTRY_KEYWORD, registries, schema_text

    raw = yaml.safe_load(schema_text())
    names = registries()
    named = {node[REGISTRY_KEYWORD] for _, node in _raw_nodes(raw) if REGISTRY_KEYWORD in node}
    assert named == set(names)  # every registry is used, and the schema names no unknown one
    # the distinctive registries ("max" is both a symmetrization and a norm: left out)
    distinctive = set().union(*(names[r] for r in names if r != "graph_symmetrize"))
    for path, node in _raw_nodes(raw):
        assert not (REGISTRY_KEYWORD in node and "enum" in node), path
        listed = set(map(str, node.get("enum", []))) & distinctive
        assert not listed, f"schema {'.'.join(map(str, path))} lists registry names {sorted(listed)}"
    assert yaml.safe_load(SCHEMA.read_text()) == raw  # workflow/schemas/ is the package's schema


def test_loaded_schema_takes_the_names_from_the_registries():
    from gssl.pipeline.config import load_schema
    from gssl.datasets import REGISTRY
    from gssl.graphs import GRAPH_KINDS, LAPLACIAN_KINDS
    from gssl.solvers.registry import SOLVERS

    props = load_schema()["properties"]
    # and the forms of one's own: source: file; a solver's import path (or a plugin's name)
    assert props["datasets"]["additionalProperties"]["properties"]["source"]["enum"] == [*REGISTRY, "file"]
    solver = props["methods"]["additionalProperties"]["properties"]["solver"]["anyOf"]
    assert solver[0]["enum"] == list(SOLVERS) and "pattern" in solver[1]
    graph = props["graphs"]["additionalProperties"]["properties"]
    assert graph["kind"]["enum"] == list(GRAPH_KINDS) and graph["laplacian"]["enum"] == list(LAPLACIAN_KINDS)


@pytest.mark.parametrize("section, entry, key, value, registry", [
    ("datasets", "digits", "source", "cifar10", "datasets"),
    ("graphs", "knn10", "laplacian", "symmetric", "laplacians"),
    ("graphs", "knn10", "kind", "radius", "graph_kinds"),
    ("methods", "rls", "solver", "lapsvm", "solvers"),
    ("protocols", "lpc1", "kind", "leave_one_out", "protocols"),
])
def test_unknown_registry_name_is_refused_naming_the_known_ones(config, section, entry, key, value, registry):
    from gssl.pipeline.config import registries

    config[section][entry][key] = value
    with pytest.raises(ConfigError) as exc:
        validate_config(config)
    msg = str(exc.value)
    assert f"{section}.{entry}.{key}" in msg and repr(value) in msg
    assert "allowed values: " + ", ".join(registries()[registry]) in msg


def test_a_registered_solver_is_accepted_without_editing_the_schema(config, monkeypatch):
    from gssl.solvers.registry import SOLVERS

    monkeypatch.setitem(SOLVERS, "my_rls", SOLVERS["rls"])
    config["methods"]["rls"]["solver"] = "my_rls"
    assert validate_config(config)["methods"]["rls"]["solver"] == "my_rls"


def test_laplacian_kinds_have_one_home():
    """gssl.graphs.laplacian holds the Laplacian kinds; the graph cache and graph specs read them."""
    import importlib
    import re

    cache = importlib.import_module("gssl.graphs.cache")
    laplacian = importlib.import_module("gssl.graphs.laplacian")  # gssl.graphs.laplacian is also a function
    assert cache.LAPLACIAN_KINDS is laplacian.LAPLACIAN_KINDS
    assert laplacian.LAPLACIAN_KINDS == (*laplacian.LAPLACIANS, "lle")
    copies = [str(p.relative_to(REPO / "src" / "gssl")) for p in (REPO / "src" / "gssl").rglob("*.py")
              if re.search(r'"unnormalized",\s*"normalized",\s*"random_walk"', p.read_text())]
    assert set(copies) == {"graphs/laplacian.py"}


def test_workflow_derives_its_dataset_sets_from_the_registry():
    from gssl.datasets import REGISTRY, generated_datasets, graph_only_datasets

    assert generated_datasets() == {"digits", "g50c", "two_moons", "four_moons"}
    assert graph_only_datasets() == {"20news"}
    common = (REPO / "workflow" / "rules" / "common.smk").read_text()
    assert not [name for name in REGISTRY if f'"{name}"' in common]
    assert "GRAPH_ONLY_SOURCES" not in (REPO / "src" / "gssl" / "pipeline" / "config.py").read_text()
