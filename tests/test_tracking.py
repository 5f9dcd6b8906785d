import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from gssl.errors import TrackingError
from gssl.tracking.records import (INDEX_TAG, KIND_TAG, RECORD_TAG, SUPERSEDED_TAG, read_pending, run_tree,
                                   write_pending)
from gssl.tracking.client import (default_tracking_uri, flatten, init_store, log_cell, log_pending, log_run,
                                  summarize)


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
                  artifacts={"result.json": {"predictions": [0, 1]}})
    run = _client(uri).get_run(rid)
    assert run.info.experiment_id == ids["exp_b"] and run.info.status == "FINISHED"
    assert run.data.params["method.params.kernel.sigma"] == "0.5"
    assert run.data.metrics == {"error_unlabeled": 12.5, "history.objective": 2.0}
    hist = _client(uri).get_metric_history(rid, "history.objective")
    assert [m.value for m in sorted(hist, key=lambda m: m.step)] == [3.0, 2.0]
    arts = {a.path for a in _client(uri).list_artifacts(rid)}
    assert arts == {"result.json"}  # one small file per run: one artifact write
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


def _spec(name, **metrics):
    return {"name": name, "tags": {"gssl.method": "rls"}, "params": {"gamma": 1}, "metrics": metrics}


def test_log_cell_nests_split_runs_under_the_cell_run(store):
    uri, ids = store
    parent, children = log_cell(uri, ids["exp_a"], _spec("cell", error_unlabeled_mean=2.0),
                                [_spec(f"split {i}", error_unlabeled=float(i)) for i in range(3)])
    c = _client(uri)
    assert c.get_run(parent).data.tags.get("mlflow.parentRunId") is None
    for i, rid in enumerate(children):
        run = c.get_run(rid)
        assert run.data.tags["mlflow.parentRunId"] == parent
        assert run.data.tags[SUPERSEDED_TAG] == "false" and run.info.status == "FINISHED"
        assert run.data.metrics == {"error_unlabeled": float(i)}
        assert run.info.experiment_id == ids["exp_a"]


def test_summary_supersedes_what_is_not_current(store, tmp_path):
    uri, ids = store
    eid = ids["exp_a"]
    old = log_run(uri, eid, "old", {}, {}, {"e": 1.0})
    parent, new = log_cell(uri, eid, _spec("cell"), [_spec(f"new{i}", e=1.0) for i in range(3)])
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n")
    s1 = summarize(uri, eid, "exp_a", [parent, *new], [table])
    c = _client(uri)
    for rid in [parent, *new, s1]:
        assert c.get_run(rid).data.tags[SUPERSEDED_TAG] == "false"
    assert c.get_run(new[0]).data.tags["mlflow.parentRunId"] == parent  # the tree is kept
    assert c.get_run(s1).data.tags[KIND_TAG] == "summary"
    assert c.get_run(old).data.tags[SUPERSEDED_TAG] == "true"
    assert [a.path for a in c.list_artifacts(s1)] == ["t.csv"]
    s2 = summarize(uri, eid, "exp_a", [parent, *new], [table])
    assert c.get_run(s1).data.tags[SUPERSEDED_TAG] == "true"
    assert c.get_run(s2).data.tags[SUPERSEDED_TAG] == "false"
    assert c.get_run(new[0]).data.tags[SUPERSEDED_TAG] == "false"


def test_summary_creates_cell_runs_over_several_blocks(store, tmp_path):
    uri, ids = store
    eid = ids["exp_a"]
    blocks = [log_cell(uri, eid, _spec(f"block{b}"), [_spec(f"s{b}{i}") for i in range(2)])
              for b in range(2)]
    current = [rid for p, kids in blocks for rid in (p, *kids)]
    cell = {**_spec("cell", error_unlabeled_mean=1.5), "children": [p for p, _ in blocks]}
    summarize(uri, eid, "exp_a", current, [], cells=[cell])
    c = _client(uri)
    cell_runs = [r for r in c.search_runs([eid]) if r.info.run_name == "cell"]
    assert len(cell_runs) == 1 and cell_runs[0].data.tags[SUPERSEDED_TAG] == "false"
    cid = cell_runs[0].info.run_id
    assert {c.get_run(p).data.tags["mlflow.parentRunId"] for p, _ in blocks} == {cid}
    assert c.get_run(blocks[1][1][0]).data.tags["mlflow.parentRunId"] == blocks[1][0]


def _pending(tmp_path, name, n_children=3, error=1.0):
    path = tmp_path / f"{name}.mlflow.json.gz"
    when = {"start_time": 1_700_000_000_000, "end_time": 1_700_000_005_000}  # the job's, not the logger's
    write_pending(path, [run_tree({**_spec(f"{name} cell", error_unlabeled_mean=error), **when},
                                  [_spec(f"{name} split {i}", error_unlabeled=error + i)
                                   for i in range(n_children)]),
                         run_tree(_spec(f"{name} grid point"))])
    return path


def test_pending_runs_round_trip_and_refuse_a_truncated_file(tmp_path):
    path = _pending(tmp_path, "a")
    trees = read_pending(path)
    assert [t["run"]["name"] for t in trees] == ["a cell", "a grid point"]
    assert [c["metrics"]["error_unlabeled"] for c in trees[0]["children"]] == [1.0, 2.0, 3.0]
    assert not list(tmp_path.glob(".*.tmp"))  # written atomically
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(TrackingError, match="not a complete pending-runs file.*rerun-incomplete"):
        read_pending(path)


def test_log_pending_logs_each_tree_once_in_its_place(store, tmp_path):
    uri, ids = store
    eid = ids["exp_a"]
    a, b = _pending(tmp_path, "a"), _pending(tmp_path, "b", n_children=2, error=5.0)
    first = log_pending(uri, eid, [a, b])
    assert [t["logged"] for p in (a, b) for t in first[str(p)]] == [True] * 4
    c = _client(uri)
    cell, kids = first[str(a)][0]["run"], first[str(a)][0]["children"]
    assert c.get_run(cell).info.status == "FINISHED" and c.get_run(cell).info.experiment_id == eid
    assert (c.get_run(cell).info.start_time, c.get_run(cell).info.end_time) == (1_700_000_000_000,
                                                                               1_700_000_005_000)
    assert [c.get_run(k).data.metrics["error_unlabeled"] for k in kids] == [1.0, 2.0, 3.0]
    assert {c.get_run(k).data.tags["mlflow.parentRunId"] for k in kids} == {cell}
    assert [c.get_run(k).data.tags[INDEX_TAG] for k in kids] == ["0", "1", "2"]
    assert c.get_run(cell).data.tags[RECORD_TAG].endswith(":0")
    n_runs = len(c.search_runs([eid]))
    assert n_runs == (1 + 3 + 1) + (1 + 2 + 1)
    # the logging job reruns (another cell changed): nothing logged twice, the same ids come back
    b2 = _pending(tmp_path, "b", n_children=2, error=6.0)  # b's job reran: its runs are new
    second = log_pending(uri, eid, [a, b2])
    assert second[str(a)] == [dict(t, logged=False) for t in first[str(a)]]
    assert [t["logged"] for t in second[str(b2)]] == [True, True]
    assert len(c.search_runs([eid])) == n_runs + 4


def test_log_pending_relogs_a_tree_a_killed_logger_left_unfinished(store, tmp_path, monkeypatch):
    import mlflow.tracking

    uri, ids = store
    eid = ids["exp_a"]
    a = _pending(tmp_path, "a")
    real = mlflow.tracking.MlflowClient.log_batch
    calls = []

    def dies_on_the_third_run(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the logger is killed while it logs the second split
        return real(self, *args, **kwargs)

    monkeypatch.setattr(mlflow.tracking.MlflowClient, "log_batch", dies_on_the_third_run)
    with pytest.raises(KeyboardInterrupt):
        log_pending(uri, eid, [a])
    monkeypatch.setattr(mlflow.tracking.MlflowClient, "log_batch", real)
    c = _client(uri)
    assert sorted(r.info.status for r in c.search_runs([eid])) == ["FAILED", "FAILED", "FINISHED"]
    done = log_pending(uri, eid, [a])[str(a)]
    assert [t["logged"] for t in done] == [True, True]
    current = [rid for t in done for rid in (t["run"], *t["children"])]
    summarize(uri, eid, "exp_a", current, [])
    for r in c.search_runs([eid]):
        current_run = r.info.run_id in current or r.data.tags.get(KIND_TAG) == "summary"
        assert r.data.tags[SUPERSEDED_TAG] == ("false" if current_run else "true")
        assert r.info.status in (("FINISHED",) if current_run else ("FAILED", "FINISHED"))


def test_log_pending_retries_a_locked_store_and_gives_up_with_its_error(store, tmp_path, monkeypatch):
    import mlflow.tracking
    import sqlalchemy.exc

    import gssl.tracking.client

    uri, ids = store
    eid = ids["exp_a"]
    a = _pending(tmp_path, "a")
    real = mlflow.tracking.MlflowClient.log_batch
    fails = {"left": 2}

    def locked_twice(self, *args, **kwargs):
        if fails["left"]:
            fails["left"] -= 1
            raise sqlalchemy.exc.OperationalError("INSERT", {}, Exception("database is locked"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(gssl.tracking.client.time, "sleep", lambda s: None)
    monkeypatch.setattr(mlflow.tracking.MlflowClient, "log_batch", locked_twice)
    done = log_pending(uri, eid, [a])[str(a)]
    c = _client(uri)
    assert c.get_run(done[0]["run"]).info.status == "FINISHED" and len(done[0]["children"]) == 3
    assert sorted(r.info.status for r in c.search_runs([eid])).count("FAILED") == 2  # the attempts
    fails["left"] = 10 ** 6  # locked for good: the error, after LOCK_RETRIES attempts
    with pytest.raises(Exception, match="database is locked"):
        log_pending(uri, eid, [_pending(tmp_path, "b")])
    assert fails["left"] == 10 ** 6 - gssl.tracking.client.LOCK_RETRIES


def _init_in_child(uri, results_dir, queue):
    try:
        queue.put(init_store(uri, ["exp_a", "exp_b"], results_dir=results_dir))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        queue.put(repr(exc))


@pytest.mark.slow
def test_concurrent_initialisers_on_a_fresh_store_all_succeed(tmp_path):
    """8 processes initialise a new sqlite store at once, 6 times over: every one succeeds and all
    agree on the experiment ids (without the lock, most of them fail in schema creation, in every
    round: a few rounds catch it)."""
    import mlflow.store.tracking.sqlalchemy_store  # noqa: F401 - imported once, before forking

    ctx = multiprocessing.get_context("fork")
    for round_ in range(6):
        folder = tmp_path / f"r{round_}"
        uri = f"sqlite:///{folder / 'mlflow.db'}"
        queue = ctx.Queue()
        procs = [ctx.Process(target=_init_in_child, args=(uri, folder, queue)) for _ in range(8)]
        for p in procs:
            p.start()
        results = [queue.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=60)
        failures = [r for r in results if not isinstance(r, dict)]
        assert not failures, f"round {round_}: {len(failures)} of 8 failed, e.g. {failures[0]}"
        assert len({tuple(sorted(r.items())) for r in results}) == 1


def test_init_error_hint_names_the_real_cause(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    db = tmp_path / "mlflow.db"
    db.write_bytes(b"this is not a sqlite database" * 100)
    with pytest.raises(TrackingError) as err:
        init_store(f"sqlite:///{db}", ["e"], results_dir=tmp_path)
    assert "move it away" in str(err.value) and "MLFLOW_TRACKING_URI" not in str(err.value)


def test_summary_refuses_runs_from_another_store(store):
    uri, ids = store
    with pytest.raises(TrackingError, match="not in experiment"):
        summarize(uri, ids["exp_a"], "exp_a", ["0" * 32], [])


def test_flatten():
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "d": "x", "e": {}}) == {
        "a.b": "1", "a.c": "[1,2]", "d": "x", "e": "{}"}


def test_experiments_carry_the_kind_and_the_saved_views(tmp_path):
    from gssl.tracking.views import CELL_VIEW, HISTORY_VIEW, VIEW_TAG, ui_link

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    ids = init_store(uri, ["clu"], results_dir=tmp_path, descriptions={"clu": "A clustering run."},
                     headlines={"clu": ("purity", False)})
    tags = _client(uri).get_experiment(ids["clu"]).tags
    assert tags["mlflow.experimentKind"] == "custom_model_development"
    assert tags["mlflow.note.content"] == "A clustering run."
    view = json.loads(tags[VIEW_TAG + CELL_VIEW])
    state = json.loads(view["state"])
    assert view["name"] == "gssl: compare cells"
    assert "`gssl.kind` = 'cell'" in state["searchFilter"] and "'false'" in state["searchFilter"]
    assert state["orderByKey"] == "metrics.`purity_mean`" and state["orderByAsc"] is False
    assert "metrics.`purity_sem`" in state["selectedColumns"]
    assert state["groupBy"]["aggregateFunction"] == "max"  # a protocol's row: its best cell
    history = json.loads(json.loads(tags[VIEW_TAG + HISTORY_VIEW])["state"])
    assert history["searchFilter"] == "tags.`gssl.kind` = 'cell'"  # the superseded runs too
    assert history["orderByKey"] == "attributes.start_time" and history["orderByAsc"] is False
    assert "tags.`gssl.superseded`" in history["selectedColumns"]
    assert ui_link(ids["clu"]).endswith(f"/#/experiments/{ids['clu']}/runs?workflowType="
                                        f"machine_learning&viewStateShareKey={CELL_VIEW}")


def test_mlflow_telemetry_is_off_unless_the_user_turns_it_on():
    import subprocess
    import sys

    probe = ("import os, gssl.tracking.client, mlflow.telemetry.utils as t; "
             "print(os.environ['MLFLOW_DISABLE_TELEMETRY'], t.is_telemetry_disabled())")
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_DISABLE_TELEMETRY", "DO_NOT_TRACK")}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["true", "True"]
    env["MLFLOW_DISABLE_TELEMETRY"] = "false"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "false"


def test_a_dead_tracking_server_is_reported_in_seconds(tmp_path):
    """Nothing listens on the port: init fails with the store named and a hint, in seconds (MLflow's
    defaults retry for about five minutes)."""
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: connections are refused
    probe = (f"from gssl.tracking.client import init_store\n"
             f"init_store('http://127.0.0.1:{port}', ['x'], results_dir={str(tmp_path)!r})\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_HTTP")}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    assert out.returncode != 0 and "cannot initialise MLflow store 'http://127.0.0.1" in out.stderr
    assert elapsed < 30, f"took {elapsed:.0f} s (bound: GSSL_MLFLOW_TIMEOUT's default, 30 s)"


def test_gssl_mlflow_timeout_is_derived_per_process_and_user_values_win():
    """A job derives MLflow's HTTP settings from its own GSSL_MLFLOW_TIMEOUT even when its parent
    (the Snakemake process) set them from another value; values the user set are left alone."""
    import subprocess
    import sys

    from gssl.tracking.client import http_budget

    probe = ("import os, gssl.tracking.client; print(os.environ['MLFLOW_HTTP_REQUEST_TIMEOUT'], "
             "os.environ['MLFLOW_HTTP_REQUEST_MAX_RETRIES'])")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_HTTP", "_GSSL_MLFLOW", "GSSL_MLFLOW"))}
    parent = {**base, **http_budget(30), "_GSSL_MLFLOW_HTTP": ",".join(sorted(http_budget(30)))}
    child = subprocess.run([sys.executable, "-c", probe], env={**parent, "GSSL_MLFLOW_TIMEOUT": "14"},
                           capture_output=True, text=True, check=True).stdout.split()
    assert child == [http_budget(14)["MLFLOW_HTTP_REQUEST_TIMEOUT"], "2"] == ["3", "2"]
    user = subprocess.run([sys.executable, "-c", probe],
                          env={**base, "MLFLOW_HTTP_REQUEST_TIMEOUT": "99", "GSSL_MLFLOW_TIMEOUT": "14"},
                          capture_output=True, text=True, check=True).stdout.split()
    assert user == ["99", "2"]
    with pytest.raises(ValueError, match=">= 10"):
        http_budget(5)


# ----------------------------------------------------------------------------- issue #33
def _overwrite(path, offset, data=b"\x00" * 8):
    """Bytes overwritten in place, the file's mtime kept (Snakemake sees nothing)."""
    st = path.stat()
    raw = bytearray(path.read_bytes())
    raw[offset:offset + len(data)] = data
    path.write_bytes(bytes(raw))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_pending_file_with_bytes_overwritten_or_edited_is_refused_by_name(tmp_path):
    import gzip

    from gssl.tracking.records import read_pending_file, trees_sha256

    path = _pending(tmp_path, "a")
    sha, trees = read_pending_file(path)
    assert json.loads(gzip.decompress(path.read_bytes()))["trees_sha256"] == trees_sha256(trees)
    intact = path.read_bytes()
    accepted = []
    for offset in range(10, len(intact) - 8, 7):  # past the gzip header (its mtime field changes nothing)
        path.write_bytes(intact)
        _overwrite(path, offset)
        try:
            read_pending(path)
            accepted.append(offset)
        except TrackingError as exc:
            assert str(path) in str(exc) and "rerun" in str(exc)
    assert accepted == []
    payload = json.loads(gzip.decompress(intact))  # a valid file whose runs were edited
    payload["trees"][0]["children"][0]["metrics"]["error_unlabeled"] = 0.0
    path.write_bytes(gzip.compress(json.dumps(payload).encode()))
    with pytest.raises(TrackingError, match=f"{path}: its runs do not match the sha256 they were written with"):
        read_pending(path)
    del payload["trees_sha256"]  # a file of a writer before the checksum: read as it is
    path.write_bytes(gzip.compress(json.dumps(payload).encode()))
    assert read_pending(path)[0]["children"][0]["metrics"]["error_unlabeled"] == 0.0


def test_log_pending_refuses_a_corrupt_pending_file_by_name_and_logs_nothing(store, tmp_path):
    from gssl.store.hashing import file_sha256

    uri, ids = store
    a, b = _pending(tmp_path, "a"), _pending(tmp_path, "b")
    _overwrite(b, b.stat().st_size // 2)
    with pytest.raises(TrackingError, match=f"{b}"):
        log_pending(uri, ids["exp_a"], [a, b])
    assert _client(uri).search_runs([ids["exp_a"]]) == []  # every file is read before any run is logged
    b = _pending(tmp_path, "b")
    digests = {}
    log_pending(uri, ids["exp_a"], [a, b], digests=digests)
    assert digests == {str(a): file_sha256(a), str(b): file_sha256(b)}  # what the ledger records


def test_a_server_that_stops_answering_is_not_called_again_and_is_named(store, tmp_path, monkeypatch):
    """After a call found the server gone (MLflow spent the call's budget on it), the failure
    handlers do not call it again to mark runs FAILED (each such call would wait out another
    budget); the error names the store. The runs left RUNNING are KILLED and superseded by the
    next logging job."""
    import mlflow.tracking
    import requests

    from gssl.tracking.client import unreachable

    uri, ids = store
    calls = []
    real_terminated = mlflow.tracking.MlflowClient.set_terminated

    def gone(self, *args, **kwargs):
        raise requests.exceptions.ConnectionError("Connection refused")

    def terminated(self, run_id, status="FINISHED", *args, **kwargs):
        calls.append(status)
        return real_terminated(self, run_id, status, *args, **kwargs)

    monkeypatch.setattr(mlflow.tracking.MlflowClient, "log_batch", gone)
    monkeypatch.setattr(mlflow.tracking.MlflowClient, "set_terminated", terminated)
    path = _pending(tmp_path, "a")
    with pytest.raises(TrackingError, match=f"the tracking server {uri} did not answer while logging") as exc:
        log_pending(uri, ids["exp_a"], [path])
    assert unreachable(exc.value) and calls == []
    runs = _client(uri).search_runs([ids["exp_a"]])
    assert [r.info.status for r in runs] == ["RUNNING"]
    monkeypatch.undo()
    logged = log_pending(uri, ids["exp_a"], [path])  # the server back: the tree is logged anew
    summarize(uri, ids["exp_a"], "exp_a", [rid for t in logged[str(path)] for rid in (t["run"], *t["children"])], [])
    left = [r for r in _client(uri).search_runs([ids["exp_a"]]) if r.info.run_id == runs[0].info.run_id]
    assert left[0].info.status == "KILLED" and left[0].data.tags[SUPERSEDED_TAG] == "true"


def test_split_runs_are_tagged_converged_and_cell_runs_count_the_others(store, tmp_path):
    """Issue 32: a solve job's split runs carry gssl.converged ("true" / "false"; none where the
    solver does not say) and its cell run the number and share of splits that did not converge."""
    from gssl.tracking.job_runs import JobRuns

    uri, ids = store
    runs = JobRuns({"experiment": "exp_a", "dataset": "d", "prep": "p", "graph": "g", "method": "m",
                    "protocol": "lpc1"}, [0, 1, 2], True, "solve", "evaluation", "abc",
                   str(tmp_path / "out.json"), {}, {"graph": {}, "preprocessing": {}, "protocol": {},
                                                    "seed": 0})
    results = [{"split": i, "method": {"solver": "tv_rls"}, "chosen": None, "history": [],
                "predictions": [0], "stop_reason": "max_iter", "converged": c,
                "metrics": {"error_unlabeled": 1.0, "converged": float(bool(c)), "fit_seconds": 0.1}}
               for i, c in enumerate([True, False, None])]
    results[2]["metrics"].pop("converged")
    tree = runs.evaluation({"solver": "tv_rls"}, results, {})
    assert tree["run"]["metrics"]["n_not_converged"] == 1.0
    assert tree["run"]["metrics"]["not_converged_share"] == 0.5       # of the splits that say
    parent, children = log_cell(uri, ids["exp_a"], tree["run"], tree["children"])
    c = _client(uri)
    tags = [c.get_run(rid).data.tags.get("gssl.converged") for rid in children]
    assert tags == ["true", "false", None]
    assert c.get_run(parent).data.metrics["n_not_converged"] == 1.0


def test_a_select_job_builds_its_run_with_job_runs(tmp_path):
    """The selection stage's run: the select job's tags, its name and this job's start and end."""
    from gssl.tracking.job_runs import JobRuns
    from gssl.tracking.records import KIND_TAG

    wc = {"experiment": "e", "dataset": "d", "prep": "p", "graph": "g", "method": "m"}
    runs = JobRuns(wc, [], True, "select", "selection", "abc", str(tmp_path / "m.json"), {}, {})
    tree = runs.selection("holdout", True, params={"chosen": "{}"}, metrics={"n_grid_points": 3},
                          files=["grid.csv"])
    run = tree["run"]
    assert run["name"] == "select · m · d/p/g"
    assert run["tags"] == {"gssl.experiment": "e", "gssl.dataset": "d", "gssl.prep": "p", "gssl.graph": "g",
                           "gssl.method": "m", KIND_TAG: "selection", "gssl.protocol": "holdout",
                           "gssl.rule": "select", "gssl.scored_points": "true", "gssl.code_hash": "abc"}
    assert run["start_time"] == runs.start_ms <= run["end_time"]
    assert tree["children"] == []


def test_cell_runs_group_the_blocks_of_a_cell_solved_in_several_jobs():
    """The logging job's parent run of a cell whose splits ran in two jobs; a one-job cell has none."""
    from gssl.pipeline.plan import CELL_KEYS
    from gssl.pipeline.logging_job import cell_runs

    def block(split, error):
        return {"method_params": {"solver": "tv_rls"}, "splits": [{"split": split, "metrics": {"error_unlabeled": error}}]}

    key = tuple(f"x{i}" for i in range(len(CELL_KEYS))) + (None,)
    alone = tuple(f"y{i}" for i in range(len(CELL_KEYS))) + ("v1",)
    cells = cell_runs("e", {key: [(block(0, 0.1), "r0"), (block(1, 0.3), "r1")], alone: [(block(0, 0.2), "r2")]})
    assert len(cells) == 1
    cell = cells[0]
    assert cell["children"] == ["r0", "r1"] and cell["tags"]["gssl.kind"] == "cell"
    assert cell["tags"]["gssl.experiment"] == "e" and cell["tags"]["gssl.solver"] == "tv_rls"
    assert cell["metrics"]["error_unlabeled_mean"] == pytest.approx(0.2)
    assert cell["files"] == []
    assert cell_runs("e", {key: [(block(0, 0.1), "r0"), (block(1, 0.3), "r1")]}, {key: ["p.csv"]})[0]["files"] == ["p.csv"]


def test_a_cells_predictions_table_is_found_for_its_run_and_a_grid_point_has_none(tmp_path):
    from gssl.pipeline import paths
    from gssl.pipeline.logging_job import cell_predictions
    from gssl.pipeline.plan import CELL_KEYS

    cell = dict(zip(CELL_KEYS, ("d", "p", "g", "m", "all")))
    assert cell_predictions(tmp_path, "e", (*cell.values(), None)) == []  # not written (yet)
    table = Path(paths.path(tmp_path, paths.UNLABELED_PREDICTIONS, experiment="e", **cell))
    table.parent.mkdir(parents=True)
    table.write_text("id,predicted\n")
    assert cell_predictions(tmp_path, "e", (*cell.values(), None)) == [str(table)]
    assert cell_predictions(tmp_path, "e", (*cell.values(), "g1234")) == []


def test_a_paper_config_s_summary_run_logs_its_entry_without_the_reference(store):
    """A reproduction config's reference (the paper's values, reasons keyed by patterns such as
    ``sparse_lp/*``, no MLflow parameter name) stays out of the summary run's params: the
    logging job's summary of such an experiment used to fail."""
    from gssl.pipeline.logging_job import run_parameters

    uri, ids = store
    entry = {"methods": ["poisson", "sparse_lp"], "protocols": ["lpc1"],
             "reference": {"reasons": {"sparse_lp/*": "at-chance", "[!m]*/*": "ours"},
                           "values": {"poisson": {"lpc1": 39.2}}}}
    sid = summarize(uri, ids["exp_a"], "exp_a", [], [], params={"experiment": run_parameters(entry)})
    params = _client(uri).get_run(sid).data.params
    assert "experiment.methods" in params and "experiment.protocols" in params
    assert not [k for k in params if k.startswith("experiment.reference")]
