"""Planning reads a data file once per content (issue 48): what the config check needs of a
``source: file`` dataset is kept under the results folder and used again by the next process
while the file keeps its size and modification time."""

import json
import os

import numpy as np
import pytest

from gssl.datasets import file_facts as ff
from gssl.datasets.files import FileSource
from gssl.errors import ConfigError
from gssl.pipeline.config import validate_config


def _write(path, labels):
    rows = [f"{i},{i % 3},{lab}" for i, lab in enumerate(labels)]
    path.write_text("x1,x2,label\n" + "\n".join(rows) + "\n")
    return path


@pytest.fixture
def fresh_process(monkeypatch):
    """As if in a new process: nothing remembered in memory."""
    monkeypatch.setattr(ff, "_PROCESS", {})


def _no_read(monkeypatch):
    def refuse(self, name=""):
        raise AssertionError(f"{self.path} was read again")
    monkeypatch.setattr(FileSource, "read", refuse)


def test_the_facts_are_stored_and_used_again_while_the_file_is_unchanged(tmp_path, monkeypatch, fresh_process):
    path = _write(tmp_path / "d.csv", ["a", "b", "", "b", "a", "b"])
    src = FileSource.from_entry({"path": str(path), "label": "label"})
    first = ff.file_facts(src, "d", tmp_path / "planning")
    assert first.y.tolist() == [0, 1, -1, 1, 0, 1] and first.classes.tolist() == ["a", "b"]
    assert first.n_features == 2 and not first.sparse
    assert first.sha256 == {str(path): __import__("gssl").store.hashing.file_sha256(path)}
    assert len(list((tmp_path / "planning").glob("*.npz"))) == 1

    monkeypatch.setattr(ff, "_PROCESS", {})  # the next process: from the stored file, not a read
    with monkeypatch.context() as m:
        _no_read(m)
        again = ff.file_facts(src, "d", tmp_path / "planning")
    assert again.y.tolist() == first.y.tolist() and again.classes.tolist() == ["a", "b"]
    assert again.sha256 == first.sha256 and again.n_features == 2

    # an edit (a new modification time) is read again, and replaces the stored facts
    _write(path, ["a", "b", "c", "b", "a", "c"])
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    monkeypatch.setattr(ff, "_PROCESS", {})
    edited = ff.file_facts(src, "d", tmp_path / "planning")
    assert edited.classes.tolist() == ["a", "b", "c"] and edited.sha256 != first.sha256
    assert len(list((tmp_path / "planning").glob("*.npz"))) == 1


def test_a_damaged_store_is_read_past_and_another_entry_has_its_own(tmp_path, fresh_process):
    path = _write(tmp_path / "d.csv", ["a", "b"] * 4)
    planning = tmp_path / "planning"
    ff.file_facts(FileSource.from_entry({"path": str(path), "label": "label"}), "d", planning)
    (store,) = planning.glob("*.npz")
    store.write_bytes(b"not an npz")
    ff._PROCESS.clear()
    facts = ff.file_facts(FileSource.from_entry({"path": str(path), "label": "label"}), "d", planning)
    assert facts.classes.tolist() == ["a", "b"]
    # the same file read otherwise (its first column as the label) is another entry
    other = ff.file_facts(FileSource.from_entry({"path": str(path), "label": "x2", "features": ["x1"]}), "d",
                          planning)
    assert other.classes.tolist() == ["0", "1", "2"] and len(list(planning.glob("*.npz"))) == 2
    assert ff.file_facts(FileSource.from_entry({"path": str(path), "label": "label"}), "d") is facts


def _config(path, results, protocol=None):
    return {"results": str(results), "results_outside_workdir": True,
            "datasets": {"mine": {"source": "file", "path": str(path), "label": "label"}},
            "preprocessing": {"raw": []}, "graphs": {"knn": {"kind": "knn", "k": 3}},
            "methods": {"poisson": {"solver": "poisson"}},
            "protocols": {"p": protocol or {"kind": "labels_per_class", "n": 1, "repeats": 2}},
            "experiments": {"e": {"datasets": ["mine"], "preprocessing": ["raw"], "graphs": ["knn"],
                                  "methods": ["poisson"], "protocols": ["p"]}}}

def _with_spreading(cfg):
    """The config with label_spreading beside poisson (its cell parameter is filled by the check)."""
    cfg["methods"]["spreading"] = {"solver": "label_spreading"}
    cfg["experiments"]["e"]["methods"].append("spreading")
    return cfg



def test_the_workflow_s_config_check_reads_an_unchanged_file_once_and_still_refuses_what_it_would(
        tmp_path, monkeypatch, fresh_process):
    """validate_config(planning_cache=True), as workflow/rules/common.smk calls it: the second
    check (another process) reads nothing, and finds the same problems from the stored facts."""
    path = _write(tmp_path / "d.csv", ["a", "b"] * 5)
    results = tmp_path / "results"
    validate_config(_config(path, results), planning_cache=True)
    assert len(list((results / "planning").glob("*.npz"))) == 1
    ff._PROCESS.clear()
    _no_read(monkeypatch)
    validate_config(_config(path, results), planning_cache=True)
    ff._PROCESS.clear()
    with pytest.raises(ConfigError, match="class 0 has 5 points but labels_per_class n=5"):
        validate_config(_config(path, results, {"kind": "labels_per_class", "n": 5, "repeats": 2}),
                        planning_cache=True)
    ff._PROCESS.clear()
    cfg = _config(path, results)
    cfg["graphs"]["knn"]["k"] = 10
    with pytest.raises(ConfigError, match="k=10 neighbours requested but the data has only 10 points"):
        validate_config(cfg, planning_cache=True)


def test_without_the_planning_cache_nothing_is_written(tmp_path, fresh_process):
    path = _write(tmp_path / "d.csv", ["a", "b"] * 5)
    validate_config(_config(path, tmp_path / "results"))
    assert not (tmp_path / "results").exists()
    assert np.array_equal(next(iter(ff._PROCESS.values())).y, [0, 1] * 5)


def test_a_protocol_s_draw_verdict_is_kept_while_the_labels_are_the_same(tmp_path, monkeypatch):
    """The config check draws every split of each protocol on a data file's labels (15 ms a split
    on 100,000 labels): the next process takes the verdict from the planning folder, refusals
    with their message and short classes; other labels are drawn again."""
    from gssl import splits
    from gssl.errors import SplitError
    from gssl.pipeline.split_check import check_draws

    y = np.array([0] * 5 + [1] * 5 + [2] * 2)
    ok, short = ({"kind": "labels_per_class", "n": n, "repeats": 3} for n in (1, 2))
    check_draws(y, ok, "d", "p", tmp_path)
    with pytest.raises(SplitError) as first:
        check_draws(y, short, "d", "q", tmp_path)
    assert len(list(tmp_path.glob("draws-*.json"))) == 2

    def refuse(*args, **kwargs):
        raise AssertionError("drawn again")

    with monkeypatch.context() as m:
        m.setattr(splits, "make_splits", refuse)
        check_draws(y, ok, "d", "p", tmp_path)
        with pytest.raises(SplitError) as again:
            check_draws(y, short, "d", "q", tmp_path)
    assert str(again.value) == str(first.value) and again.value.short_classes.tolist() == [2]
    check_draws(np.append(y, 2), short, "d", "q", tmp_path)  # class 2 has 3 points now: it draws
    assert len(list(tmp_path.glob("draws-*.json"))) == 3


def test_a_passed_check_is_kept_and_replayed_until_the_config_or_an_input_changes(tmp_path, monkeypatch,
                                                                                  fresh_process):
    """The workflow's next plan of the same config on unchanged inputs takes the checked config
    (defaults and the cell's parameters filled in) from the planning folder and runs no check; a
    changed config, data file or plugin source is checked again; a refusal is never kept."""
    import copy

    from gssl.pipeline import config as config_module

    path = _write(tmp_path / "d.csv", ["a", "b"] * 5)
    results = tmp_path / "results"
    checked = validate_config(_with_spreading(_config(path, results)), planning_cache=True)
    assert len(list((results / "planning").glob("config-*.json"))) == 1
    assert checked["methods"]["spreading"]["params"] == {"graph": "given"}  # the cell's, filled in

    def no_check(*args, **kwargs):
        raise AssertionError("checked again")

    with monkeypatch.context() as m:
        m.setattr(config_module, "check_schema", no_check)
        replayed = validate_config(_with_spreading(_config(path, results)), planning_cache=True)
        # in the same order too: a job's params print the entries as they are
        assert json.dumps(replayed) == json.dumps(checked)
        changed = _with_spreading(_config(path, results))
        changed["methods"]["poisson"]["params"] = {"tol": 1e-3}
        with pytest.raises(AssertionError, match="checked again"):
            validate_config(changed, planning_cache=True)
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
        with pytest.raises(AssertionError, match="checked again"):
            validate_config(_with_spreading(_config(path, results)), planning_cache=True)
    refused = _config(path, results, {"kind": "labels_per_class", "n": 9, "repeats": 2})
    for _ in range(2):
        with pytest.raises(ConfigError, match="labels_per_class n=9"):
            validate_config(copy.deepcopy(refused), planning_cache=True)
    assert len(list((results / "planning").glob("config-*.json"))) == 1  # the refusal is not kept


def test_a_plugin_s_edit_is_checked_again(tmp_path, monkeypatch, fresh_process):
    """The key covers the sources of a solver named by import path, with the helper it imports."""
    from gssl.pipeline.check_verdict import verdict_key

    (tmp_path / "plug.py").write_text("from plug_helper import SCALE\nclass M: pass\n")
    (tmp_path / "plug_helper.py").write_text("SCALE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = _config(_write(tmp_path / "d.csv", ["a", "b"] * 5), tmp_path / "results")
    cfg["methods"]["poisson"]["solver"] = "plug:M"
    before = verdict_key(cfg)
    assert before is not None and verdict_key(cfg) == before
    (tmp_path / "plug_helper.py").write_text("SCALE = 2\n")
    assert verdict_key(cfg) != before


def test_a_plan_of_a_checked_config_imports_neither_scikit_learn_nor_a_solver(tmp_path, fresh_process):
    """What makes a dry run fast (issue 48: 1.6 s where a bare Snakefile takes 1.1): once the
    config passed, the next process's check, each solve job's code hash and each table's
    headline import no solver module, scikit-learn or SciPy's statistics."""
    import subprocess
    import sys

    path = _write(tmp_path / "d.csv", ["a", "b"] * 5)
    cfg = _config(path, tmp_path / "results")
    cfg["methods"]["km"] = {"solver": "kmeans"}
    cfg["experiments"]["e"]["methods"].append("km")
    code = (f"import sys; from gssl.pipeline.config import validate_config; "
            f"from gssl.pipeline.plan import expected_headline; "
            f"from gssl.solvers.registry import solver_modules, solver_provenance; c = validate_config({cfg!r}, "
            f"planning_cache=True); solver_modules('poisson'); solver_provenance('kmeans'); "
            f"print(expected_headline(c, 'e')[0], sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn' "
            f"or m == 'scipy.stats' or m.startswith('gssl.solvers.') and m != 'gssl.solvers.registry'))")
    run = [sys.executable, "-c", code]
    first = subprocess.run(run, capture_output=True, text=True, check=True, cwd=tmp_path).stdout.split(" ", 1)
    second = subprocess.run(run, capture_output=True, text=True, check=True, cwd=tmp_path).stdout.split(" ", 1)
    assert first[0] == second[0] == "error_unlabeled"  # not all clusterers: the classifiers' headline
    assert "sklearn" in first[1] and eval(second[1]) == [], second


def test_a_plugin_that_cannot_be_imported_is_still_refused_by_name(tmp_path, fresh_process):
    """No key can be made for a plugin whose module is missing or broken: the check runs and
    says what is wrong, as without the kept check."""
    (tmp_path / "broken_plug.py").write_text("class M(:\n")
    cfg = _config(_write(tmp_path / "d.csv", ["a", "b"] * 5), tmp_path / "results")
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        for solver, match in (("no_such_module_x:M", "cannot be imported"), ("broken_plug:M", "SyntaxError")):
            cfg["methods"]["poisson"]["solver"] = solver
            with pytest.raises(ConfigError, match=match):
                validate_config(json.loads(json.dumps(cfg)), planning_cache=True)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("broken_plug", None)


def test_the_key_sees_the_config_s_order(tmp_path):
    """The replayed config is the stored one, order included (a grid's points follow its keys):
    a config in another order is another key."""
    from gssl.pipeline.check_verdict import verdict_key

    cfg = _with_spreading(_config(_write(tmp_path / "d.csv", ["a", "b"] * 5), tmp_path / "results"))
    reordered = json.loads(json.dumps(cfg))
    reordered["methods"] = dict(reversed(list(cfg["methods"].items())))
    assert None is not verdict_key(cfg) != verdict_key(reordered)
