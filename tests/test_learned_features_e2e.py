"""Learned features through the workflow: a chain with a (tiny) VAE beside a plain one. Its
network is trained once, kept in the features file, its loss curve plotted for the report and
logged to MLflow as a run the cells link to; a changed VAE parameter or VAE code reruns that
chain and what depends on it, and nothing of the other chain."""

from __future__ import annotations

import json
import sqlite3

import h5py
import pytest

from workflow_helpers import (N_JOBS, SMALL, edited, mlflow_runs, planned_jobs, ran_workspace,
                              rules_of, write_config)

pytestmark = pytest.mark.e2e

VAE = {"hidden": [8], "latent": 2, "epochs": 3, "batch_size": 32, "reconstruction": "mse",
       "input_scale": "none"}


def _config(**vae) -> dict:
    cfg = json.loads(json.dumps(SMALL))
    cfg["preprocessing"]["vae"] = ["standardize", {"vae": {**VAE, **vae}}]
    cfg["experiments"]["e2e"]["preprocessing"] = ["std", "vae"]
    return cfg


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    return ran_workspace(tmp_path_factory, "learned", _config())


def test_the_network_its_losses_and_its_plot_are_kept(done):
    res = done / "results"
    with h5py.File(res / "features" / "moons" / "vae.h5") as fh:
        assert fh["X"].shape == (160, 2)
        assert fh["step1.vae.losses"].shape == (3,)
        assert fh["step1.vae.weights.encoder.0.weight"].shape == (8, 10)
    with h5py.File(res / "features" / "moons" / "std.h5") as fh:
        assert not [k for k in fh if k.startswith("step")]
    assert (res / "plots" / "learned" / "moons" / "vae.loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    log = (res / "logs" / "features" / "moons" / "vae.log").read_text()
    assert "vae epoch 3/3: loss" in log  # progress in the job log


def test_mlflow_has_the_loss_history_and_the_cells_link_to_it(done):
    (rep,) = mlflow_runs(done, "representation")
    assert rep[1] == "FINISHED" and rep[3] == "false"
    with sqlite3.connect(done / "results" / "mlflow.db") as con:
        steps = con.execute("SELECT step, value FROM metrics WHERE run_uuid = ? AND key = 'history.loss' "
                            "ORDER BY step", (rep[4],)).fetchall()
        links = dict(con.execute(
            "SELECT t.run_uuid, t.value FROM tags t WHERE t.key = 'gssl.representation_run_id'").fetchall())
        preps = dict(con.execute("SELECT run_uuid, value FROM tags WHERE key = 'gssl.prep'").fetchall())
        artifacts = con.execute("SELECT artifact_uri FROM runs WHERE run_uuid = ?", (rep[4],)).fetchone()[0]
    assert [s for s, _ in steps] == [0, 1, 2]
    cells = [r[4] for r in mlflow_runs(done, "cell")]
    assert {preps[c] for c in cells if c in links} == {"vae"}
    assert all(links[c] == rep[4] for c in cells if preps[c] == "vae")
    assert "vae.loss.png" in {p.name for p in done.glob("results/**/vae.loss.png")} and artifacts


def test_a_changed_vae_parameter_reruns_that_chain_only(done):
    write_config(done, _config(epochs=4))
    try:
        jobs = planned_jobs(done)
    finally:
        write_config(done, _config())
    assert [j["wildcards"]["prep"] for j in jobs if j["rule"] == "features"] == ["vae"]
    assert {j["wildcards"]["prep"] for j in jobs if j["rule"] in ("graph", "solve")} == {"vae"}
    assert rules_of(jobs)["solve"] == N_JOBS  # the vae chain's cells: as many as the std chain's
    assert set(rules_of(jobs)) == {"features", "graph", "solve", "aggregate", "predictions", "loss_curve",
                                   "mlflow_summary", "all"}


def test_edited_vae_code_reruns_that_chain_only(done):
    with edited(done / "src" / "gssl" / "features" / "autoencoder_nn.py"):
        jobs = planned_jobs(done)
    assert [j["wildcards"]["prep"] for j in jobs if j["rule"] == "features"] == ["vae"]
    assert "std" not in {j["wildcards"].get("prep") for j in jobs}
