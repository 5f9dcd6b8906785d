"""The cluster path: the workflow through Snakemake's SLURM executor plugin (``--profile`` a copy of
workflow/profiles/slurm) against a fake SLURM (tests/fake_slurm.py: sbatch, squeue, sacct, scontrol,
sinfo, sacctmgr, sshare, scancel and srun first on PATH, each job a local background process).

One module-scoped fixture runs every case at once, each in its own workspace and fake-SLURM state
folder, and the tests read what they left:

- the small config (two methods, one protocol, one job per cell) through the profile, beside a
  local run of the same config: same results; what reached sbatch (threads, memory, runtime,
  account, partition, the solve jobs as one array); local rules never submitted;
- the profile's placeholder account left in (the plugin refuses it before any submission) and its
  placeholder partition (sbatch refuses it);
- a job whose SLURM state is FAILED (the fake's injected failure): reported, retried, named;
- a tiny Snakefile of two jobs that go as one array: task 1 fails, under the profile's status
  command (squeue) and under the plugin's default (sacct), which misreads array tasks; and the array
  fed to sbatch as a script, which runs task 1's job in every task (both plugin faults are strict
  xfails: they pass, and fail the suite, once the plugin is fixed);
- the download rule with the profile: it runs on the submitting host.

The plugin's status checks are set to their shortest (1 s) and the fake's FAKE_SLURM_POLL_WAIT
holds a status answer until a job ended, so that no check comes back empty-handed (each one that
does makes the plugin wait 10 s longer before the next).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

import fake_slurm
from workflow_helpers import (REPO, SMALL, SNAKEMAKE, make_workspace, split_records,
                              store_figures)

pytestmark = [pytest.mark.cluster, pytest.mark.e2e, pytest.mark.slow]

PROFILE = REPO / "workflow" / "profiles" / "slurm" / "config.yaml"
ACCOUNT, PARTITION = "gssl-test-acct", "gssl-test-part"
PLACEHOLDER_ACCOUNT = "SET-slurm_account-IN-workflow/profiles/slurm/config.yaml"
PLACEHOLDER_PARTITION = "SET-slurm_partition-IN-workflow/profiles/slurm/config.yaml"
# the plugin's status checks at their shortest; keep the SLURM logs of finished jobs to look at
FAST = ("--slurm-init-seconds-before-status-checks", "1", "--seconds-between-status-checks", "1",
        "--slurm-keep-successful-logs")
TINY_SNAKEFILE = """\
rule all:
    input: expand("out/{i}.txt", i=range(1, 3))

rule work:
    output: "out/{i}.txt"
    shell: "echo fresh {wildcards.i} > {output}"
"""


def cluster_config() -> dict:
    """The small config with one protocol and one job per cell: two solve jobs, one array."""
    cfg = copy.deepcopy(SMALL)
    exp = cfg["experiments"]["e2e"]
    assert len(exp["methods"]) >= 2, "an array needs two solve jobs"
    exp["protocols"] = exp["protocols"][-1:]
    cfg["splits_per_job"] = cfg["protocols"][exp["protocols"][0]]["repeats"]
    return cfg


DATASET_FILE = f"results/data/{SMALL['experiments']['e2e']['datasets'][0]}.h5"  # the first job's


def profile_copy(folder: Path, account: str | None = ACCOUNT, partition: str | None = PARTITION) -> Path:
    """The repository's SLURM profile with its placeholders replaced (None: left in)."""
    text = PROFILE.read_text()
    if account:
        text = text.replace(PLACEHOLDER_ACCOUNT, account)
    if partition:
        text = text.replace(PLACEHOLDER_PARTITION, partition)
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(text)
    return folder


def fake_env(root: Path, **extra) -> dict:
    """PATH with the fake SLURM first, and its settings (tests/fake_slurm.py)."""
    bin_dir = root / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir(parents=True)
        for tool in fake_slurm.TOOLS:
            wrapper = bin_dir / tool
            wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{fake_slurm.__file__}" {tool} "$@"\n')
            wrapper.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "FAKE_SLURM_DIR": str(root / "state"),
            "FAKE_SLURM_ACCOUNTS": ACCOUNT, "FAKE_SLURM_PARTITIONS": PARTITION,
            "FAKE_SLURM_POLL_WAIT": "50", **extra}


class Case:
    """One snakemake run: its workspace, fake-SLURM state folder and finished process."""

    def __init__(self, ws: Path, slurm: Path, args: tuple, env: dict, nice: bool = True):
        self.ws, self.slurm, self.args, self.env = ws, slurm, args, env
        self.prefix = ["nice", "-n", "10"] if nice else []
        self.proc = None
        self.seconds = None

    def run(self):
        """Snakemake as workflow_helpers.smk runs it; the cases besides the cluster run niced, so
        that the cluster run's chain of jobs goes first on a busy machine."""
        env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "GSSL_DATA_MIRROR")}
        env.update(PYTHONPATH=str(self.ws / "src"), GSSL_OFFLINE="1", OMP_NUM_THREADS="1", **self.env)
        t0 = time.monotonic()
        self.proc = subprocess.run([*self.prefix, SNAKEMAKE, *self.args], cwd=self.ws, env=env,
                                   capture_output=True, text=True, timeout=900, check=False)
        self.seconds = time.monotonic() - t0
        self.slurm.mkdir(parents=True, exist_ok=True)  # what it printed, to look at after a failure
        (self.slurm / "snakemake.out").write_text(self.out)
        return self

    @property
    def out(self) -> str:
        return self.proc.stdout + self.proc.stderr

    def explain(self) -> str:
        return f"snakemake {' '.join(self.args)} (exit {self.proc.returncode}):\n{self.out[-6000:]}"

    def submissions(self) -> list[dict]:
        """Every sbatch the plugin ran (accepted), with the rule named in its --comment."""
        path = self.slurm / "state" / "sbatch.jsonl"
        subs = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        for s in subs:
            s["rule"] = re.match(r"rule_(\w+?)(?:_wildcards_|$)", s["options"]["--comment"]).group(1)
        return subs

    def calls(self, tool: str) -> list[dict]:
        path = self.slurm / "state" / "calls.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        return [r for r in rows if r["tool"] == tool]

    def jobs(self) -> list[dict]:
        return fake_slurm.all_jobs(self.slurm / "state") if (self.slurm / "state").exists() else []


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("slurm")
    profile = profile_copy(tmp / "profile")
    cfg = cluster_config()
    out: dict[str, Case] = {}

    def case(name, config, args, profile_dir=profile, ws=None, **env):
        ws = ws or make_workspace(tmp / name / "ws", config)
        out[name] = Case(ws, tmp / name / "slurm", ("--profile", str(profile_dir), *FAST, *args),
                         fake_env(tmp / name / "slurm", **env), nice=name != "cluster")

    # the workflow through the cluster profile, and the same config run locally
    case("cluster", cfg, ())
    local = make_workspace(tmp / "local" / "ws", cfg)
    out["local"] = Case(local, tmp / "local", ("--cores", "2", "results/tables/e2e.csv",
                                                "results/tables/e2e.stats.csv"), {})
    # the placeholders left in: the account (the plugin refuses it), the partition (sbatch does)
    dataset = (DATASET_FILE,)
    case("placeholder_account", cfg, dataset, profile_copy(tmp / "profile_placeholders", None, None))
    case("placeholder_partition", cfg, dataset, profile_copy(tmp / "profile_partition", ACCOUNT, None))
    # a job that fails on the cluster
    case("failed_job", cfg, dataset, FAKE_SLURM_FAIL="^rule_dataset")
    # the download: a local rule (its mirror folder empty here: it fails, on this host)
    dl = copy.deepcopy(cfg)
    dl["datasets"] = {"g50c": {"source": "g50c_sindhwani"}}
    dl["experiments"]["e2e"]["datasets"] = ["g50c"]
    (tmp / "empty_mirror").mkdir()
    case("download", dl, ("resources/raw/g50c_sindhwani/MANIFEST.json",),
         GSSL_DATA_MIRROR=str(tmp / "empty_mirror"))
    # a tiny workflow of two jobs that go as one array, every output already there from an earlier
    # run (stale), all forced to run again: array task 1 fails, under the profile's status command
    # and under sacct; and the array fed to sbatch as a script (the plugin's fallback for a long line)
    tiny_cases = {"array_squeue": ((), "1"), "array_sacct": (("--slurm-status-command", "sacct"), "1"),
                  "array_script": (("--slurm-pass-command-as-script",), "")}
    for name, (extra, fail_tasks) in tiny_cases.items():
        tiny = tmp / name / "ws"
        (tiny / "out").mkdir(parents=True)
        (tiny / "Snakefile").write_text(TINY_SNAKEFILE)
        for i in (1, 2):
            (tiny / "out" / f"{i}.txt").write_text("stale\n")
        case(name, None, ("--slurm-array-jobs", "work", "--forcerun", "work", *extra), ws=tiny,
             FAKE_SLURM_FAIL="^rule_work" if fail_tasks else "", FAKE_SLURM_FAIL_TASKS=fail_tasks)
    try:
        with ThreadPoolExecutor(len(out)) as pool:
            list(pool.map(Case.run, out.values()))
        yield out
    finally:
        for c in out.values():  # nothing left running, whatever happened
            if (c.slurm / "state").exists():
                fake_slurm.cancel_all(c.slurm / "state")


# ----------------------------------------------------------------------------- the cluster run
def _csv_without_timings(path: Path) -> list[dict]:
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    return [{k: v for k, v in r.items() if "seconds" not in k} for r in rows]


def _metrics(ws: Path) -> list[dict]:
    return sorted(({k: v for k, v in rec["metrics"].items() if "seconds" not in k}
                   | {k: rec[k] for k in ("method", "protocol", "split")} for rec in split_records(ws)),
                  key=lambda r: (r["method"], r["protocol"], r["split"]))


def test_cluster_run_completes_with_the_local_runs_results(cases):
    c, local = cases["cluster"], cases["local"]
    assert c.proc.returncode == 0, c.explain()
    assert local.proc.returncode == 0, local.explain()
    print("seconds per case:", {name: round(case.seconds) for name, case in cases.items()})
    assert {j["state"] for j in c.jobs()} == {"COMPLETED"}
    tables = c.ws / "results" / "tables"
    assert _csv_without_timings(tables / "e2e.csv") == _csv_without_timings(
        local.ws / "results" / "tables" / "e2e.csv")
    assert _csv_without_timings(tables / "e2e.stats.csv") == _csv_without_timings(
        local.ws / "results" / "tables" / "e2e.stats.csv")
    metrics = _metrics(c.ws)
    assert metrics and metrics == _metrics(local.ws)
    # the login node logged every split run to MLflow (the logging job is a local rule)
    figures = store_figures(c.ws)
    assert figures["splits"] == len(metrics) == figures["finished"], figures
    assert figures["lost"] == figures["misfiled"] == figures["twice"] == figures["running"] == 0, figures


def test_profile_threads_memory_runtime_account_partition_reach_sbatch(cases):
    c = cases["cluster"]
    assert c.proc.returncode == 0, c.explain()
    profile = yaml.safe_load(PROFILE.read_text())
    subs = c.submissions()
    by_rule: dict[str, list[dict]] = {}
    for s in subs:
        by_rule.setdefault(s["rule"], []).append(s["options"])
    for rule, threads in profile["set-threads"].items():
        assert {o["--cpus-per-task"] for o in by_rule[rule]} == {str(threads)}, rule
    for rule, res in profile["set-resources"].items():
        for o in by_rule[rule]:
            if "mem_mb" in res:
                assert o["--mem"] == str(res["mem_mb"]), rule
            if "runtime" in res:
                assert o["--time"] == str(res["runtime"]), rule
    run_names = set()
    for s in subs:
        o = s["options"]
        assert (o["--account"], o["--partition"]) == (ACCOUNT, PARTITION), s["argv"]
        assert o["--parsable"] and o["--export"] == "ALL" and o["--chdir"] == str(c.ws), s["argv"]
        assert int(o["--mem"]) > 0 and int(o["--time"]) > 0 and "--wrap" in o, s["argv"]
        run_names.add(o["--job-name"])
    assert len(run_names) == 1  # the run's id, which the status queries filter on
    # inside a job, the plugin's jobstep runs the rule under srun with the same CPUs
    # (Snakemake there caps a rule's threads at the CPUs the job may use: the allocation on a
    # cluster node, this machine's CPUs here)
    graph = next(j for j in c.jobs() if j["comment"].startswith("rule_graph_"))
    usable = len(os.sched_getaffinity(0))
    assert [st["options"]["--cpus-per-task"] for st in graph["steps"]] == [
        str(min(profile["set-threads"]["graph"], usable))]
    # the status queries went to squeue, as the profile says, filtered on the run's id
    queries = c.calls("squeue")
    run_name = run_names.pop()
    assert queries and all(q["argv"][-2:] == ["--name", run_name] for q in queries)
    assert not c.calls("sacct")


def _local_rules() -> set[str]:
    names = set()
    for smk_file in (REPO / "workflow" / "rules").glob("*.smk"):
        for block in re.findall(r"^localrules:\n((?:[ \t]+\S.*\n)+)", smk_file.read_text(), re.MULTILINE):
            names |= {m for m in re.findall(r"^\s+(\w+),", block, re.MULTILINE)}
    return names


def test_local_rules_never_go_through_sbatch(cases):
    c = cases["cluster"]
    assert c.proc.returncode == 0, c.explain()
    local_rules = _local_rules()
    assert {"download", "mlflow_summary"} <= local_rules
    # Snakemake prints "localrule X:" for a job it runs itself, "rule X:" for one it submits
    ran_here = set(re.findall(r"^localrule (\w+):$", c.out, re.MULTILINE)) - {"all"}
    ran_there = set(re.findall(r"^rule (\w+):$", c.out, re.MULTILINE))
    submitted = {s["rule"] for s in c.submissions()}
    assert submitted == ran_there and {"dataset", "graph", "solve", "aggregate"} <= submitted
    assert ran_here == {"mlflow_summary"}
    assert not submitted & local_rules
    # the download, alone: it ran here (its log), nothing went to sbatch
    dl = cases["download"]
    assert "localrule download:" in dl.out, dl.explain()
    assert (dl.ws / "results" / "logs" / "download" / "g50c_sindhwani.log").exists(), dl.explain()
    assert not dl.calls("sbatch") and not dl.jobs()


def test_solve_jobs_go_as_one_array_job(cases):
    c = cases["cluster"]
    assert c.proc.returncode == 0, c.explain()
    solves = [s for s in c.submissions() if s["rule"] == "solve"]
    assert len(solves) == 1 and solves[0]["options"]["--array"] == "1-2", solves
    array_id = solves[0]["job_id"]
    tasks = [j for j in c.jobs() if j["array_job_id"] == array_id]
    assert sorted(j["task_id"] for j in tasks) == [1, 2]
    assert {j["state"] for j in tasks} == {"COMPLETED"}
    # --output <logdir>/rule_solve/%A_%a.log: one log per task
    logs = c.ws / ".snakemake" / "slurm_logs" / "rule_solve"
    assert sorted(p.name for p in logs.glob("*.log")) == [f"{array_id}_1.log", f"{array_id}_2.log"]
    assert len(c.calls("sbatch")) == len(c.submissions())  # none refused
    # the plugin puts every task's command on the sbatch line, one shell argument (sh -c): a full
    # array of the profile's slurm-array-limit tasks stays under the kernel's 128 KiB for one
    # argument (MAX_ARG_STRLEN), past which the plugin falls back to feeding sbatch a script that
    # runs only the first task's job (test_array_job_fed_as_a_script_runs_each_task). The command
    # holds the workspace's paths, so its size varies: 1.6-2.4 KB a task in this test's runs
    limit = yaml.safe_load(PROFILE.read_text())["slurm-array-limit"]
    payload = re.search(r"--slurm-jobstep-array-execs='?([A-Za-z0-9+/=]+)",
                        solves[0]["options"]["--wrap"]).group(1)
    per_task = len(payload) / (len(tasks) - 1)
    line = len(shlex.join(["sbatch", *solves[0]["argv"]]))
    assert line + per_task * (limit - len(tasks)) < 128 * 1024, (line, per_task, limit)


# ----------------------------------------------------------------------------- placeholders
def test_placeholder_account_fails_before_submitting_anything(cases):
    c = cases["placeholder_account"]
    assert c.proc.returncode != 0, c.explain()
    assert PLACEHOLDER_ACCOUNT in c.out and "appears to be invalid" in c.out, c.explain()
    assert not c.calls("sbatch") and not c.jobs()
    assert c.calls("sacctmgr")  # the plugin asked which accounts the user has
    assert not (c.ws / DATASET_FILE).exists()


def test_placeholder_partition_is_refused_by_sbatch(cases):
    c = cases["placeholder_partition"]
    assert c.proc.returncode != 0, c.explain()
    assert PLACEHOLDER_PARTITION in c.out and "Invalid partition name specified" in c.out, c.explain()
    assert c.calls("sbatch") and not c.jobs()  # every submission refused
    assert not (c.ws / DATASET_FILE).exists()


# ----------------------------------------------------------------------------- failures
def test_failed_job_is_reported_by_name_and_retried(cases):
    c = cases["failed_job"]
    assert c.proc.returncode != 0, c.explain()
    jobs = c.jobs()
    # the profile's retries: 1 submits it twice; both FAILED, both reported with their SLURM id
    assert len(jobs) == 2 and all(j["comment"].startswith("rule_dataset_") for j in jobs)
    assert {j["state"] for j in jobs} == {"FAILED"}
    assert "Error in rule dataset:" in c.out, c.explain()
    for j in jobs:
        assert f"SLURM-job '{j['raw_id']}' failed, SLURM status is: 'FAILED'" in c.out, c.explain()
    assert {s["rule"] for s in c.submissions()} == {"dataset"}  # nothing after it


def _array_case_checks(c: Case):
    array = [j for j in c.jobs() if j["array_job_id"] is not None]
    assert sorted(j["task_id"] for j in array) == [1, 2]
    failed = next(j for j in array if j["task_id"] == 1)
    assert failed["state"] == "FAILED"  # the fake's injected failure
    assert f"SLURM-job '{failed['array_job_id']}_1' failed" in c.out, c.explain()
    assert "Error in rule work:" in c.out, c.explain()
    # retried as a job of its own (the injected failure hits array task 1 only), which succeeds
    subs = c.submissions()
    assert len(subs) == 2 and "--array" in subs[0]["options"] and "--array" not in subs[1]["options"]
    assert c.proc.returncode == 0, c.explain()
    assert [(c.ws / "out" / f"{i}.txt").read_text() for i in (1, 2)] == ["fresh 1\n", "fresh 2\n"]


def test_failed_array_task_is_reported_and_retried_with_squeue(cases):
    _array_case_checks(cases["array_squeue"])


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "snakemake-executor-plugin-slurm 2.8.0 reads sacct -X --format=JobIdRaw,State, where an array "
    "task has a job id of its own, looks a task up as <array id>_<task id>, and falls back to the "
    "array's id: the state of the task that kept it (the last). Failed task 1 is reported done and "
    "the stale out/1.txt kept. Hence slurm-status-command: squeue in workflow/profiles/slurm."))
def test_failed_array_task_is_reported_and_retried_with_sacct(cases):
    c = cases["array_sacct"]
    assert c.calls("sacct") and not c.calls("squeue")
    _array_case_checks(c)


# not strict: the fault showed in one of two fresh-clone CI runs of this test and not in the other
# (timing-dependent), so it documents the plugin's behaviour without deciding CI
@pytest.mark.xfail(strict=False, raises=AssertionError, reason=(
    "snakemake-executor-plugin-slurm 2.8.0 writes an array's script (--slurm-pass-command-as-script, "
    "and its fallback when the sbatch line is too long for the kernel) with --slurm-jobstep-array-execs "
    "and its value on lines of their own: every task can run the first task's job, and the stale "
    "out/2.txt be taken for task 2's (seen in some runs). Hence slurm-array-limit in workflow/profiles/slurm."))
def test_array_job_fed_as_a_script_runs_each_task(cases):
    c = cases["array_script"]
    subs = c.submissions()
    assert subs[0]["from_stdin"] and "--array" in subs[0]["options"]
    assert c.proc.returncode == 0, c.explain()
    assert [(c.ws / "out" / f"{i}.txt").read_text() for i in (1, 2)] == ["fresh 1\n", "fresh 2\n"]
