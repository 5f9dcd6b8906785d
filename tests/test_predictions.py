"""Predictions by name (issue 48, item 1): the dataset's ids, the table builders (each split's
predicted class, the confusion matrix and per-class error, protocol predict's unlabeled rows),
the predict protocol and its refusals before any job, and a solve job's predictions file."""

import copy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml

from gssl.analysis.predictions import (
    ABSTAINED,
    confusion,
    confusion_html,
    confusion_long,
    headline_points,
    per_class_error,
    predicted_names,
    split_predictions,
    unlabeled_predictions,
)
from gssl.datasets import read_file_dataset, select
from gssl.errors import ConfigError, SplitError
from gssl.splits import (
    LABELED,
    TEST,
    UNLABELED,
    UNSCORED,
    UNUSED,
    VALIDATION,
    make_splits,
    n_splits,
)

REPO = Path(__file__).resolve().parents[1]
CLASSES = np.asarray(["cat", "dog", "eel"])


# -- the dataset's ids --------------------------------------------------------------------------
def _csv(tmp_path, rows, header="name,x1,x2,label"):
    path = tmp_path / "d.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


ROWS = ["a7,1,2,cat", "b3,3,4,dog", "c1,5,6,", "d0,7,8,cat", "e5,9,1,dog", "f2,2,2,eel", "g9,0,1,eel"]


def test_a_tables_id_column_names_the_points_and_a_view_keeps_them(tmp_path):
    from gssl.datasets import load_dataset, save_dataset

    ds = read_file_dataset({"path": str(_csv(tmp_path, ROWS)), "label": "label", "id": "name"})
    assert ds.point_ids().tolist() == ["a7", "b3", "c1", "d0", "e5", "f2", "g9"] and ds.id_name == "name"
    assert ds.X.shape == (7, 2)  # the id column is no feature
    view = select(ds, classes=["eel", "cat"])
    assert view.point_ids().tolist() == ["a7", "c1", "d0", "f2", "g9"]  # the unlabeled row stays
    save_dataset(tmp_path / "d.h5", view, params={})
    back = load_dataset(tmp_path / "d.h5")
    assert back.point_ids().tolist() == view.point_ids().tolist() and back.id_name == "name"


def test_without_an_id_column_a_point_is_its_row_number_also_in_a_view(tmp_path):
    ds = read_file_dataset({"path": str(_csv(tmp_path, [r.split(",", 1)[1] for r in ROWS], "x1,x2,label")),
                            "label": "label"})
    assert ds.ids is None and ds.point_ids().tolist() == [str(i) for i in range(7)] and ds.id_name == "row"
    assert select(ds, classes=["dog", "eel"]).point_ids().tolist() == ["1", "2", "4", "5", "6"]  # the file's rows
    assert select(ds, classes=["cat", "dog", "eel"]).ids is None  # nothing dropped: still row numbers


# -- the table builders -------------------------------------------------------------------------
Y = np.asarray([0, 0, 1, 1, 2, 2, -1])
IDS = np.asarray([f"p{i}" for i in range(7)])
ROLES = np.asarray([[LABELED, UNLABELED, LABELED, UNLABELED, LABELED, UNLABELED, UNSCORED],
                    [UNLABELED, LABELED, UNLABELED, LABELED, TEST, LABELED, UNSCORED],
                    [LABELED, VALIDATION, LABELED, UNUSED, LABELED, UNLABELED, UNSCORED]], dtype=np.int8)


def test_predicted_names_are_class_names_clusters_or_abstained():
    assert predicted_names([2, 0, -1], CLASSES).tolist() == ["eel", "cat", ABSTAINED]
    assert predicted_names([1, -1], CLASSES, clusterer=True).tolist() == ["cluster 1", ABSTAINED]
    with pytest.raises(ValueError, match="out of range"):
        predicted_names([3], CLASSES)


def test_split_predictions_name_each_scored_point_by_id_and_class():
    pred = np.asarray([[9, 1, 9, 1, 9, 0, 9],   # 9: labeled or unscored, never shown
                       [1, 9, 1, 9, 2, 9, 9]])
    table = split_predictions(IDS, "id", CLASSES, Y, ROLES, [0, 1], pred)
    assert table.columns.tolist() == ["id", "true", "split_0", "split_1", "n_scored", "n_wrong"]
    assert table["id"].tolist() == ["p0", "p1", "p2", "p3", "p4", "p5"]  # p6 has no label: never scored
    assert table["true"].tolist() == ["cat", "cat", "dog", "dog", "eel", "eel"]
    assert table["split_0"].tolist() == ["", "dog", "", "dog", "", "cat"]
    assert table["split_1"].tolist() == ["dog", "", "dog", "", "eel", ""]
    assert table["n_scored"].tolist() == [1, 1, 1, 1, 1, 1]
    assert table["n_wrong"].tolist() == [1, 1, 0, 0, 0, 1]  # p0 (dog for cat), p1 (dog), p5 (cat)
    assert table["n_wrong"].sum() == 3
    with pytest.raises(ValueError, match="shape"):
        split_predictions(IDS, "id", CLASSES, Y, ROLES, [0, 1, 2], pred)


def test_the_confusion_counts_add_up_to_each_splits_headline_points():
    pred = np.asarray([[0, 1, 1, 1, 2, 0, 2],
                       [1, 0, 1, 1, 2, 2, 0],
                       [0, -1, 1, 0, 2, 2, 1]])
    mask = headline_points(ROLES)
    # split 1 has a test point: only it is scored there; validation points never are
    assert mask.sum(axis=1).tolist() == [3, 1, 1]
    counts = confusion(Y, ROLES, [0, 1, 2], pred, 3)
    assert counts.shape == (3, 4) and counts.sum() == mask.sum() == 5
    assert counts.sum(axis=1).tolist() == [1, 1, 3]  # per true class: p1; p3; p5 twice and p4
    assert counts[0].tolist() == [0, 1, 0, 0] and counts[1].tolist() == [0, 1, 0, 0]
    assert counts[2].tolist() == [1, 0, 2, 0]
    errors = per_class_error(counts, CLASSES)
    assert errors["class"].tolist() == ["cat", "dog", "eel"]
    assert errors["n"].tolist() == [1, 1, 3]
    assert errors["errors"].tolist() == [1, 0, 1]
    assert errors["error"].round(2).tolist() == [100.0, 0.0, 33.33]
    long = confusion_long({"method": "m"}, counts, CLASSES)
    assert long["count"].sum() == counts.sum() and set(long["predicted"]) == {"cat", "dog", "eel"}
    assert long.query("true == 'eel' and predicted == 'cat'")["count"].item() == 1


def test_a_method_that_abstains_counts_as_an_error_in_its_own_column():
    roles = np.asarray([[LABELED, UNLABELED, UNLABELED, LABELED]], dtype=np.int8)
    counts = confusion(np.asarray([0, 0, 1, 1]), roles, [0], np.asarray([[0, -1, 1, 1]]), 2)
    assert counts.tolist() == [[0, 0, 1], [0, 1, 0]]
    assert per_class_error(counts, ["a", "b"])["error"].tolist() == [100.0, 0.0]
    html = confusion_html([({"dataset": "d", "prep": "p", "graph": "g", "method": "m", "protocol": "q"},
                            counts, np.asarray(["a", "b<"]))], "exp", ["a note"])
    assert ABSTAINED in html and "b&lt;" in html and "a note" in html and html.isascii()
    assert '<td class="best">1</td>' in html  # b predicted b: the diagonal in bold


def test_a_class_never_scored_has_no_error_rate():
    counts = np.asarray([[2, 0, 0], [0, 0, 0]])
    assert np.isnan(per_class_error(counts, ["a", "b"])["error"][1])
    assert "&#8211;" in confusion_html([({k: k for k in ("dataset", "prep", "graph", "method", "protocol")},
                                         counts, ["a", "b"])], "e")


def test_unlabeled_predictions_name_every_row_without_a_label_and_its_scores():
    scores = np.arange(21, dtype=float).reshape(7, 3)
    table = unlabeled_predictions(IDS, "id", CLASSES, np.asarray([0, -1, 1, -1, 2, 2, -1]),
                                  np.asarray([0, 2, 1, 0, 2, 2, -1]), scores)
    assert table.columns.tolist() == ["id", "predicted", "score_cat", "score_dog", "score_eel"]
    assert table["id"].tolist() == ["p1", "p3", "p6"]
    assert table["predicted"].tolist() == ["eel", "cat", ABSTAINED]
    assert table["score_dog"].tolist() == [4.0, 10.0, 19.0]
    assert unlabeled_predictions(IDS, "id", CLASSES, Y, np.zeros(7, int)).columns.tolist() == ["id", "predicted"]
    with pytest.raises(ValueError, match="class scores"):
        unlabeled_predictions(IDS, "id", CLASSES, Y, np.zeros(7, int), scores[:, :2])


# -- protocol predict ---------------------------------------------------------------------------
def test_protocol_predict_labels_every_labeled_row_and_predicts_the_rest():
    roles = make_splits(Y, {"kind": "predict"}, "d", "all")
    assert n_splits({"kind": "predict"}) == 1
    assert roles.tolist() == [[LABELED] * 6 + [UNSCORED]]


@pytest.mark.parametrize("spec, y, message", [
    ({"kind": "predict"}, [0, 1, 0, 1], "has none (all 4 rows are labeled): leave the label cell empty"),
    ({"kind": "predict"}, [0, 0, -1], "at least 2 classes"),
    ({"kind": "predict", "repeats": 2}, [0, 1, -1], "unknown keys ['repeats']; allowed: none"),
    ({"kind": "predict", "holdout": {"fraction": 0.2, "part": "outside"}}, [0, 1, -1], "unknown keys ['holdout']"),
])
def test_protocol_predict_is_refused_where_it_has_nothing_to_predict(spec, y, message):
    with pytest.raises((SplitError, ConfigError)) as exc:
        make_splits(np.asarray(y), spec, "d", "all")
    assert message in str(exc.value)


SMALL = yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text())


def _config(tmp_path, rows, experiment_protocols=("lpc1", "all"), selection=None):
    cfg = copy.deepcopy(SMALL)
    path = _csv(tmp_path, rows)
    cfg["datasets"]["mine"] = {"source": "file", "path": str(path), "label": "label", "id": "name"}
    cfg["protocols"]["all"] = {"kind": "predict"}
    cfg["protocols"]["lpc1"] = {"kind": "labels_per_class", "n": 1, "repeats": 2}
    cfg["graphs"]["knn8"]["k"] = 2
    e = cfg["experiments"]["e2e"]
    e.update(datasets=["mine"], protocols=list(experiment_protocols))
    if selection:
        e["selection"] = selection
    return cfg


def test_a_config_with_protocol_predict_is_valid_on_a_file_with_empty_label_cells(tmp_path):
    from gssl.pipeline.config import validate_config
    from gssl.pipeline.plan import expected_headline, predict_cells, scored_solve_jobs

    cfg = validate_config(_config(tmp_path, ROWS))
    assert {j["protocol"] for j in scored_solve_jobs(cfg, "e2e")} == {"lpc1"}
    assert {c["protocol"] for c in predict_cells(cfg, "e2e")} == {"all"}
    assert expected_headline(cfg, "e2e")[0] == "error_unlabeled"


@pytest.mark.parametrize("edit, message", [
    (lambda c: c["experiments"]["e2e"].update(protocols=["all"]),
     "every protocol (all) is kind predict, which scores nothing; add a scoring protocol"),
    (lambda c: c["experiments"]["e2e"].update(datasets=["moons"]),
     "dataset 'moons' (source two_moons) labels every row"),
    (lambda c: c["experiments"]["e2e"].update(selection={"protocol": "all"}, methods=["rls"]) or
     c["methods"]["rls"].update(grid={"gamma_A": [0.1, 1.0]}),
     "selection protocol 'all' is kind predict"),
])
def test_protocol_predict_where_it_cannot_work_is_refused_before_any_job(tmp_path, edit, message):
    from gssl.pipeline.config import validate_config

    cfg = _config(tmp_path, ROWS)
    edit(cfg)
    with pytest.raises(ConfigError) as exc:
        validate_config(cfg)
    assert message in str(exc.value)


def test_protocol_predict_on_a_file_without_empty_label_cells_is_refused_before_any_job(tmp_path):
    from gssl.pipeline.config import validate_config

    with pytest.raises(ConfigError) as exc:
        validate_config(_config(tmp_path, [r + "cat" if r.endswith(",") else r for r in ROWS]))
    assert "protocol 'all' on dataset 'mine'" in str(exc.value) and "leave the label cell empty" in str(exc.value)


# -- a solve job's predictions, joined into a cell's ------------------------------------------
def test_job_predictions_are_joined_in_split_order_with_the_scores_of_protocol_predict(tmp_path):
    from gssl.analysis.predictions_job import read_job_predictions
    from gssl.pipeline.stages import write_predictions

    def result(split, scores=None):
        return {"split": split, "predictions": [split, -1, 1], "clusterer": False, "scores": scores}

    write_predictions(tmp_path / "b.npz", [result(2), result(3)])
    write_predictions(tmp_path / "a.npz", [result(0), result(1)])
    joined = read_job_predictions([tmp_path / "b.npz", tmp_path / "a.npz"])
    assert joined["splits"].tolist() == [0, 1, 2, 3] and "scores" not in joined
    assert joined["predictions"][:, 0].tolist() == [0, 1, 2, 3] and not joined["clusterer"]
    write_predictions(tmp_path / "p.npz", [result(0, np.ones((3, 2)))])
    assert read_job_predictions([tmp_path / "p.npz"])["scores"].shape == (1, 3, 2)


def test_the_predictions_job_writes_named_tables_and_the_confusion_page(tmp_path):
    """The job on a dataset, splits and job files written by the stages' own writers."""
    from gssl.analysis.predictions_job import predictions_job
    from gssl.datasets import save_dataset
    from gssl.pipeline import paths
    from gssl.pipeline.stages import write_predictions
    from gssl.splits import save_splits

    ds = read_file_dataset({"path": str(_csv(tmp_path, ROWS)), "label": "label", "id": "name"})
    save_dataset(tmp_path / "data.h5", ds, params={})
    roles = np.asarray([[LABELED, UNLABELED, UNLABELED, LABELED, UNLABELED, LABELED, UNLABELED]], dtype=np.int8)
    roles[:, 2] = UNSCORED  # c1 has no label
    save_splits(tmp_path / "lpc.h5", roles, params={})
    save_splits(tmp_path / "all.h5", make_splits(ds.y, {"kind": "predict"}, "mine", "all"), params={})
    write_predictions(tmp_path / "lpc.npz", [{"split": 0, "predictions": [0, 1, 0, 0, 2, 2, 1]}])
    write_predictions(tmp_path / "all.npz", [{"split": 0, "predictions": [0, 1, 2, 0, 1, 2, 2],
                                              "scores": np.eye(3)[[0, 1, 2, 0, 1, 2, 2]]}])
    keys = {"dataset": "mine", "prep": "std", "graph": "knn", "method": "m"}
    cells = [{**keys, "protocol": "lpc", "predict": False, "jobs": [tmp_path / "lpc.npz"],
              "data": str(tmp_path / "data.h5"), "splits": str(tmp_path / "lpc.h5")},
             {**keys, "protocol": "all", "predict": True, "jobs": [tmp_path / "all.npz"],
              "data": str(tmp_path / "data.h5"), "splits": str(tmp_path / "all.h5")}]
    out = SimpleNamespace(folder=paths.path(tmp_path / "res", paths.PREDICTIONS_FOLDER, experiment="e"),
                          csv=tmp_path / "t.confusion.csv", html=tmp_path / "t.confusion.html")
    predictions_job("e", cells, out, SimpleNamespace(info=lambda *a: None))
    scored = pd.read_csv(paths.path(tmp_path / "res", paths.PREDICTIONS, experiment="e", protocol="lpc", **keys))
    assert scored.to_dict("list") == {"name": ["b3", "e5", "g9"], "true": ["dog", "dog", "eel"],
                                      "split_0": ["dog", "eel", "dog"], "n_scored": [1, 1, 1], "n_wrong": [0, 1, 1]}
    unlabeled = pd.read_csv(paths.path(tmp_path / "res", paths.UNLABELED_PREDICTIONS, experiment="e",
                                       protocol="all", **keys))
    assert unlabeled.to_dict("list") == {"name": ["c1"], "predicted": ["eel"], "score_cat": [0.0],
                                         "score_dog": [0.0], "score_eel": [1.0]}
    long = pd.read_csv(out.csv)
    assert set(long["protocol"]) == {"lpc"} and long["count"].sum() == 3
    assert "protocol <code>lpc</code>" in out.html.read_text()
