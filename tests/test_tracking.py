import json

import pytest

from gssl.tracking import (SUPERSEDED_TAG, TrackingError, default_tracking_uri, flatten, init_store,
                           log_run, read_sentinel, summarize)


@pytest.fixture()
def store(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    ids = init_store(uri, ["exp_a", "exp_b"], results_dir=tmp_path)
    return uri, ids


def _client(uri):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=uri)


def test_default_uri_is_absolute_sqlite_and_env_wins(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert default_tracking_uri(tmp_path / "results") == f"sqlite:///{tmp_path / 'results' / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5999")
    assert default_tracking_uri("results") == "http://127.0.0.1:5999"


def test_init_is_idempotent(store, tmp_path):
    uri, ids = store
    assert init_store(uri, ["exp_a", "exp_b"], results_dir=tmp_path) == ids
    assert len(set(ids.values())) == 2


def test_log_run_files_everything_under_the_given_experiment(store):
    uri, ids = store
    rid = log_run(uri, ids["exp_b"], "digits/l2/knn/rls/lpc1/0", {"gssl.method": "rls"},
                  {"method": {"solver": "rls", "params": {"gamma_A": 0.01, "kernel": {"sigma": 0.5}}}},
                  {"error_unlabeled": 12.5, "bad": float("nan")},
                  history=[{"objective": 3.0}, {"objective": 2.0}],
                  artifacts={"predictions.json": {"predictions": [0, 1]}})
    run = _client(uri).get_run(rid)
    assert run.info.experiment_id == ids["exp_b"] and run.info.status == "FINISHED"
    assert run.data.params["method.params.kernel.sigma"] == "0.5"
    assert run.data.metrics == {"error_unlabeled": 12.5, "history.objective": 2.0}
    hist = _client(uri).get_metric_history(rid, "history.objective")
    assert [m.value for m in sorted(hist, key=lambda m: m.step)] == [3.0, 2.0]
    arts = {a.path for a in _client(uri).list_artifacts(rid)}
    assert arts == {"history.json", "predictions.json"}
    default = _client(uri).get_experiment_by_name("Default")
    assert default is None or not _client(uri).search_runs([default.experiment_id])


def test_failed_logging_marks_run_failed(store, monkeypatch):
    import mlflow.tracking

    uri, ids = store

    def broken(self, *a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(mlflow.tracking.MlflowClient, "log_dict", broken)
    with pytest.raises(OSError, match="disk full"):
        log_run(uri, ids["exp_a"], "x", {}, {}, {}, artifacts={"bad.json": {"x": 1}})
    runs = _client(uri).search_runs([ids["exp_a"]])
    assert [r.info.status for r in runs] == ["FAILED"]


def test_summary_parents_current_and_supersedes_old(store, tmp_path):
    uri, ids = store
    eid = ids["exp_a"]
    old = log_run(uri, eid, "old", {}, {}, {"e": 1.0})
    new = [log_run(uri, eid, f"new{i}", {}, {}, {"e": 1.0}) for i in range(3)]
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n")
    s1 = summarize(uri, eid, "exp_a", new, [table])
    c = _client(uri)
    for rid in new:
        tags = c.get_run(rid).data.tags
        assert tags["mlflow.parentRunId"] == s1 and tags[SUPERSEDED_TAG] == "false"
    assert c.get_run(old).data.tags[SUPERSEDED_TAG] == "true"
    assert [a.path for a in c.list_artifacts(s1)] == ["t.csv"]
    s2 = summarize(uri, eid, "exp_a", new, [table])
    assert c.get_run(s1).data.tags[SUPERSEDED_TAG] == "true"
    assert c.get_run(new[0]).data.tags["mlflow.parentRunId"] == s2


def test_summary_refuses_runs_from_another_store(store):
    uri, ids = store
    with pytest.raises(TrackingError, match="not in experiment"):
        summarize(uri, ids["exp_a"], "exp_a", ["0" * 32], [])


def test_sentinel_checks_uri_and_name(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"experiment": "e", "experiment_id": "7", "tracking_uri": "sqlite:///a"}))
    assert read_sentinel(p, "e", "sqlite:///a") == "7"
    with pytest.raises(TrackingError, match="forcerun mlflow_experiment"):
        read_sentinel(p, "e", "sqlite:///b")


def test_flatten():
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "d": "x", "e": {}}) == {
        "a.b": "1", "a.c": "[1,2]", "d": "x", "e": "{}"}
