"""Your data and your method: ``source: file`` datasets in every format, points without a label,
solver and dataset plugins (import paths and entry points), ``gssl solvers check``, ``gssl
datasets inspect``, and the worked example of docs/examples/my_method through the workflow."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import yaml

from gssl.cli import main as gssl_main
from gssl.datasets import read_file_dataset
from gssl.errors import ConfigError, DatasetError, SolverError
from gssl.pipeline.config import validate_config
from gssl.splits import LABELED, TEST, UNLABELED, UNSCORED, make_splits

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "docs" / "examples" / "my_method"

X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.0], [3.0, 1.5], [4.0, 0.0], [5.0, 2.5]])
LABELS = ["b", "a", "b", "a", "b", "a"]  # names: classes sorted "a" < "b"
Y = np.array([1, 0, 1, 0, 1, 0])


def _csv(path: Path, rows, header="x1,x2,label") -> Path:
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


def _rows(labels=LABELS, sep=","):
    return [sep.join([f"{a:g}", f"{b:g}", lab]) for (a, b), lab in zip(X, labels)]


# -- formats -----------------------------------------------------------------------------------
def test_csv_and_tsv_with_a_named_or_indexed_label_column(tmp_path):
    for fmt, sep, label in (("csv", ",", "label"), ("tsv", "\t", 2)):
        path = _csv(tmp_path / f"d.{fmt}", _rows(sep=sep), header=sep.join(["x1", "x2", "label"]))
        ds = read_file_dataset({"path": str(path), "label": label})
        np.testing.assert_array_equal(ds.X, X)
        np.testing.assert_array_equal(ds.y, Y)
        assert ds.classes.tolist() == ["a", "b"] and ds.W is None
        assert ds.meta["files"] == {str(path): __import__("gssl").store.hashing.file_sha256(path)}


def test_csv_features_select_columns_and_numbers_as_labels_keep_numeric_order(tmp_path):
    path = _csv(tmp_path / "d.csv", [f"{a:g},{b:g},{c}" for (a, b), c in zip(X, [2, 10, 2, 10, 2, 10])])
    ds = read_file_dataset({"path": str(path), "label": "label", "features": ["x2"]})
    np.testing.assert_array_equal(ds.X, X[:, [1]])
    assert ds.classes.tolist() == ["2", "10"]  # numbers sorted as numbers, not as text
    np.testing.assert_array_equal(ds.y, [0, 1, 0, 1, 0, 1])


def test_npz_h5_and_mat_v5_with_keys(tmp_path):
    np.savez(tmp_path / "d.npz", fea=X, gnd=np.array(LABELS))
    with h5py.File(tmp_path / "d.h5", "w") as fh:
        fh["X"], fh["y"] = X, Y + 1
    scipy.io.savemat(tmp_path / "d.mat", {"X": X, "y": (Y + 1)[:, None]})
    ds = read_file_dataset({"path": str(tmp_path / "d.npz"), "keys": {"X": "fea", "y": "gnd"}})
    np.testing.assert_array_equal(ds.X, X), np.testing.assert_array_equal(ds.y, Y)
    for name in ("d.h5", "d.mat"):
        ds = read_file_dataset({"path": str(tmp_path / name)})
        np.testing.assert_array_equal(ds.X, X)
        np.testing.assert_array_equal(ds.y, Y)
        assert ds.classes.tolist() == ["1", "2"]


def test_mat_v73_is_read_as_matlab_lays_it_out(tmp_path):
    """MATLAB v7.3 is HDF5 in column-major order (h5py sees each matrix transposed) and stores
    a sparse matrix as a group of data / ir / jc (CSC)."""
    W = sp.random(6, 6, density=0.5, random_state=0, format="csr")
    W = (W + W.T).tocsc()
    W.setdiag(0), W.eliminate_zeros()
    with h5py.File(tmp_path / "d.mat", "w", userblock_size=512) as fh:
        fh["fea"] = X.T  # as MATLAB writes a 6 x 2 matrix
        fh["gnd"] = (Y + 1)[None, :].astype(float)
        g = fh.create_group("A")
        g["data"], g["ir"], g["jc"] = W.data, W.indices.astype(np.uint64), W.indptr.astype(np.uint64)
        g.attrs["MATLAB_sparse"] = np.uint64(6)
    ds = read_file_dataset({"path": str(tmp_path / "d.mat"), "keys": {"X": "fea", "y": "gnd", "W": "A"}})
    np.testing.assert_array_equal(ds.X, X)
    np.testing.assert_array_equal(ds.y, Y)
    np.testing.assert_allclose(ds.W.toarray(), W.toarray())


def test_npy_pair_svmlight_and_graph_only_mtx(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    np.save(tmp_path / "X.npy", X)
    (tmp_path / "y.txt").write_text("\n".join(LABELS) + "\n")
    ds = read_file_dataset({"path": str(tmp_path / "X.npy"), "labels": str(tmp_path / "y.txt")})
    np.testing.assert_array_equal(ds.X, X), np.testing.assert_array_equal(ds.y, Y)

    dump_svmlight_file(X, Y * 2 - 1, str(tmp_path / "d.svm"))
    ds = read_file_dataset({"path": str(tmp_path / "d.svm")})
    assert sp.issparse(ds.X) and np.allclose(ds.X.toarray(), X)
    assert ds.classes.tolist() == ["-1", "1"] and ds.y.tolist() == Y.tolist()

    W = sp.csr_matrix(np.ones((6, 6)) - np.eye(6))
    scipy.io.mmwrite(tmp_path / "W.mtx", W)
    ds = read_file_dataset({"path": str(tmp_path / "W.mtx"), "labels": str(tmp_path / "y.txt")})
    assert ds.X is None and (ds.W != W).nnz == 0 and ds.y.tolist() == Y.tolist()


def test_graph_only_npz(tmp_path):
    W = sp.csr_matrix(np.ones((6, 6)) - np.eye(6))
    np.savez(tmp_path / "g.npz", W=W.toarray(), y=Y)
    ds = read_file_dataset({"path": str(tmp_path / "g.npz")})
    assert ds.X is None and ds.W.nnz == 30


# -- points without a label ------------------------------------------------------------------
def test_rows_without_a_label_are_in_the_graph_but_never_labeled_nor_scored(tmp_path):
    labels = ["b", "", "b", "a", "b", "a"] * 5
    rows = [f"{i},{i % 7},{lab}" for i, lab in enumerate(labels)]
    ds = read_file_dataset({"path": str(_csv(tmp_path / "d.csv", rows)), "label": "label"})
    assert ds.y.shape == (30,) and (ds.y == -1).sum() == 5 and ds.meta["n_unlabeled_rows"] == 5
    np.testing.assert_array_equal(ds.class_counts(), [10, 15])
    for spec in ({"kind": "labels_per_class", "n": 2, "repeats": 4},
                 {"kind": "per_class_counts", "labeled": 1, "unlabeled": 3, "test": None, "repeats": 3}):
        roles = make_splits(ds.y, spec, "d", "p")
        assert (roles[:, ds.y < 0] == UNSCORED).all()
        assert not np.isin(roles[:, ds.y >= 0], [UNSCORED]).any()
        assert ((roles == LABELED) | (roles == UNLABELED) | (roles == TEST)).sum(axis=1).tolist() == \
            [25] * roles.shape[0]
    nan_y = np.array([0.0, np.nan, 1.0, 1.0, 0.0, 1.0])  # NaN in a numeric label array
    np.savez(tmp_path / "n.npz", X=X, y=nan_y)
    assert read_file_dataset({"path": str(tmp_path / "n.npz")}).y.tolist() == [0, -1, 1, 1, 0, 1]


@pytest.mark.parametrize("word", ["NA", "nan", "NaN", "N/A", "null", " na "])
def test_a_missing_value_word_in_a_label_cell_is_an_unlabeled_point_and_minus_one_a_class(tmp_path, word):
    """pandas and R write NA / nan for a missing label: read as unlabeled, never as a class
    named "nan"; -1 stays a class (binary labels -1 / 1)."""
    rows = _rows(["-1", word, "1", "-1", "1", "-1"])
    ds = read_file_dataset({"path": str(_csv(tmp_path / "d.csv", rows)), "label": "label"})
    assert ds.classes.tolist() == ["-1", "1"] and ds.y.tolist() == [0, -1, 1, 0, 1, 0]


def test_fit_split_fits_unscored_points_as_unlabeled_and_never_scores_them(tmp_path):
    """Through the stage functions: the scores count the labeled points only."""
    from gssl.graphs import build_graph
    from gssl.pipeline.stages import fit_split

    rng = np.random.default_rng(0)
    Xm = np.vstack([rng.normal(0, 0.3, (20, 2)), rng.normal(3, 0.3, (20, 2))])
    y = np.repeat([0, 1], 20)
    y[[3, 25]] = -1
    cell = type("Cell", (), {})()
    cell.X, cell.y, cell.n_classes, cell.splits_path, cell.protocol = Xm, y, 2, "-", None
    cell.graph = build_graph(Xm, {"kind": "knn", "k": 5})
    cell.roles = make_splits(y, {"kind": "labels_per_class", "n": 1, "repeats": 1}, "d", "p")
    out = fit_split(cell, 0, {"solver": "poisson"})
    assert out["metrics"]["error_unlabeled"] == 0.0 and len(out["predictions"]) == 40
    assert out["metrics"]["n_labeled"] == 2


# -- problems: each named, with the fix -------------------------------------------------------
@pytest.mark.parametrize("rows, entry, message", [
    (["1,2,a", "3,4"], {}, "line 3 has 2 fields, the header 3"),
    (["1,2,a", "3,x,b"], {}, "feature column 'x2' is not numeric (line 3"),
    (["1,2,a", "3,,b"], {}, "feature 'x2' at line 3 is nan"),
    (["1,2,a", "3,nan,b"], {}, "feature 'x2' at line 3 is nan"),
    (["1,2,a", "3,NA,b"], {}, "feature 'x2' at line 3 is nan"),
    (["1,2,a", "3,inf,b"], {}, "feature 'x2' at line 3 is inf"),
    (["1,2,a", "3,4,a"], {}, "the labels hold 1 class (a)"),
    (["1,2,a", "3,4,b"], {"label": "lab"}, "label: no column named 'lab'; the header has 'x1', 'x2', 'label'"),
    (["1,2,a", "1,4,b"], {"id": "x1"}, "id column 'x1' repeats an id (lines [2, 3]"),
])
def test_a_bad_table_is_refused_by_name(tmp_path, rows, entry, message):
    path = _csv(tmp_path / "d.csv", rows)
    with pytest.raises(DatasetError) as exc:
        read_file_dataset({"path": str(path), "label": "label", **entry})
    assert message in str(exc.value) and str(path) in str(exc.value)


def test_file_entries_missing_what_they_need_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="needs label:"):
        read_file_dataset({"path": str(_csv(tmp_path / "d.csv", _rows()))})
    with pytest.raises(ConfigError, match="cannot tell the format"):
        read_file_dataset({"path": "data.bin"})
    with pytest.raises(ConfigError, match="holds no labels; add labels:"):
        read_file_dataset({"path": "X.npy"})
    with pytest.raises(DatasetError, match="does not exist"):
        read_file_dataset({"path": str(tmp_path / "nope.csv"), "label": "y"})
    np.savez(tmp_path / "g.npz", W=np.array([[0, 1.0], [2.0, 0]]), y=[0, 1])
    with pytest.raises(DatasetError, match="not symmetric"):
        read_file_dataset({"path": str(tmp_path / "g.npz")})


def _file_config(path, protocol=None, **entry):
    return {"datasets": {"mine": {"source": "file", "path": str(path), "label": "label", **entry}},
            "preprocessing": {"raw": []}, "graphs": {"knn": {"kind": "knn", "k": 3}},
            "methods": {"poisson": {"solver": "poisson"}},
            "protocols": {"p": protocol or {"kind": "labels_per_class", "n": 1, "repeats": 2}},
            "experiments": {"e": {"datasets": ["mine"], "preprocessing": ["raw"], "graphs": ["knn"],
                                  "methods": ["poisson"], "protocols": ["p"]}}}


def test_config_check_reads_the_file_and_tries_each_protocol(tmp_path):
    path = _csv(tmp_path / "d.csv", _rows())
    validate_config(_file_config(path))  # the good file and protocol pass
    for cfg, message in [
        (_file_config(tmp_path / "missing.csv"), "datasets.mine: data file"),
        (_file_config(path, label="lab"), "datasets.mine: " + str(path) + ": label: no column named 'lab'"),
        (_file_config(path, {"kind": "labels_per_class", "n": 3, "repeats": 2}),
         "protocol 'p' on dataset 'mine'"),
        (_file_config(path, classes=["a", "c"]), "has no class named 'c'"),
        (_file_config(_csv(tmp_path / "odd.csv", _rows(["b", "a", "b", "odd", "b", "a"]))),
         "class 2 has 1 points but labels_per_class n=1 (+1 unlabeled) needs at least 2 per class "
         "(1 classes are short); lower the counts or drop such classes (gssl.datasets.select). "
         "Class 2 is 'odd' (short: odd); to drop them, give datasets.mine classes: [a, b]"),
    ]:
        with pytest.raises(ConfigError) as exc:
            validate_config(cfg)
        assert message in str(exc.value)


def test_gssl_datasets_inspect_prints_what_gssl_reads(tmp_path, capsys):
    path = _csv(tmp_path / "d.csv", [f"{a:g},{b:g},{lab}" for (a, b), lab in zip(X, ["a", "", "b", "a", "b", "b"])])
    assert gssl_main(["datasets", "inspect", str(path), "--label", "label"]) == 0
    out = capsys.readouterr().out
    assert "features: 6 x 2 float64, dense" in out and "classes: 2 (a: 2, b: 3)" in out
    assert "unlabeled points: 1" in out
    assert gssl_main(["datasets", "inspect", str(path), "--label", "nope"]) == 1
    assert "no column named 'nope'" in capsys.readouterr().err
    path = _csv(tmp_path / "pm.csv", _rows(["-1", "1", "-1", "1", "-1", "1"]))
    assert gssl_main(["datasets", "inspect", str(path), "--label", "label"]) == 0
    assert "note: '-1' is read as a class; if it marks unlabeled points, leave those label cells " \
        "empty (or NA)" in capsys.readouterr().out


# -- solver plugins ---------------------------------------------------------------------------
@pytest.fixture
def example_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    yield
    sys.modules.pop("my_method", None)


def test_an_import_path_is_a_solver_validated_like_gssl_s_own(example_on_path):
    from gssl.solvers.registry import make_solver, solver_modules, solver_provenance

    est = make_solver("my_method:PageRankSpreading", {"alpha": 0.5})
    assert type(est).__name__ == "PageRankSpreading" and est.alpha == 0.5
    with pytest.raises(ConfigError, match="'alpha' parameter of PageRankSpreading"):
        make_solver("my_method:PageRankSpreading", {"alpha": 1.5})
    assert "my_method" in solver_modules("my_method:PageRankSpreading")  # its source: rerun hash
    assert "gssl.solvers.base" in solver_modules("my_method:PageRankSpreading")
    prov = solver_provenance("my_method:PageRankSpreading")
    assert prov["origin"] == "my_method:PageRankSpreading" and len(prov["source_sha256"]) == 64
    for bad, message in (("no_such_module:X", "module 'no_such_module' cannot be imported"),
                         ("my_method:Nope", "has no 'Nope'"), ("numpy:ndarray", "not an estimator class")):
        with pytest.raises(ConfigError, match=message):
            make_solver(bad)


def test_solvers_check_passes_a_good_plugin_and_names_what_a_broken_one_breaks(example_on_path, tmp_path,
                                                                            monkeypatch, capsys):
    assert gssl_main(["solvers", "check", "my_method:PageRankSpreading"]) == 0
    assert "ok, the estimator contract holds" in capsys.readouterr().out
    (tmp_path / "broken_method.py").write_text(textwrap.dedent("""
        import numpy as np
        from gssl import SemiSupervisedClassifier

        class Broken(SemiSupervisedClassifier):
            _parameter_constraints = {}
            def __init__(self, alpha=1.0):
                self.alpha = alpha
            def _fit(self, graph, codes, n_classes):
                return np.full((graph.n_nodes, n_classes), np.nan)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert gssl_main(["solvers", "check", "broken_method:Broken"]) == 1
    out = capsys.readouterr()
    assert "no _parameter_constraints entry for ['alpha']" in out.out and "keyword-only" in out.out
    assert "break the estimator contract" in out.err


def test_gssl_solvers_check_finds_a_plugin_in_the_working_directory_without_pythonpath(tmp_path):
    """The gssl command (whose sys.path starts with its bin folder), run where the plugin lies,
    with only gssl's sources on PYTHONPATH: found, checked, and told what the workflow needs."""
    shutil.copy(EXAMPLE / "my_method.py", tmp_path / "my_method.py")
    gssl_command = str(Path(sys.executable).with_name("gssl"))
    proc = subprocess.run([gssl_command, "solvers", "check", "my_method:PageRankSpreading"], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")}, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "my_method:PageRankSpreading: ok, the estimator contract holds" in proc.stdout
    assert (f"note: my_method was found in the working directory ({tmp_path}), which is not on "
            f"PYTHONPATH: the workflow's jobs need it there") in proc.stdout.replace("\n", " ")
    proc = subprocess.run([gssl_command, "solvers", "check", "my_method:PageRankSpreading"], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": f"{REPO / 'src'}:{tmp_path}"}, capture_output=True,
                          text=True)
    assert proc.returncode == 0 and "note:" not in proc.stdout  # on PYTHONPATH already: no note


def test_a_plugin_returning_nan_scores_fails_its_fit_by_name(tmp_path, monkeypatch):
    from gssl.graphs import build_graph
    from gssl.pipeline.stages import fit_split

    (tmp_path / "nan_method.py").write_text(textwrap.dedent("""
        import numpy as np
        from gssl import SemiSupervisedClassifier

        class NaNScores(SemiSupervisedClassifier):
            _parameter_constraints = {}
            def _fit(self, graph, codes, n_classes):
                return np.full((graph.n_nodes, n_classes), np.nan)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    cell = type("Cell", (), {})()
    cell.X, cell.y, cell.n_classes, cell.splits_path, cell.protocol = X, Y, 2, "-", None
    cell.graph = build_graph(X, {"kind": "knn", "k": 2})
    cell.roles = make_splits(Y, {"kind": "labels_per_class", "n": 1, "repeats": 1}, "d", "p")
    with pytest.raises(SolverError, match="solver 'nan_method:NaNScores': decision_function_ holds NaN") as job:
        fit_split(cell, 0, {"solver": "nan_method:NaNScores"})
    # the library's fit refuses them too, with the same message (predict() gave class 0 everywhere)
    from nan_method import NaNScores

    with pytest.raises(SolverError) as lib:
        NaNScores().fit(cell.graph, np.array([0, 1, -1, -1, -1, -1]))
    assert str(lib.value) == str(job.value) == (
        "solver 'nan_method:NaNScores': decision_function_ holds NaN or infinite scores (in 6 of 6 "
        "nodes' rows, the first node 0); run `gssl solvers check nan_method:NaNScores` to see what "
        "its fit breaks")
    sys.modules.pop("nan_method", None)


def test_fit_refuses_an_infinite_score_in_one_row_and_names_gssl_s_own_solver_by_its_config_name():
    from gssl.graphs import build_graph
    from gssl.solvers.fit_checks import solver_name
    from gssl.solvers.graph_learning import LaplaceLearning

    class OneInf(LaplaceLearning):
        def _fit(self, graph, codes, n_classes):
            scores = np.asarray(super()._fit(graph, codes, n_classes), dtype=float)
            scores[3, 1] = np.inf
            return scores

    G = build_graph(X, {"kind": "knn", "k": 2})
    with pytest.raises(SolverError, match=r"holds NaN or infinite scores \(in 1 of 6 nodes' rows, the first node 3\)"):
        OneInf().fit(G, np.array([0, 1, -1, -1, -1, -1]))
    assert solver_name(LaplaceLearning) == "laplace" and solver_name(OneInf).endswith(":" + OneInf.__qualname__)


PLUGINS = textwrap.dedent("""
    import numpy as np
    from gssl import SemiSupervisedClassifier

    class NoFit(SemiSupervisedClassifier):
        _parameter_constraints = {}

    class FlatScores(SemiSupervisedClassifier):
        _parameter_constraints = {}
        def _fit(self, graph, codes, n_classes):
            return np.zeros(graph.n_nodes)

    class Raises(SemiSupervisedClassifier):
        _parameter_constraints = {}
        def _fit(self, graph, codes, n_classes):
            raise KeyError("oops")
""")


def test_a_plugin_that_could_never_fit_is_refused_before_any_job(tmp_path, monkeypatch):
    """No _fit, or a scikit-learn estimator whose fit takes no n_classes: refused when the
    config is read, with what to write instead."""
    from gssl.solvers.registry import solver_class

    (tmp_path / "plugins_x.py").write_text(PLUGINS)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "plugins_bad.py").write_text("import numpy\n\nx = 1 / 0\n")
    with pytest.raises(ConfigError, match=r"importing module 'plugins_bad' raised ZeroDivisionError: "
                                          r"division by zero \(at .*plugins_bad.py, line 3\)"):
        solver_class("plugins_bad:X")
    (tmp_path / "plugins_dep.py").write_text("import no_such_dependency_xyz\n")
    with pytest.raises(ConfigError, match="module 'plugins_dep' imports 'no_such_dependency_xyz', "
                                          "which is not installed"):
        solver_class("plugins_dep:X")
    with pytest.raises(ConfigError, match=r"NoFit does not implement _fit\(graph, codes, n_classes\)"):
        solver_class("plugins_x:NoFit")
    with pytest.raises(ConfigError, match="LabelSpreading.fit takes no n_classes.*subclass "
                                          "gssl.SemiSupervisedClassifier"):
        solver_class("sklearn.semi_supervised:LabelSpreading")


SIGNATURES = textwrap.dedent("""
    import numpy as np
    from gssl import SemiSupervisedClassifier

    class TwoArgs(SemiSupervisedClassifier):
        _parameter_constraints = {}
        def _fit(self, graph, codes):
            return np.zeros((graph.n_nodes, 2))

    class KeywordOnly(SemiSupervisedClassifier):
        _parameter_constraints = {}
        def _fit(self, graph, codes, *, n_classes):
            return np.zeros((graph.n_nodes, n_classes))

    class ExtraArgument(SemiSupervisedClassifier):
        _parameter_constraints = {}
        def _fit(self, graph, codes, n_classes, weights):
            return np.zeros((graph.n_nodes, n_classes))

    class Fine(SemiSupervisedClassifier):
        _parameter_constraints = {}
        @staticmethod
        def _fit(graph, codes, n_classes, extra=None, **more):
            return np.zeros((graph.n_nodes, n_classes))
""")


@pytest.mark.parametrize("cls, message", [
    ("TwoArgs", "TwoArgs._fit(self, graph, codes) cannot be called as fit calls it, _fit(graph, codes, "
                "n_classes) (too many positional arguments); write def _fit(self, graph, codes, n_classes)"),
    ("KeywordOnly", "KeywordOnly._fit(self, graph, codes, *, n_classes) cannot be called as fit calls it"),
    ("ExtraArgument", "(missing a required argument: 'weights'); write def _fit(self, graph, codes, n_classes)"),
])
def test_a_plugin_whose_fit_has_the_wrong_signature_is_refused_before_any_job(tmp_path, monkeypatch, cls, message):
    (tmp_path / "plugins_sig.py").write_text(SIGNATURES)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        path = _csv(tmp_path / "d.csv", _rows())
        cfg = _file_config(path)
        cfg["methods"]["poisson"]["solver"] = f"plugins_sig:{cls}"
        with pytest.raises(ConfigError) as exc:
            validate_config(cfg)
        assert f"solver 'plugins_sig:{cls}': " in str(exc.value) and message in str(exc.value)
        cfg["methods"]["poisson"]["solver"] = "plugins_sig:Fine"  # defaults, **kwargs, a staticmethod
        validate_config(cfg)
    finally:
        sys.modules.pop("plugins_sig", None)


def test_a_plugin_s_wrong_scores_or_own_exception_fail_its_fit_by_name(tmp_path, monkeypatch):
    from gssl.graphs import build_graph
    from gssl.pipeline.stages import fit_split

    (tmp_path / "plugins_y.py").write_text(PLUGINS)
    monkeypatch.syspath_prepend(str(tmp_path))
    cell = type("Cell", (), {})()
    cell.X, cell.y, cell.n_classes, cell.splits_path, cell.protocol = X, Y, 2, "-", None
    cell.graph = build_graph(X, {"kind": "knn", "k": 2})
    cell.roles = make_splits(Y, {"kind": "labels_per_class", "n": 1, "repeats": 1}, "d", "p")
    with pytest.raises(SolverError, match=r"FlatScores._fit returned scores of shape \(6,\); return an "
                                          r"\(n, C\) array: one row per graph node \(n = 6\)"):
        fit_split(cell, 0, {"solver": "plugins_y:FlatScores"})
    with pytest.raises(SolverError, match="solver 'plugins_y:Raises' failed in its fit "
                                          r"\(KeyError: 'oops'\); run `gssl solvers check"):
        fit_split(cell, 0, {"solver": "plugins_y:Raises"})


# -- issue 48: a plugin's code hash covers what it imports from its own folder or package -------
TWO_FILE_PLUGIN = {
    "spreading_helpers.py": textwrap.dedent("""
        import numpy as np
        import scipy.sparse as sp

        def one_hot(codes, n_classes):
            Y = np.zeros((len(codes), n_classes))
            Y[codes >= 0, codes[codes >= 0]] = 1.0
            return Y

        def spread(W, Y, steps=10):
            d = np.asarray(W.sum(axis=1)).ravel()
            P = sp.diags(1.0 / np.maximum(d, 1e-12)) @ W
            F = Y.copy()
            for _ in range(steps):
                F = P @ F + Y
            return F
    """),
    "two_file_method.py": textwrap.dedent("""
        from gssl import SemiSupervisedClassifier
        from spreading_helpers import one_hot, spread

        class TwoFile(SemiSupervisedClassifier):
            _parameter_constraints = {}

            def _fit(self, graph, codes, n_classes):
                return spread(graph.W, one_hot(codes, n_classes))
    """),
}


def _write_two_file_plugin(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in TWO_FILE_PLUGIN.items():
        (folder / name).write_text(text)
    return folder


def test_a_plugin_s_code_hash_covers_the_helpers_it_imports_from_its_folder(tmp_path, monkeypatch):
    from gssl.solvers.registry import solver_modules, solver_provenance
    from gssl.store.hashing import module_source_hash

    folder = _write_two_file_plugin(tmp_path / "plug")
    pkg = tmp_path / "pkgs" / "lab_methods"  # a package: a relative import of a sibling, transitively
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text("from .maths import spread\n")
    (pkg / "maths.py").write_text("from . import consts\nimport numpy as np\n\nspread = np.ones\n")
    (pkg / "consts.py").write_text("STEPS = 3\n")
    (pkg / "unused.py").write_text("")
    (pkg / "method.py").write_text("from gssl import SemiSupervisedClassifier\nfrom .core import spread\n\n"
                                   "class M(SemiSupervisedClassifier):\n    _parameter_constraints = {}\n"
                                   "    def _fit(self, graph, codes, n_classes):\n        return spread\n")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    try:
        mods = solver_modules("two_file_method:TwoFile")
        assert {"two_file_method", "spreading_helpers", "gssl.solvers.base"} <= set(mods)
        assert not {m for m in mods if m.split(".")[0] in ("numpy", "scipy")}  # other distributions
        before = module_source_hash(*mods)
        tag = solver_provenance("two_file_method:TwoFile")["source_sha256"]  # the MLflow tag
        helper = folder / "spreading_helpers.py"
        helper.write_text(helper.read_text().replace("steps=10", "steps=11"))
        assert module_source_hash(*mods) != before
        assert solver_provenance("two_file_method:TwoFile")["source_sha256"] != tag
        assert module_source_hash(*solver_modules("poisson")) == module_source_hash(*solver_modules("poisson"))
        assert "spreading_helpers" not in solver_modules("poisson")

        mods = solver_modules("lab_methods.method:M")
        assert {"lab_methods.method", "lab_methods.core", "lab_methods.maths", "lab_methods.consts"} <= set(mods)
        assert "lab_methods.unused" not in mods and "numpy" not in mods
    finally:
        for name in ("two_file_method", "spreading_helpers", "lab_methods", "lab_methods.method",
                     "lab_methods.core", "lab_methods.maths", "lab_methods.consts"):
            sys.modules.pop(name, None)


@pytest.mark.e2e
def test_editing_a_plugin_s_helper_module_reruns_exactly_its_method_s_jobs(tmp_path):
    """A two-file plugin beside poisson on the small config: after a run, editing the helper the
    plugin imports plans the plugin's solve jobs and nothing else; an untouched tree plans none."""
    from workflow_helpers import SMALL, make_workspace, parse_jobs, smk

    folder = _write_two_file_plugin(tmp_path / "plug")
    config = json.loads(json.dumps(SMALL))
    config["results"] = "results"
    config["protocols"] = {"lpc1": {"kind": "labels_per_class", "n": 1, "repeats": 2}}
    config["methods"] = {"rls": SMALL["methods"]["rls"], "two_file": {"solver": "two_file_method:TwoFile"}}
    config["experiments"]["e2e"].update(methods=["rls", "two_file"], protocols=["lpc1"])
    ws = make_workspace(tmp_path / "ws", config)
    env = {"PYTHONPATH": f"{ws / 'src'}:{folder}"}
    smk(ws, "--cores", "2", env=env)

    def planned():
        return parse_jobs(smk(ws, "-n", "--cores", "1", env=env))

    assert planned() == []
    helper = folder / "spreading_helpers.py"
    helper.write_text(helper.read_text().replace("steps=10", "steps=11"))
    jobs = planned()
    solved = [(j["rule"], j["wildcards"].get("method")) for j in jobs if j["rule"].startswith("solve")]
    assert solved == [("solve", "two_file")]
    assert {j["rule"] for j in jobs} - {"solve"} <= {"aggregate", "predictions", "mlflow_summary", "all"}, jobs  # downstream only


def _fake_distribution(site: Path, name: str, entry_points: str, module: str, source: str) -> None:
    """An installed distribution as importlib.metadata finds it: a dist-info folder with
    entry_points.txt beside its module (what pip install writes)."""
    info = site / f"{name}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    (info / "top_level.txt").write_text(module + "\n")
    (info / "RECORD").write_text(f"{module}.py,,\n")
    (site / f"{module}.py").write_text(source)


def test_entry_points_register_solvers_and_datasets(tmp_path, monkeypatch, capsys):
    from gssl.datasets import load
    from gssl.pipeline.config import registries
    from gssl.solvers.registry import solver_class, solver_names, solver_provenance

    _fake_distribution(tmp_path, "lab_plugins", textwrap.dedent("""
        [gssl.solvers]
        pagerank = my_method:PageRankSpreading
        [gssl.datasets]
        lab_blobs = lab_data:blobs
    """), "lab_data", textwrap.dedent("""
        import numpy as np

        def blobs(n_per_class=10, random_state=0):
            rng = np.random.default_rng(random_state)
            X = np.vstack([rng.normal(0, 1, (n_per_class, 3)), rng.normal(4, 1, (n_per_class, 3))])
            y = ["left"] * n_per_class + ["right"] * n_per_class
            y[0] = None  # a point without a label
            return X, y
    """))
    shutil.copy(EXAMPLE / "my_method.py", tmp_path / "my_method.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "pagerank" in solver_names() and "pagerank" in registries()["solvers"]
    assert solver_class("pagerank").__name__ == "PageRankSpreading"
    assert solver_provenance("pagerank")["distribution"] == "lab_plugins 0.1.0"
    assert "lab_blobs" in registries()["datasets"]
    ds = load("lab_blobs", params={"n_per_class": 6})
    assert ds.X.shape == (12, 3) and ds.classes.tolist() == ["left", "right"] and ds.y[0] == -1
    assert gssl_main(["solvers"]) == 0 and "pagerank  (my_method.PageRankSpreading)" in capsys.readouterr().out
    sys.modules.pop("my_method", None), sys.modules.pop("lab_data", None)


# -- the worked example, through the workflow --------------------------------------------------
@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """docs/examples/my_method installed as pip installs it (into a folder on PYTHONPATH), its
    config run in a copy of the workflow (fewer draws: a test, not the example's numbers)."""
    from workflow_helpers import make_workspace, smk

    root = tmp_path_factory.mktemp("plugin")
    site = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(site), str(EXAMPLE)], check=True, capture_output=True)
    config = yaml.safe_load((EXAMPLE / "config.yaml").read_text())
    config["results"] = "results"
    config["protocols"]["lpc1"]["repeats"] = 6
    config["protocols"]["select1"]["repeats"] = 2
    config["experiments"]["my_method"]["protocols"] = ["lpc1", "all"]  # all: kind predict
    ws = make_workspace(root / "ws", config)
    shutil.copytree(EXAMPLE, ws / "docs" / "examples" / "my_method")
    env = {"PYTHONPATH": f"{ws / 'src'}:{site}"}
    smk(ws, "--cores", "2", env=env)
    return ws, env, site


@pytest.mark.e2e
def test_the_example_plugin_runs_beside_poisson_and_laplace(example_run):
    from workflow_helpers import mlflow_runs

    ws, _, _ = example_run
    table = (ws / "results" / "tables" / "my_method.csv").read_text()
    stats = (ws / "results" / "tables" / "my_method.stats.md").read_text()
    for method in ("pagerank", "poisson", "laplace"):
        assert method in table and f"| {method} " in stats.replace("**", "")
    cells = {r[2] for r in mlflow_runs(ws, "cell")}
    assert cells == {"pagerank", "poisson", "laplace"}
    import sqlite3

    with sqlite3.connect(ws / "results" / "mlflow.db") as con:
        tags = dict(con.execute("SELECT key, value FROM tags WHERE key LIKE 'gssl.solver_%' OR "
                                "key = 'gssl.data_files'").fetchall())
    assert tags["gssl.solver_distribution"] == "gssl-my-method 0.1.0"
    assert json.loads(tags["gssl.data_files"]) == {
        "docs/examples/my_method/moons.csv": __import__("gssl").store.hashing.file_sha256(EXAMPLE / "moons.csv")}
    chosen = json.loads((ws / "results" / "selected" / "my_method" / "moons_csv" / "std" / "knn10" /
                         "pagerank.json").read_text())
    assert chosen  # the selection stage chose alpha on the holdout draws


@pytest.mark.e2e
def test_the_example_predicts_its_unlabeled_rows_by_id_and_class_name(example_run):
    """Issue 48: every row of moons.csv with an empty label cell gets each method's predicted class
    and class scores (protocol all, kind predict); each scored cell's predictions name the ids and
    classes; the confusion matrices are in the tables, the report and MLflow."""
    import pandas as pd

    from gssl.pipeline import paths

    ws, env, _ = example_run
    csv = pd.read_csv(EXAMPLE / "moons.csv", dtype=str, keep_default_na=False)
    unlabeled = csv.loc[csv["shape"] == "", "id"].tolist()
    assert len(unlabeled) == 20
    cell = {"experiment": "my_method", "dataset": "moons_csv", "prep": "std", "graph": "knn10"}
    for method in ("pagerank", "poisson", "laplace"):
        got = pd.read_csv(ws / paths.path("results", paths.UNLABELED_PREDICTIONS, method=method,
                                          protocol="all", **cell))
        assert got["id"].tolist() == unlabeled
        assert set(got["predicted"]) <= {"lower", "upper"} and len(set(got["predicted"])) == 2
        assert [c for c in got.columns if c.startswith("score_")] == ["score_lower", "score_upper"]
        scored = pd.read_csv(ws / paths.path("results", paths.PREDICTIONS, method=method, protocol="lpc1", **cell))
        assert set(scored["id"]) <= set(csv["id"]) - set(unlabeled) and set(scored["true"]) == {"lower", "upper"}
        assert [c for c in scored.columns if c.startswith("split_")] == [f"split_{i}" for i in range(6)]
        assert not (ws / paths.path("results", paths.PREDICTIONS, method=method, protocol="all", **cell)).exists()
    table = pd.read_csv(ws / "results" / "tables" / "my_method.csv")
    assert set(table["protocol"]) == {"lpc1"}  # protocol predict scores nothing: not in the tables
    confusion = pd.read_csv(ws / "results" / "tables" / "my_method.confusion.csv")
    poisson = confusion.query("method == 'poisson'")
    errors = 100 * poisson.query("true != predicted")["count"].sum() / poisson["count"].sum()
    mean = table.query("method == 'poisson'")["error_unlabeled_mean"].item()
    assert errors == pytest.approx(mean, abs=1e-3)  # every split scores as many points: pooled = mean
    page = (ws / "results" / "tables" / "my_method.confusion.html").read_text()
    assert page.count("<table") == 3 and "true / predicted" in page
    from workflow_helpers import smk

    smk(ws, "--report", "report.html", env=env)
    report = (ws / "report.html").read_text()
    assert "my_method.confusion.html" in report and "confusion matrices and per-class error" in report
    artifacts = {p.name for p in (ws / "results" / "mlflow-artifacts").rglob("*.csv")}
    assert {"lpc1.csv", "all.unlabeled.csv", "my_method.confusion.csv"} <= artifacts


@pytest.mark.e2e
def test_editing_the_data_or_the_plugin_reruns_exactly_what_depends_on_it(example_run):
    from workflow_helpers import edited, rules_of

    ws, env, site = example_run
    assert planned_jobs_env(ws, env) == []
    with edited(site / "my_method.py"):
        jobs = planned_jobs_env(ws, env)
        solved = {(j["rule"], j["wildcards"].get("method")) for j in jobs if j["rule"].startswith("solve")}
        assert solved == {("solve", "pagerank"), ("solve_grid", "pagerank")}
        assert not {"dataset", "features", "graph", "splits"} & set(rules_of(jobs))
    data = ws / "docs" / "examples" / "my_method" / "moons.csv"
    text = data.read_text()
    data.write_text(re.sub(r"^p5,[^,]*,", "p5,0.123,", text, count=1, flags=re.M))
    try:
        counts = rules_of(planned_jobs_env(ws, env))
        assert counts["dataset"] == 1 and counts["features"] == 1 and counts["graph"] == 1
        assert counts["solve"] == 6  # every method's cells on this dataset (lpc1 and all)
    finally:
        data.write_text(text)


def planned_jobs_env(ws, env):
    from workflow_helpers import parse_jobs, smk

    return parse_jobs(smk(ws, "-n", "--cores", "1", env=env))


# -- issue 48: input that was read wrongly, or refused with a message that named no fix ----------
@pytest.mark.parametrize("header, rows, entry, message", [
    ("x1,x2,x1,label", ["1,2,3,a", "4,5,6,b"], {}, "the header names column 'x1' 2 times (columns [0, 2]"),
    ("x1;x2;label", ["1,5;2;a", "3;4;b"], {}, "looks ';'-separated: add sep: ';'"),
    ("x1,x2,label", ["1,2,a", "3,4,b"], {"label": "lable"}, "did you mean 'label'?"),
    ("x1,x2,label", [f"{i},{i % 3},{i * 0.37:.3f}" for i in range(25)], {},
     "every one of the 25 labelled rows has its own label"),
])
def test_a_table_gssl_would_misread_is_refused_with_the_fix(tmp_path, header, rows, entry, message):
    path = tmp_path / "d.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    with pytest.raises(DatasetError) as exc:
        read_file_dataset({"path": str(path), "label": "label", **entry})
    assert message in str(exc.value) and str(path) in str(exc.value)


def test_compressed_tables_a_separator_and_spreadsheets(tmp_path):
    import gzip

    text = "x1,x2,label\n1,2,a\n3,4,b\n5,6,a\n"
    with gzip.open(tmp_path / "d.csv.gz", "wt") as fh:
        fh.write(text)
    ds = read_file_dataset({"path": str(tmp_path / "d.csv.gz"), "label": "label"})
    assert ds.X.tolist() == [[1, 2], [3, 4], [5, 6]] and ds.classes.tolist() == ["a", "b"]
    (tmp_path / "semi.csv").write_text(text.replace(",", ";").replace("1;2", "1,5;2"))
    ds = read_file_dataset({"path": str(tmp_path / "semi.csv"), "label": "label", "sep": ";",
                            "features": ["x2"]})
    assert ds.X.ravel().tolist() == [2, 4, 6]
    with pytest.raises(ConfigError, match="is a spreadsheet.*export it as CSV"):
        read_file_dataset({"path": str(tmp_path / "d.xlsx"), "label": "label"})
    with pytest.raises(ConfigError, match="sep: must be one character"):
        read_file_dataset({"path": str(tmp_path / "semi.csv"), "label": "label", "sep": ";;"})
    (tmp_path / "bad.csv").write_bytes(b"x1,label\n\xff\xfe,a\n")
    with pytest.raises(DatasetError, match="save it as UTF-8"):
        read_file_dataset({"path": str(tmp_path / "bad.csv"), "label": "label"})


def test_an_hdf5_file_that_reads_other_files_is_refused(tmp_path):
    import h5py

    with h5py.File(tmp_path / "other.h5", "w") as fh:
        fh["X"] = np.ones((4, 2))
    with h5py.File(tmp_path / "linked.h5", "w") as fh:
        fh["X"] = h5py.ExternalLink(str(tmp_path / "other.h5"), "/X")
        fh["y"] = np.array([0, 1, 0, 1])
    with pytest.raises(DatasetError, match=r"'X' is an external link to .*other.h5:/X.*self-contained"):
        read_file_dataset({"path": str(tmp_path / "linked.h5")})
    layout = h5py.VirtualLayout(shape=(4, 2), dtype="f8")
    layout[:] = h5py.VirtualSource(str(tmp_path / "other.h5"), "X", shape=(4, 2))
    with h5py.File(tmp_path / "virtual.h5", "w") as fh:
        fh.create_virtual_dataset("X", layout)
        fh["y"] = np.array([0, 1, 0, 1])
    with pytest.raises(DatasetError, match="'X' is a virtual dataset over other files"):
        read_file_dataset({"path": str(tmp_path / "virtual.h5")})


# -- issue 48: a test file beside the data file ---------------------------------------------------
def test_a_test_file_beside_the_data_file_is_read_after_it_and_is_every_protocol_s_test_part(tmp_path):
    from gssl.splits import with_test_part

    train = _csv(tmp_path / "train.csv", [f"{i},{i % 3},{'ab'[i % 2]}" for i in range(12)] + ["12,0,"])
    test = _csv(tmp_path / "test.csv", ["20,1,b", "21,2,b", "22,0,b"])  # one class only: encoded with the training file's
    ds = read_file_dataset({"path": str(train), "label": "label", "test": str(test)})
    assert ds.X.shape == (16, 2) and ds.X[13].tolist() == [20, 1] and ds.meta["test_from"] == 13
    assert ds.classes.tolist() == ["a", "b"] and ds.y[13:].tolist() == [1, 1, 1] and ds.y[12] == -1
    assert set(ds.meta["files"]) == {str(train), str(test)}
    spec = with_test_part({"kind": "labels_per_class", "n": 1, "repeats": 3}, ds.meta["test_from"], "d", "p")
    roles = make_splits(ds.y, spec, "d", "p")
    assert (roles[:, 13:] == TEST).all() and not (roles[:, :13] == TEST).any()
    assert (roles[:, :12] == LABELED).sum(axis=1).tolist() == [2, 2, 2] and (roles[:, 12] == UNSCORED).all()
    with pytest.raises(ConfigError, match="protocol 'p' sets holdout, but dataset 'd' has a test file "
                                          r"\(test:, its rows from 13 on\), which is the test part of every "
                                          "protocol on it; drop holdout from the protocol"):
        with_test_part({"kind": "labels_per_class", "n": 1, "holdout": {"fraction": 0.2}}, 13, "d", "p")


@pytest.mark.parametrize("test_rows, header, entry, error, message", [
    (["20,1,b"], "x1,x3,label", {}, DatasetError,
     "the test file's columns differ from"),
    (["5,1,b"], "id,x2,label", {"id": "id"}, DatasetError,
     "id column 'id' repeats an id in the training and the test file"),
    (["20,1,b"], "x1,x2,label", {"classes": ["a", "b"]}, ConfigError,
     "a test file (test:) with a class view (classes:) is not supported"),
    (["20,1,b"], "x1,x2,label", {"format": "npz", "keys": {"X": "X"}}, ConfigError,
     "'test'] apply to other formats than npz"),
])
def test_a_test_file_that_does_not_fit_its_data_file_is_refused_by_name(tmp_path, test_rows, header, entry,
                                                                        error, message):
    first = "id,x2,label" if "id" in entry else "x1,x2,label"
    train = _csv(tmp_path / "train.csv", [f"{i},{i % 3},{'ab'[i % 2]}" for i in range(8)], header=first)
    test = _csv(tmp_path / "test.csv", test_rows, header=header)
    with pytest.raises(error) as exc:
        read_file_dataset({"path": str(train), "label": "label", "test": str(test), **entry})
    assert message in str(exc.value)


def test_config_check_and_the_workflow_plan_score_a_file_dataset_on_its_test_file(tmp_path):
    from gssl.pipeline.plan import expected_headline

    train = _csv(tmp_path / "train.csv", [f"{i},{i % 3},{'ab'[i % 2]}" for i in range(12)])
    test = _csv(tmp_path / "test.csv", ["20,1,b", "21,2,a"])
    cfg = _file_config(train, test=str(test))
    validate_config(cfg)
    assert expected_headline(cfg, "e") == ("error_test", True)
    bad = _file_config(train, {"kind": "labels_per_class", "n": 1, "repeats": 2, "test_from": 6}, test=str(test))
    with pytest.raises(ConfigError, match="protocol 'p' on dataset 'mine' .*protocol 'p' sets test_from, but "
                                          "dataset 'mine' has a test file"):
        validate_config(bad)
    short = _file_config(train, {"kind": "labels_per_class", "n": 6, "repeats": 2}, test=str(test))
    with pytest.raises(ConfigError, match="class 0 has 6 points but labels_per_class n=6"):
        validate_config(short)  # the training rows only: the test rows are never labeled


def test_the_dataset_and_splits_jobs_keep_the_test_file_s_rows_as_the_test_part(tmp_path):
    from gssl.pipeline.stages import build_dataset, build_splits
    from gssl.splits import load_splits

    train = _csv(tmp_path / "train.csv", [f"{i},{i % 3},{'ab'[i % 2]}" for i in range(10)] + ["10,1,"])
    test = _csv(tmp_path / "test.csv", ["20,1,b", "21,2,a", "22,0,a"])
    entry = {"source": "file", "path": str(train), "label": "label", "test": str(test)}
    build_dataset("mine", entry, None, tmp_path / "data.h5")
    spec = {"kind": "labels_per_class", "n": 2, "repeats": 3}
    build_splits(tmp_path / "data.h5", "mine", "p", spec, tmp_path / "splits.h5")
    roles = load_splits(tmp_path / "splits.h5")
    assert roles.shape == (3, 14) and (roles[:, 11:] == TEST).all() and (roles[:, 10] == UNSCORED).all()
    assert not (roles[:, :10] == TEST).any() and ((roles[:, :10] == LABELED).sum(axis=1) == 4).all()


def test_the_splits_of_a_dataset_with_a_test_file_are_drawn_again_as_built(tmp_path):
    """A solve job's Cell draws the splits again from what the file records (its protocol, and
    the test file's first row): they are accepted, and an edited split still refused by name."""
    from gssl.datasets.store import load_dataset
    from gssl.errors import CacheError
    from gssl.pipeline.stages import build_dataset, build_splits
    from gssl.splits import check_rederived, load_splits, save_splits
    from gssl.store.h5io import read_attrs

    train = _csv(tmp_path / "train.csv", [f"{i},{i % 3},{'ab'[i % 2]}" for i in range(10)] + ["10,1,"])
    test = _csv(tmp_path / "test.csv", ["20,1,b", "21,2,a", "22,0,a"])
    entry = {"source": "file", "path": str(train), "label": "label", "test": str(test)}
    build_dataset("mine", entry, None, tmp_path / "data.h5")
    ds = load_dataset(tmp_path / "data.h5")
    build_splits(tmp_path / "data.h5", "mine", "p", {"kind": "labels_per_class", "n": 2, "repeats": 3},
                 tmp_path / "splits.h5")
    attrs = read_attrs(tmp_path / "splits.h5")
    roles = load_splits(tmp_path / "splits.h5")
    assert attrs["test_from"] == 11
    check_rederived(tmp_path / "splits.h5", roles, ds.y, attrs["params"], test_from=attrs["test_from"])
    edited = roles.copy()
    first = int(np.flatnonzero(edited[0] == LABELED)[0])
    edited[0, first] = UNLABELED
    save_splits(tmp_path / "edited.h5", edited, attrs["params"], test_from=attrs["test_from"])
    with pytest.raises(CacheError, match=f"split 0, point {first}: unlabeled, the protocol draws labeled"):
        check_rederived(tmp_path / "edited.h5", edited, ds.y, attrs["params"], test_from=attrs["test_from"])


def test_a_protocol_s_test_from_is_a_row_of_the_data_file_whatever_rows_have_no_label():
    """test_from names the first test row of the data file, rows without a label before it
    included (they stay unscored); the labeled rows before it are the training part."""
    y = np.array([0, 1, -1, 0, 1, -1, 0, 1, 0, 1, 0, 1])
    roles = make_splits(y, {"kind": "labels_per_class", "n": 1, "repeats": 4, "test_from": 8}, "d", "p")
    assert (roles[:, 8:] == TEST).all() and not (roles[:, :8] == TEST).any()
    assert (roles[:, [2, 5]] == UNSCORED).all() and ((roles[:, :8] == LABELED).sum(axis=1) == 2).all()
