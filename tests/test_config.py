import copy
from pathlib import Path

import numpy as np
import pytest
import yaml

from gssl.pipeline.config import load_yaml, validate_config
from gssl.store.h5io import read_h5
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
    from gssl.pipeline.config_files import deep_update as _deep_update
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

    cfg = {"datasets": {"d": {"source": "digits"}},
           "methods": {"m": {"solver": "mtv"}, "r": {"solver": "rls"}},
           "protocols": {"u": {"kind": "unsupervised"}, "cv": {"kind": "melacci_cv"},
                         "l": {"kind": "labels_per_class", "n": 1}},
           "experiments": {"clu": {"datasets": ["d"], "methods": ["m"], "protocols": ["u"]},
                           "cv": {"datasets": ["d"], "methods": ["r"], "protocols": ["cv"]},
                           "lab": {"datasets": ["d"], "methods": ["r", "m"], "protocols": ["l"]}}}
    assert expected_headline(cfg, "clu") == ("purity", False)
    assert expected_headline(cfg, "cv") == ("error_test", True)
    assert expected_headline(cfg, "lab") == ("error_unlabeled", True)
    # a fixed test part, or the rest of each class as test points: the test error leads
    cfg["protocols"].update(tf={"kind": "per_class_counts", "labeled": 10, "unlabeled": 0, "test": 0,
                                "test_from": 7291},
                            rest={"kind": "per_class_counts", "labeled": 2, "unlabeled": 18, "test": None},
                            none={"kind": "per_class_counts", "labeled": 2, "unlabeled": 18})
    cfg["experiments"].update(tf={"datasets": ["d"], "methods": ["r"], "protocols": ["tf", "rest"]},
                              none={"datasets": ["d"], "methods": ["r"], "protocols": ["none"]})
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


# ----------------------------------------------------------------------------- known before any job (issue #33)
SMALL = yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text())  # 160 moons in 10-D
MOONS = SMALL["datasets"]["moons"]


def _small(edit):
    cfg = copy.deepcopy(SMALL)
    edit(cfg)
    return cfg


def _job_error(cfg, tmp_path) -> str:
    """What the dataset, features and graph jobs of the config's one cell raise."""
    from gssl.pipeline.stages import build_dataset, build_features, build_graph

    try:
        build_dataset("moons", cfg["datasets"]["moons"], None, tmp_path / "data.h5")
        build_features(tmp_path / "data.h5", cfg["preprocessing"]["std"], tmp_path / "features.h5")
        build_graph(tmp_path / "features.h5", cfg["graphs"]["knn8"], tmp_path / "graph.h5")
    except Exception as exc:  # noqa: BLE001 - the message is what is compared
        return str(exc)
    raise AssertionError("the jobs accepted it")


KNOWN_BEFORE_ANY_JOB = {
    "k >= n": lambda c: c["graphs"]["knn8"].update(k=160),
    "k_st >= n": lambda c: c["graphs"].update(knn8={"kind": "knn", "k": 8, "weights": "self_tuning", "k_st": 170}),
    "a class name that does not exist": lambda c: c["datasets"]["moons"].update(classes=["0", "two"]),
    "class indices out of range": lambda c: c["datasets"]["moons"].update(class_indices=[0, 2]),
    "overlapping groups": lambda c: c["datasets"]["moons"].update(groups=[["0", "1"], ["1"]]),
    "group indices out of range": lambda c: c["datasets"]["moons"].update(group_indices=[[0], [1, 7]]),
    "pca: more components than features": lambda c: c["preprocessing"].update(std=[{"pca": {"n_components": 20}}]),
    "random_projection: more components than features":
        lambda c: c["preprocessing"].update(std=["standardize", {"random_projection": {"n_components": 11}}]),
    "pca after random_projection": lambda c: c["preprocessing"].update(
        std=[{"random_projection": {"n_components": 6}}, {"pca": {"n_components": 7}}]),
    "n_samples: 0": lambda c: c["datasets"]["moons"]["params"].update(n_samples=0),
    "n_samples: many": lambda c: c["datasets"]["moons"]["params"].update(n_samples="many"),
    "n_samples: 1.5": lambda c: c["datasets"]["moons"]["params"].update(n_samples=1.5),
    "noise: -1": lambda c: c["datasets"]["moons"]["params"].update(noise=-1),
    "g50c n_samples: 0": lambda c: c["datasets"].update(moons={"source": "g50c", "params": {"n_samples": 0}}),
    "g50c bayes_error: 0.5": lambda c: c["datasets"].update(moons={"source": "g50c", "params": {"bayes_error": 0.5}}),
    "k >= n after a class view": lambda c: (c["datasets"].update(moons={"source": "four_moons", "params": {
        "n_samples": 40, "n_features": 10, "random_state": 0}, "classes": ["1", "3"]}), c["graphs"]["knn8"].update(k=20)),
    "params for a dataset read from files": lambda c: c["datasets"].update(moons={"source": "usps", "params": {"n": 1}}),
}


@pytest.mark.parametrize("case", list(KNOWN_BEFORE_ANY_JOB))
def test_what_a_job_would_refuse_is_refused_up_front_with_the_jobs_message(case, tmp_path):
    cfg = _small(KNOWN_BEFORE_ANY_JOB[case])
    with pytest.raises(ConfigError) as exc:
        validate_config(copy.deepcopy(cfg))
    if case == "params for a dataset read from files":  # its job needs the download: the message is load()'s
        assert "dataset 'usps' is read from files and takes no params, got {'n': 1}" in str(exc.value)
        return
    job = _job_error(cfg, tmp_path)
    assert job in str(exc.value), (str(exc.value), job)
    where = "datasets.moons: " if "graph" not in str(exc.value) and "n_components" not in job else "experiment 'e2e': "
    assert where in str(exc.value)


def test_the_checks_up_front_accept_what_the_jobs_accept(tmp_path):
    """At the limits (k = n - 1, as many components as features, a view that keeps k + 1 points)
    both the check and the jobs accept."""
    edits = [lambda c: c["graphs"]["knn8"].update(k=159),
             lambda c: c["preprocessing"].update(std=[{"pca": {"n_components": 10}}]),
             lambda c: c["preprocessing"].update(std=[{"random_projection": {"n_components": 10}}]),
             lambda c: (c["datasets"].update(moons={"source": "four_moons", "params": {
                 "n_samples": 42, "n_features": 10, "random_state": 0}, "class_indices": [1, 3]}),
                        c["graphs"]["knn8"].update(k=19))]  # classes 1 and 3 of 42: 11 + 10 points
    for i, edit in enumerate(edits):
        cfg = _small(edit)
        validate_config(copy.deepcopy(cfg))
        from gssl.pipeline.stages import build_dataset, build_features, build_graph

        folder = tmp_path / str(i)
        build_dataset("moons", cfg["datasets"]["moons"], None, folder / "data.h5")
        build_features(folder / "data.h5", cfg["preprocessing"]["std"], folder / "features.h5")
        build_graph(folder / "features.h5", cfg["graphs"]["knn8"], folder / "graph.h5")
        (data, _), (graph, attrs) = read_h5(folder / "data.h5", "dataset"), read_h5(folder / "graph.h5", "graph")
        W, k = graph["W"].tocsr(), cfg["graphs"]["knn8"]["k"]
        assert attrs["params"]["k"] == k and W.shape == (data["y"].size,) * 2  # every point, as configured
        assert abs(W - W.T).max() == 0 and np.diff(W.indptr).min() >= k  # symmetrized k-NN


def test_a_view_of_downloaded_data_is_checked_by_class_names_and_the_parents_size():
    """Class names of the registry's datasets are known without their files; a view's size is not
    (only its parent's): k >= the parent's size is refused, a smaller k is left to the job."""
    base = _small(lambda c: c["datasets"].update(moons={"source": "coil20", "classes": ["1", "21"]}))
    with pytest.raises(ConfigError, match=r"dataset 'coil20' has no class named '21'; its classes: \['1', "):
        validate_config(copy.deepcopy(base))
    base["datasets"]["moons"]["classes"] = ["1", "20"]
    base["preprocessing"]["std"] = []
    validate_config(copy.deepcopy(base))  # 144 points, unknown before the job: k = 8 passes
    base["graphs"]["knn8"]["k"] = 1440
    with pytest.raises(ConfigError, match="k=1440 neighbours requested but the data has at most 1440 points"):
        validate_config(copy.deepcopy(base))


@pytest.mark.realdata
def test_the_class_names_known_up_front_are_those_the_parsers_give(mirror):
    """For every registered dataset: the names the config check knows equal the loaded ones."""
    from gssl.datasets import REGISTRY, load
    from gssl.datasets.registry import DatasetSpec

    _known_classes = DatasetSpec.class_names

    for name, spec in REGISTRY.items():
        if spec.kind == "generator":
            ds = load(name, params={"n_samples": 8})
        else:
            ds = load(name, mirror=mirror)
        assert _known_classes(spec) == [str(c) for c in ds.classes], name
        assert ds.n_samples == spec.n_samples or spec.kind == "generator", name


# -- issue 48: in a workflow cell every method uses the cell's graph -----------------------------
def test_label_spreading_uses_the_cell_s_graph_in_a_workflow_unless_its_entry_says_features():
    cfg = copy.deepcopy(SMALL)
    cfg["methods"] = {"ls": {"solver": "label_spreading"},
                      "ls_own": {"solver": "label_spreading", "params": {"graph": "features", "n_neighbors": 7}},
                      "ls_grid": {"solver": "label_spreading", "grid": {"alpha": [0.1, 0.5]}}}
    cfg["experiments"]["e2e"]["methods"] = ["ls", "ls_own"]
    out = validate_config(cfg)
    assert out["methods"]["ls"]["params"] == {"graph": "given"}
    assert out["methods"]["ls_own"]["params"] == {"graph": "features", "n_neighbors": 7}
    assert out["methods"]["ls_grid"]["params"] == {"graph": "given"}
    assert validate_config(out)["methods"]["ls"]["params"] == {"graph": "given"}  # checked twice: the same
    for entry in ({"solver": "label_spreading", "params": {"n_neighbors": 10, "alpha": 0.2}},
                  {"solver": "label_spreading", "grid": {"n_neighbors": [5, 10]}}):
        bad = copy.deepcopy(SMALL)
        bad["methods"]["ls"] = entry
        with pytest.raises(ConfigError, match=r"method 'ls': label_spreading in a workflow cell uses the "
                                              r"cell's graph \(graph: given, the default there\), which "
                                              r"leaves n_neighbors unused; give graph: features in its params"):
            validate_config(bad)
    from gssl.solvers.registry import make_solver

    assert make_solver("label_spreading").graph == "features"  # the Python API's default is unchanged


def test_a_workflow_cell_spreads_labels_on_its_own_graph(tmp_path):
    """Through the stage functions: a graph-only cell (no features to build another graph from)
    fits label_spreading as validated, and the result is the given graph's."""
    import scipy.sparse as sp

    from gssl.graphs import build_graph
    from gssl.graphs.base import Graph
    from gssl.pipeline.stages import fit_split
    from gssl.splits import make_splits

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.3, (15, 2)), rng.normal(3, 0.3, (15, 2))])
    y = np.repeat([0, 1], 15)
    cfg = copy.deepcopy(SMALL)
    cfg["methods"] = {"ls": {"solver": "label_spreading"}}
    cfg["experiments"]["e2e"]["methods"] = ["ls"]
    method = validate_config(cfg)["methods"]["ls"]
    cell = type("Cell", (), {})()
    cell.X, cell.y, cell.n_classes, cell.splits_path, cell.protocol = None, y, 2, "-", None
    cell.graph = Graph(W=sp.csr_matrix(build_graph(X, {"kind": "knn", "k": 5}).W), checked=True)  # no features
    cell.roles = make_splits(y, {"kind": "labels_per_class", "n": 1, "repeats": 1}, "d", "p")
    out = fit_split(cell, 0, method)
    assert out["metrics"]["error_unlabeled"] == 0.0
