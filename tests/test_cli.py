"""The `gssl` command line: graph info, dataset and solver listings, config checks."""

import json

import numpy as np
import pytest

from gssl.cli import main
from gssl.graphs import build_graph
from gssl.graphs.cache import save_graph


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


def test_solvers_and_datasets_are_listed(capsys):
    assert main(["solvers"]) == 0
    out = capsys.readouterr().out
    assert "lap_rls" in out and "label_spreading" in out
    assert main(["datasets", "list"]) == 0
    assert "usps" in capsys.readouterr().out


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
