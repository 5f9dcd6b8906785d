"""Lineage (issue 51): every cache file records the content digest of each file it was built from,
and every reader checks it against the file it was given. The chain test: two generated datasets
of the same shape and the same config (two_moons, random_state 0 and 1, under the same ids in two
results folders), and any one cache file of the first swapped for the second's: the reader refuses
it by name, ``gssl verify`` names it (the first link that breaks) with the command that rebuilds
it, and the logging job refuses a job output computed from another file before logging anything.
Splits are drawn again and compared: one edited with its checksum recomputed is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from gssl.errors import CacheError
from gssl.pipeline import paths
from gssl.pipeline.stages import Cell, build_dataset, build_features, build_graph, build_splits, write_block

ENTRY = {"source": "two_moons", "params": {"n_samples": 120, "n_features": 5, "noise": 0.1}}
STEPS = ["standardize"]
GRAPH = {"kind": "knn", "k": 8, "weights": "binary", "laplacian": "unnormalized"}
PROTOCOL = {"kind": "labels_per_class", "n": 2, "repeats": 3}
CELL = {"dataset": "moons", "prep": "std", "graph": "knn8", "protocol": "lpc2"}


def build(results: Path, random_state: int) -> dict:
    """The cache files of one cell, as the workflow's jobs build them."""
    f = {"data": paths.path(results, paths.DATA, **CELL), "features": paths.path(results, paths.FEATURES, **CELL),
         "graph": paths.path(results, paths.GRAPH, **CELL), "splits": paths.path(results, paths.SPLITS, **CELL)}
    entry = {**ENTRY, "params": {**ENTRY["params"], "random_state": random_state}}
    build_dataset("moons", entry, None, f["data"])
    build_features(f["data"], STEPS, f["features"])
    build_graph(f["features"], GRAPH, f["graph"], data_path=f["data"])
    build_splits(f["data"], "moons", "lpc2", PROTOCOL, f["splits"])
    return f


@pytest.fixture(scope="module")
def two(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("lineage")
    build(root / "a" / "results", 0)
    build(root / "b" / "results", 1)
    return root / "a" / "results", root / "b" / "results"


@pytest.fixture()
def results(two, tmp_path) -> tuple[Path, dict, dict]:
    """A fresh copy of the first folder, its files, and the second folder's files."""
    a, b = two
    shutil.copytree(a, tmp_path / "results")
    r = tmp_path / "results"
    files = {k: paths.path(r, t, **CELL) for k, t in
             (("data", paths.DATA), ("features", paths.FEATURES), ("graph", paths.GRAPH), ("splits", paths.SPLITS))}
    other = {k: paths.path(b, t, **CELL) for k, t in
             (("data", paths.DATA), ("features", paths.FEATURES), ("graph", paths.GRAPH), ("splits", paths.SPLITS))}
    return r, files, other


def cell(files):
    return Cell(files["features"], files["graph"], files["splits"], data_path=files["data"])


def test_the_two_datasets_have_the_same_shape_and_params_and_other_points(two):
    from gssl.datasets.store import load_dataset
    from gssl.store.h5io import read_attrs

    a, b = (load_dataset(paths.path(r, paths.DATA, **CELL)) for r in two)
    assert a.X.shape == b.X.shape == (120, 5) and not np.allclose(a.X, b.X)
    for t in (paths.FEATURES, paths.GRAPH, paths.SPLITS):  # what expect_params checks: the same
        pa, pb = (read_attrs(paths.path(r, t, **CELL))["params_hash"] for r in two)
        assert pa == pb


@pytest.mark.parametrize("swapped, named", [("features", "features"), ("graph", "graph"),
                                            ("splits", "splits"), ("data", "features")])
def test_a_cache_file_of_the_other_dataset_is_refused_by_the_run_by_name(results, swapped, named):
    _, files, other = results
    assert cell(files).roles.shape == (3, 120)  # the folder as built: accepted
    shutil.copy(other[swapped], files[swapped])
    with pytest.raises(CacheError) as err:
        cell(files)
    msg = str(err.value)
    assert msg.startswith(f"{files[named]}: ") and "content_sha256" in msg, msg
    assert f"--forcerun {files[named]}" in msg  # the command that rebuilds it


def test_a_graph_job_refuses_features_of_another_dataset(results, tmp_path):
    _, files, other = results
    shutil.copy(other["features"], files["features"])
    with pytest.raises(CacheError, match=f"^{files['features']}: was built from a data file"):
        build_graph(files["features"], GRAPH, tmp_path / "g.h5", data_path=files["data"])
    assert not (tmp_path / "g.h5").exists()


def test_cache_files_record_their_inputs_content_digests_and_the_splits_their_seeds(results):
    from gssl.splits import seed_for
    from gssl.store.h5io import read_attrs

    _, files, _ = results
    digest = {k: read_attrs(p)["content_sha256"] for k, p in files.items()}
    assert read_attrs(files["features"])["inputs"] == {"data": digest["data"]}
    assert read_attrs(files["graph"])["inputs"] == {"features": digest["features"], "data": digest["data"]}
    splits = read_attrs(files["splits"])
    assert splits["inputs"] == {"data": digest["data"]}
    assert splits["params"] == {"protocol": PROTOCOL, "dataset": "moons", "protocol_id": "lpc2"}
    assert splits["seed_0"] == str(seed_for("moons", "lpc2", 0)) and "seed_for" in splits["seeds"]


def test_a_split_edited_with_its_checksum_recomputed_is_refused_by_name(results):
    """Labeled and unlabeled roles swapped in split 1, the file rewritten with the same params and
    inputs (so its checksum, params and lineage are all valid): the splits are drawn again and
    the file is refused, naming the split and the point."""
    from gssl.splits import LABELED, UNLABELED, load_splits, save_splits
    from gssl.store.h5io import read_attrs

    _, files, _ = results
    roles = load_splits(files["splits"]).copy()
    attrs = read_attrs(files["splits"])
    lab, unl = roles[1] == LABELED, roles[1] == UNLABELED
    roles[1][lab], roles[1][unl] = UNLABELED, LABELED
    save_splits(files["splits"], roles, params=attrs["params"], inputs=attrs["inputs"])
    with pytest.raises(CacheError) as err:
        cell(files)
    msg = str(err.value)
    assert msg.startswith(f"{files['splits']}: its splits are not those protocol 'lpc2' draws"), msg
    assert "split 1, point" in msg and "1 of 3 splits checked differ" in msg
    cell_of = Cell(files["features"], files["graph"], files["splits"], data_path=files["data"],
                   check_splits=[0, 2])  # a job of other splits draws only its own: not this one's
    assert cell_of.roles.shape == (3, 120)
    with pytest.raises(CacheError, match="split 1, point .* 1 of 2 splits checked differ"):
        Cell(files["features"], files["graph"], files["splits"], data_path=files["data"], check_splits=[2, 1])


@pytest.mark.parametrize("spec", [
    {"kind": "labels_per_class", "n": 2, "repeats": 7},
    {"kind": "melacci_cv", "folds": 3, "randomizations": 2, "labeled": 8, "validation": 8},
    {"kind": "per_class_counts", "labeled": 2, "unlabeled": 10, "test": 5, "repeats": 4, "pool": 40},
    {"kind": "unsupervised", "repeats": 3},
    {"kind": "label_fraction", "fraction": 0.1, "repeats": 5, "holdout": {"fraction": 0.2, "part": "outside"}},
    {"kind": "labels_per_class", "n": 2, "repeats": 3, "test_from": 200}])
def test_drawing_some_splits_gives_those_rows_of_the_whole_protocol(spec):
    from gssl.splits import make_splits

    y = np.random.default_rng(1).integers(0, 4, 300)
    y[:5] = -1  # points without a label too
    full = make_splits(y, spec, "d", "p")
    for only in ([0], [len(full) - 1, 1], [2, 0]):
        only = [s for s in only if s < len(full)]
        np.testing.assert_array_equal(make_splits(y, spec, "d", "p", only), full[only])


def test_drawing_the_splits_again_is_cheap_next_to_reading_the_files(results):
    _, files, _ = results
    c = cell(files)
    assert c.rederive_seconds < max(0.05, c.load_seconds)


def test_verify_names_the_first_link_that_breaks_and_says_what_it_could_not_check(results):
    from gssl.analysis.verify import verify_results

    r, files, other = results
    problems, counts, notes = verify_results(r)
    assert problems == [] and counts["cache files"] == 4
    assert any("no logging ledger" in n and "could not check" in n for n in notes), notes
    # a data file swapped breaks both links from it (without a ledger, its params are not known)
    for swapped, named in (("graph", ["graph"]), ("features", ["features"]), ("data", ["features", "splits"]),
                           ("splits", ["splits"])):
        shutil.copytree(r, r.with_name(f"r_{swapped}"))
        rr = r.with_name(f"r_{swapped}")
        target = Path(str(files[swapped]).replace(str(r), str(rr)))
        shutil.copy(other[swapped], target)
        problems = verify_results(rr)[0]
        want = [str(files[n]).replace(str(r), str(rr)) for n in named]
        assert [p.split(": ")[0] for p in problems] == want, (swapped, problems)
        assert all(f"--forcerun {w}" in p for w, p in zip(want, problems))


def test_verify_names_an_edited_split_drawn_again(results):
    from gssl.analysis.verify import verify_results
    from gssl.splits import load_splits, save_splits
    from gssl.store.h5io import read_attrs

    r, files, _ = results
    roles = load_splits(files["splits"]).copy()
    roles[0] = roles[0][::-1]
    attrs = read_attrs(files["splits"])
    save_splits(files["splits"], roles, params=attrs["params"], inputs=attrs["inputs"])
    problems = verify_results(r)[0]
    assert len(problems) == 1 and "its splits are not those protocol 'lpc2' draws" in problems[0], problems


def job_output(r: Path, files: dict) -> Path:
    from gssl.store.lineage import input_digests

    wc = {"experiment": "e", **CELL, "method": "rls"}
    out = Path(paths.path(r, paths.RUNS, first=0, last=2, suffix=".json", **wc))
    write_block(out, wc, {"solver": "rls"}, [{"split": 0, "metrics": {"error_unlabeled": 1.0}}], "code", {},
                inputs=input_digests(**{k: files[k] for k in ("features", "graph", "splits", "data")}))
    return out


def test_a_job_output_computed_from_other_files_is_named_and_the_logging_job_logs_nothing(results):
    from gssl.analysis.verify import verify_results
    from gssl.pipeline.logging_job import check_lineage, logging_job

    r, files, other = results
    out = job_output(r, files)
    assert [p for p in verify_results(r)[0] if "runs/" in p and "ledger" not in p] == []
    foreign = job_output(Path(str(other["data"]).rsplit("/data/", 1)[0]), other)  # the other folder's
    shutil.copy(foreign, out)
    problems = [p for p in verify_results(r)[0] if "in no experiment's logging ledger" not in p]
    assert len(problems) == 1 and problems[0].startswith(f"{out}: it was computed from a "), problems
    assert f"--forcerun {out}" in problems[0]
    inputs = SimpleNamespace(runs=[str(out)], grid_runs=[], pending=[], tables=[])
    with pytest.raises(CacheError, match="nothing was logged"):  # before any store is opened
        logging_job("sqlite:////nonexistent/dir/mlflow.db", "e", {}, ("m", "ASC"), inputs,
                    r / "mlflow" / "e.summary.json", {}, None)
    payload = json.loads(out.read_text())  # a job output of another cell: named by its place
    payload["dataset"] = "other"
    out.write_text(json.dumps(payload))
    with pytest.raises(CacheError, match="holds the runs of {'dataset': 'other'}"):
        check_lineage(r, [str(out)], {str(out): [payload]}, [])
