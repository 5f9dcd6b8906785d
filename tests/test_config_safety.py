"""Configs that cannot run code or write outside the results (issue 51): YAML templating refused,
alias expansion bounded, the results folder kept in the working directory, and a tracking URI's
credentials never printed."""

from __future__ import annotations

import time

import pytest

from gssl.errors import ConfigError, TrackingError, mask_credentials
from gssl.pipeline.config import _check_results_folder
from gssl.pipeline.config_files import MAX_NODES, load_yaml

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def test_an_alias_bomb_is_refused_in_a_fraction_of_a_second_and_merge_keys_still_work(tmp_path):
    (tmp_path / "bomb.yaml").write_text(BOMB)
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match=f"its aliases expand to .* nodes \\(at most {MAX_NODES:,}\\)"):
        load_yaml(tmp_path / "bomb.yaml")
    assert time.perf_counter() - t0 < 1.0
    (tmp_path / "ok.yaml").write_text("base: &b {k: 1, x: [1, 2]}\nother: {<<: *b, k: 2}\nmore: [*b, *b]\n")
    assert load_yaml(tmp_path / "ok.yaml")["other"] == {"k": 2, "x": [1, 2]}
    (tmp_path / "self.yaml").write_text("a: &a [1, *a]\n")
    with pytest.raises(ConfigError, match="self.yaml"):
        load_yaml(tmp_path / "self.yaml")


def test_yaml_templating_is_refused_before_anything_runs(tmp_path):
    (tmp_path / "yte.yaml").write_text("__use_yte__: true\n?if True:\n  seed: 3\n")
    with pytest.raises(ConfigError, match="__use_yte__ turns on YAML templating"):
        load_yaml(tmp_path / "yte.yaml")


@pytest.mark.parametrize("results, message", [
    ("", "is empty"), ("  ", "is empty"), ("/", "filesystem root"), (".", "working directory itself"),
    ("a/..", "working directory itself"), ("..", "outside the working directory"),
    ("/tmp/elsewhere", "outside the working directory"), ("../x", "outside the working directory")])
def test_results_outside_the_working_directory_is_refused_unless_allowed(tmp_path, monkeypatch, results, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=message):
        _check_results_folder(results)
    if message == "outside the working directory":
        _check_results_folder(results, outside_allowed=True)  # the flag lets it
    else:
        with pytest.raises(ConfigError, match=message):
            _check_results_folder(results, outside_allowed=True)  # never these
    _check_results_folder("results")
    _check_results_folder("results/sub/../other")


def test_a_tracking_uris_credentials_are_never_shown():
    assert mask_credentials("cannot reach http://alice:s3cret@db.example:5000/x") == \
        "cannot reach http://***@db.example:5000/x"
    assert mask_credentials("postgresql://u:p@h/db and https://tok@h2") == "postgresql://***@h/db and https://***@h2"
    assert mask_credentials("sqlite:///results/mlflow.db, http://127.0.0.1:5000") == \
        "sqlite:///results/mlflow.db, http://127.0.0.1:5000"
    assert "s3cret" not in str(TrackingError("server http://alice:s3cret@h:1 did not answer"))


def test_a_tracking_store_error_does_not_print_the_uris_password(tmp_path):
    from gssl.tracking.client import init_store

    with pytest.raises(TrackingError) as err:
        init_store("postgresql://alice:s3cret@127.0.0.1:1/mlflow", ["e"], results_dir=tmp_path)
    assert "s3cret" not in str(err.value) and "***@127.0.0.1:1" in str(err.value)
