"""The `gssl` command line: graph info, dataset and solver listings, config checks."""

import inspect
import json
import re

import numpy as np
import pytest

from gssl.cli import _doc_parts, main
from gssl.features import save_features
from gssl.graphs import build_graph
from gssl.graphs.cache import save_graph
from gssl.solvers.registry import SOLVERS


def test_graph_info_prints_shape_and_params(tmp_path, capsys):
    X = np.random.default_rng(0).normal(size=(30, 3))
    spec = {"kind": "knn", "k": 4, "weights": "binary"}
    path = tmp_path / "g.h5"
    save_graph(path, build_graph(X, spec), params=spec)
    assert main(["graph", "info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "nodes: 30" in out and '"k":4' in out and "kind:          graph" in out


def test_graph_info_on_a_foreign_file_fails_cleanly(tmp_path, capsys):
    path = tmp_path / "bad.h5"
    path.write_bytes(b"not hdf5")
    assert main(["graph", "info", str(path)]) != 0
    assert "bad.h5" in capsys.readouterr().err


def test_graph_info_on_another_gssl_kind_says_what_it_is(tmp_path, capsys):
    path = tmp_path / "features.h5"
    save_features(path, np.zeros((5, 2)), np.arange(5), {"dataset": "toy"})
    assert main(["graph", "info", str(path)]) == 1
    err = capsys.readouterr().err
    assert "valid gssl 'features' file, not a graph" in err and "--any-kind" in err
    assert "delete" not in err and "rm " not in err and path.exists()
    assert main(["graph", "info", "--any-kind", str(path)]) == 0
    out = capsys.readouterr().out
    assert "kind:          features" in out and "X            float64 (5, 2)" in out


def test_graph_info_puts_a_space_after_every_attribute_name(tmp_path, capsys):
    path = tmp_path / "g.h5"
    X = np.random.default_rng(1).normal(size=(12, 2))
    spec = {"kind": "knn", "k": 3, "weights": "binary", "laplacian": "normalized"}
    save_graph(path, build_graph(X, spec), params=spec)
    assert main(["graph", "info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "laplacian_kind: normalized" in out and "laplacian_power: 1" in out
    assert not re.search(r"^\w+:\S", out, re.M), out  # "name:value" with no space


def test_solvers_list_shows_parameters_and_whole_first_paragraphs(capsys):
    assert main(["solvers"]) == 0
    out = capsys.readouterr().out
    assert "lap_rls" in out and "label_spreading" in out
    flat = " ".join(out.split())
    for name, cls in SOLVERS.items():
        assert f"{name}  ({cls.__module__}.{cls.__name__})" in out
        first = inspect.getdoc(cls).split("\n\n")[0]
        assert " ".join(first.split()) in flat, name  # the whole first paragraph, rewrapped
        for p, default in cls().get_params(deep=False).items():
            assert f"{p}={default!r}" in flat, (name, p)
    assert "gamma_A=1e-06, gamma_I=0.01" in flat
    assert "gssl solvers NAME" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_solvers_named_show_full_description_and_every_parameter(capsys):
    assert main(["solvers", "laprlsc", "mtv"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    for name in ("laprlsc", "mtv"):
        cls = SOLVERS[name]
        paragraphs, described = _doc_parts(cls)  # the numpydoc Parameters section: per parameter
        for par in paragraphs:  # every paragraph, not only the first
            assert " ".join(par.split()) in flat, (name, par[:40])
        for p, text in described.items():
            assert " ".join(text.split()) in flat, (name, p)
        for p, default in cls().get_params(deep=False).items():
            assert f"  {p} = {default!r}\n" in out, (name, p)
    assert "lap_rls " not in out and "cheeger_rls" not in out  # only the named ones


def test_solvers_named_use_numpydoc_parameter_text(monkeypatch, capsys):
    from gssl.solvers.base import SemiSupervisedClassifier

    class Documented(SemiSupervisedClassifier):
        """A toy solver for the listing.

        Parameters
        ----------
        alpha : float
            Step size of the toy
            iteration.
        mode : str
            Either "a" or "b".

        Notes
        -----
        Nothing to note.
        """

        def __init__(self, alpha=0.5, mode="a"):
            self.alpha = alpha
            self.mode = mode

    monkeypatch.setitem(SOLVERS, "documented", Documented)
    assert main(["solvers", "documented"]) == 0
    out = capsys.readouterr().out
    assert "  alpha = 0.5\n      Step size of the toy iteration.\n" in out
    assert "  mode = 'a'\n      Either \"a\" or \"b\".\n" in out
    assert "  A toy solver for the listing.\n" in out
    assert "  Notes\n  -----\n  Nothing to note.\n" in out  # other sections kept as sections
    assert "Parameters\n" not in out  # its text went to the parameter list


def test_unknown_solver_name_is_a_clean_error(capsys):
    assert main(["solvers", "lap_rls", "lap_rsl"]) == 1
    captured = capsys.readouterr()
    assert "unknown solver 'lap_rsl'" in captured.err and "lap_rls" in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_datasets_are_listed(capsys):
    assert main(["datasets", "list"]) == 0
    assert "usps" in capsys.readouterr().out


def test_help_is_plain_text_with_examples(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":func:" not in out
    assert "The gssl command:" in out
    assert "examples:" in out and "  gssl solvers lap_rls" in out and "  gssl graph info " in out


@pytest.mark.realdata
def test_fetch_writes_the_manifest_the_workflow_expects(tmp_path, mirror, capsys):
    assert main(["datasets", "fetch", "g50c_sindhwani", "--raw-dir", str(tmp_path),
                 "--mirror", str(mirror)]) == 0
    manifest = json.loads((tmp_path / "g50c_sindhwani" / "MANIFEST.json").read_text())
    assert manifest["source"] == "g50c_sindhwani" and "g50c.mat" in manifest["files"]


def test_config_check_reports_errors(tmp_path, repo_root, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("graphs: {knn10: {kind: knn, k: 0}}\n")
    assert main(["config", "check", str(repo_root / "config" / "config.yaml"), str(bad)]) != 0
    assert "graphs.knn10.k" in capsys.readouterr().err
    assert main(["config", "check", str(repo_root / "config" / "config.yaml")]) == 0


def test_config_names_lists_the_registries(capsys):
    from gssl.pipeline.config import registries

    assert main(["config", "names"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for registry, names in registries().items():
        assert f"{registry}: {', '.join(names)}" in out
    assert main(["config", "names", "laplacians"]) == 0
    assert capsys.readouterr().out.strip() == "laplacians: unnormalized, normalized, random_walk, lle"
    assert main(["config", "names", "nope"]) == 1
    assert "unknown registry 'nope'; known: datasets" in capsys.readouterr().err
