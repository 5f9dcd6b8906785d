"""Fault injection (issue #21), bad config inputs: each is refused before any job, with the
message that names it, by ``gssl config check`` and by Snakemake's parse, which runs the same
validation (FIGURE_ROWS: conftest.py).
"""

from __future__ import annotations

import json

import pytest
import yaml
from workflow_helpers import REPO, SMALL, make_workspace, record, smk

from gssl.cli import main

pytestmark = [pytest.mark.e2e, pytest.mark.faults, pytest.mark.slow]


# ----------------------------------------------------------------------------- bad inputs
def _with(section_edit):
    cfg = json.loads(json.dumps(SMALL))
    section_edit(cfg)
    return cfg


BAD_INPUTS = {
    "a key given twice": ("graphs:\n  knn8:\n    kind: knn\n    k: 10\n    k: 30\n",
                          "key 'k' is given twice in one mapping (lines 4 and 5)"),
    # Snakemake parses these itself, before the workflow's own checks: its messages, not ours
    "YAML syntax error": ("graphs: {knn8: [\n", ("line 2", "not valid JSON or YAML")),
    "a list at the top level": ("- graphs\n- methods\n", ("must be a mapping", "keys at top level")),
    "an empty file": ("", ("is empty", "keys at top level")),
    "an unknown protocol key": (yaml.safe_dump(_with(lambda c: c["protocols"]["lpc1"].update(shots=2))),
                                "unknown keys ['shots']"),
    "label_fraction fraction 1.0": (yaml.safe_dump(_with(lambda c: c["protocols"].update(
        lpc1={"kind": "label_fraction", "fraction": 1.0, "repeats": 2}))), "protocols.lpc1.fraction"),
    "noise: .nan": ("datasets:\n  moons:\n    source: two_moons\n    params: {noise: .nan}\n",
                    "datasets.moons.params.noise' is NaN"),
    "results: naming a file": ("results: afile\n", "'afile' is a file"),
    "a 1e-06 read as text": ("methods:\n  rls:\n    solver: rls\n    params: {gamma_A: 1e-06}\n",
                             "write it with a dot"),
    # known before any job (issue #33): each with the message its job would give (test_config.py
    # compares them with the jobs' own)
    "k >= n": ("graphs:\n  knn8: {kind: knn, k: 160}\n",
               "k=160 neighbours requested but the data has only 160 points; the maximum allowed k is 159"),
    "a class name that does not exist": ("datasets:\n  moons: {source: two_moons, classes: ['0', 'two']}\n",
                                         "dataset 'two_moons' has no class named 'two'"),
    "class indices out of range": ("datasets:\n  moons: {source: two_moons, class_indices: [0, 2]}\n",
                                   "dataset 'two_moons': class 2 is neither a label index in 0..1"),
    "overlapping groups": ("datasets:\n  moons: {source: two_moons, groups: [['0', '1'], ['1']]}\n",
                           "select: groups must be non-empty and disjoint, got [[0, 1], [1]]"),
    "pca with more components than features": (
        "preprocessing:\n  std: [{pca: {n_components: 20}}]\n",
        "pca n_components=20 exceeds the maximum 10 for features of shape (160, 10)"),
    "random_projection with more components than features": (
        "preprocessing:\n  std: [{random_projection: {n_components: 50}}]\n",
        "random_projection n_components=50 exceeds the 10 features it projects"),
    "n_samples: 0": ("datasets:\n  moons: {source: two_moons, params: {n_samples: 0}}\n",
                     "two_moons: n_samples must be an integer >= 2, got 0"),
    "n_samples: many": ("datasets:\n  moons: {source: two_moons, params: {n_samples: many}}\n",
                        "two_moons: n_samples must be an integer >= 2, got 'many'"),
    "a weights name that does not exist": ("graphs:\n  knn8: {weights: gaussian}\n",
                                           "'graphs.knn8.weights': 'gaussian' is not allowed "
                                           "(allowed values: binary, heat, self_tuning, gaussian_kth)"),
    "an unknown dataset id": ("experiments:\n  e2e: {datasets: [moons, nope]}\n",
                              "experiment 'e2e' names unknown datasets id 'nope' (defined: moons)"),
    "an unknown method id": ("experiments:\n  e2e: {methods: [rls, nope]}\n",
                             "experiment 'e2e' names unknown methods id 'nope' (defined: laprls, rls)"),
    "an unknown graph id": ("experiments:\n  e2e: {graphs: [knn8, nope]}\n",
                            "experiment 'e2e' names unknown graphs id 'nope' (defined: knn8)"),
    "a misspelt solver parameter": ("methods:\n  rls: {params: {gama_A: 1.0}}\n",
                                    "solver 'rls': unknown parameters ['gama_A']; "
                                    "allowed: ['gamma_A', 'kernel']"),
    "noise: -1": ("datasets:\n  moons: {source: two_moons, params: {noise: -1}}\n",
                  "two_moons: noise must be a number >= 0, got -1"),
    # issue 51: configs that cannot run code or write outside the results
    "results: '' (empty)": ("results: ''\n", "results: '' is empty"),
    "results: / (the filesystem root)": ("results: /\n", "results: '/' is the filesystem root"),
    "results: . (the working directory)": ("results: .\n", "results: '.' is the working directory itself"),
    "results: outside the working directory": ("results: ../elsewhere\n",
                                               "results: '../elsewhere' is outside the working directory"),
    "YAML templating (YTE)": ("__use_yte__: true\nseed: 3\n", "__use_yte__ turns on YAML templating (YTE)"),
    "a YAML alias bomb (9^9 nodes)": ("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi")),
        "its aliases expand to"),
    # issue 48: a generator's parameter types, its size against memory, its classes against the protocols
    "random_state: zero": ("datasets:\n  moons: {source: two_moons, params: {random_state: zero}}\n",
                           "two_moons: random_state must be an integer >= 0 (a seed, e.g. random_state: 0), "
                           "got 'zero'"),
    "n_samples: 1000000000000": ("datasets:\n  moons: {source: two_moons, params: {n_samples: 1000000000000}}\n",
                                 "two_moons: n_samples=1000000000000 x n_features=10 needs about 320 TB of "
                                 "memory to generate (float64), more than the "),
    "a generated class smaller than a protocol needs": (
        "datasets:\n  moons: {source: two_moons, params: {n_samples: 7}}\ngraphs:\n  knn8: {k: 3}\n",
        "protocol 'lpc3' on dataset 'moons': class 1 has 3 points but labels_per_class n=3 (+1 unlabeled) "
        "needs at least 4 per class (1 classes are short); lower the counts or drop such classes "
        "(gssl.datasets.select); or raise datasets.moons.params.n_samples (now 7: 3 to 4 points per class)"),
}


# Snakemake's parse (workflow/rules/common.smk) and `gssl config check` call the same
# validate_config, so every case goes through the check in this process, and through a Snakemake
# dry run (a process of its own, 4 s) only where Snakemake's path differs: the files Snakemake
# parses itself, the key given twice (common.smk reads the files again), and one case of each kind
# of check validate_config makes (the schema, a data-dependent check, the results folder)
THROUGH_SNAKEMAKE = ("a key given twice", "YAML syntax error", "a list at the top level", "an empty file",
                     "a weights name that does not exist", "an unknown method id", "results: naming a file",
                     "k >= n", "results: '' (empty)", "YAML templating (YTE)", "n_samples: 1000000000000")


def _bad_workspace(tmp_path, case):
    ws = make_workspace(tmp_path / "ws", SMALL)
    (ws / "afile").write_text("not a folder")
    (ws / "bad.yaml").write_text(BAD_INPUTS[case][0])
    return ws


def _messages(case):
    expected = BAD_INPUTS[case][1]
    return expected if isinstance(expected, tuple) else (expected, expected)


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_each_bad_input_is_refused_by_gssl_config_check_naming_it(tmp_path, case, monkeypatch, capsys):
    ws = _bad_workspace(tmp_path, case)
    monkeypatch.chdir(ws)  # `gssl config check` in this process: an exception would fail the test
    assert main(["config", "check", "config/config.yaml", "bad.yaml"]) != 0, \
        f"accepted by gssl config check: {case}"
    out = capsys.readouterr()
    assert _messages(case)[0] in out.out + out.err, (case, (out.out + out.err)[-2000:])
    assert "Traceback" not in out.out + out.err
    assert not (ws / "results").exists()
    by = "both" if case in THROUGH_SNAKEMAKE else "gssl config check (Snakemake's parse runs the same check)"
    record(f"bad input: {case}", inputs_silently_wrong=0, note=f"refused by {by}, before any job")


@pytest.mark.parametrize("case", THROUGH_SNAKEMAKE)
def test_bad_inputs_are_refused_by_snakemake_before_any_job(tmp_path, case):
    ws = _bad_workspace(tmp_path, case)
    proc = smk(ws, "-n", "--configfile", "bad.yaml", check=False)
    assert proc.returncode != 0, f"accepted by snakemake: {case}"
    assert _messages(case)[1] in proc.stdout + proc.stderr, (case, (proc.stdout + proc.stderr)[-2000:])
    assert "Traceback" not in proc.stderr
    assert not (ws / "results").exists()


def test_snakemake_and_gssl_config_check_run_the_same_validation():
    """What lets the cases above leave most inputs to `gssl config check`."""
    import inspect

    from gssl.cli import _config_check

    common = (REPO / "workflow" / "rules" / "common.smk").read_text()
    assert "validate_config(config, planning_cache=True)" in common  # the same check, its data facts kept
    assert "validate_config(" in inspect.getsource(_config_check)
