#!/usr/bin/env python3
"""A fake SLURM for the cluster tests (tests/test_cluster_slurm.py): one program that answers as
``sbatch``, ``squeue``, ``sacct``, ``scontrol``, ``sinfo``, ``sacctmgr``, ``sshare``, ``scancel`` and
``srun``, by the name it is called by (a link named ``sbatch``) or by its first argument
(``fake_slurm.py sbatch ...``). Only the standard library: it runs under any Python 3.

Each submission runs on this machine as a background process (one per job, which starts the
job's array tasks side by side), in the working directory ``-D`` names, with the environment the
submitter had (``--export=ALL``) plus the ``SLURM_*`` variables a job sees; its output goes to the
``--output`` file (``%j %A %a %x %u %N %%`` expanded). A job is PENDING until its process starts,
RUNNING until its script exits, then COMPLETED (exit code 0) or FAILED; ``scancel`` makes it
CANCELLED. The status tools answer in the formats Snakemake's SLURM executor plugin parses:
``sacct -X --parsable2 --noheader --format=JobIdRaw,State --name <run>`` and
``squeue --format=%i|%T --states=all --noheader --name <run>``.

Array jobs behave as SLURM's do (https://slurm.schedmd.com/job_array.html): ``sbatch`` prints the
array's job id; each task has its own job id (``SLURM_JOB_ID``, sacct's ``JobIDRaw``), and the last
task keeps the array's id (the documentation's example: tasks 1, 2, 3 of array 36 run as jobs 37,
38 and 36); ``squeue %i`` and sacct's ``JobID`` name a task ``<array id>_<task id>``, and the tasks
still pending show as one record ``<array id>_[<first>-<last>]`` whose raw id is the array's.

State lives in the folder ``FAKE_SLURM_DIR`` (required): ``jobs/<raw id>.json`` per job or task,
``sbatch.jsonl`` (every submission: its command line, the options as parsed, the job id, whether
the script came on stdin), ``calls.jsonl`` (every call of every tool, with the job it ran in),
``scripts/<id>.sh``. Settings (environment variables, read by every tool):

- ``FAKE_SLURM_ACCOUNTS`` (``fakeacct``): the accounts sacctmgr and sshare list for the user and
  sbatch accepts; ``FAKE_SLURM_PARTITIONS`` (``fakepart``): the partitions, the first the default.
- ``FAKE_SLURM_MAX_ARRAY_SIZE`` (1001), ``FAKE_SLURM_MIN_JOB_AGE`` (300): ``scontrol show config``;
  squeue forgets a job MinJobAge seconds after it ended.
- ``FAKE_SLURM_FAIL``: a regular expression; a job whose ``--comment`` matches it fails without
  running its script (``FAKE_SLURM_FAIL_TASKS``: only these array task ids, comma separated;
  ``FAKE_SLURM_FAIL_STATE``: FAILED, OUT_OF_MEMORY, TIMEOUT, NODE_FAIL...; default FAILED, exit 1).
- ``FAKE_SLURM_PENDING_SECONDS`` (0): how long a job stays PENDING before it starts.
- ``FAKE_SLURM_POLL_WAIT`` (0): a status query that names a job name (``--name``) holds its answer
  up to this many seconds until a job of that name has ended since the last such query (or none is
  left running). Only the timing changes, not the answer: it spares a test the executor's growing
  pauses between status checks that found nothing finished.
"""

from __future__ import annotations

import fcntl
import getpass
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

TOOLS = ("sbatch", "squeue", "sacct", "scontrol", "sinfo", "sacctmgr", "sshare", "scancel", "srun")
END_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL",
              "BOOT_FAIL", "DEADLINE", "PREEMPTED"}
REASONS = {"FAILED": "NonZeroExitCode", "OUT_OF_MEMORY": "OutOfMemory", "TIMEOUT": "TimeLimit",
           "NODE_FAIL": "NodeDown", "CANCELLED": "None", "COMPLETED": "None", "RUNNING": "None",
           "PENDING": "Priority"}
CLUSTER = "fakecluster"
NODE = "fakenode"


class Usage(Exception):
    """A command line the real tool refuses: printed as ``<tool>: error: ...``, exit 1."""


# ----------------------------------------------------------------------------- settings and state
def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def accounts() -> list[str]:
    return [a for a in _env("FAKE_SLURM_ACCOUNTS", "fakeacct").split(",") if a]


def partitions() -> list[str]:
    return [p for p in _env("FAKE_SLURM_PARTITIONS", "fakepart").split(",") if p]


def state_dir() -> Path:
    path = _env("FAKE_SLURM_DIR")
    if not path:
        raise Usage("FAKE_SLURM_DIR is not set (the fake SLURM's state folder)")
    root = Path(path)
    for sub in ("jobs", "scripts"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    return root


@contextmanager
def locked(root: Path):
    with open(root / "lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def write_json(path: Path, data) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def append_jsonl(path: Path, record: dict) -> None:
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write(json.dumps(record) + "\n")
        fcntl.flock(fh, fcntl.LOCK_UN)


def all_jobs(root: Path) -> list[dict]:
    out = []
    for p in (root / "jobs").glob("*.json"):
        try:
            out.append(json.loads(p.read_text()))
        except (OSError, ValueError):  # replaced while read: read it again
            try:
                out.append(json.loads(p.read_text()))
            except (OSError, ValueError):
                pass
    return sorted(out, key=lambda j: (j["array_job_id"] or j["raw_id"], j["task_id"] or 0))


def update_job(root: Path, raw_id: int, **changes) -> dict:
    """Change a job's record under the lock; an ended job's state is never changed again."""
    with locked(root):
        path = root / "jobs" / f"{raw_id}.json"
        job = json.loads(path.read_text())
        if job["state"] in END_STATES and "state" in changes:
            return job
        job.update(changes)
        write_json(path, job)
        return job


def job_id(job: dict) -> str:
    """SLURM's name for a job: ``<id>``, or ``<array id>_<task id>`` for an array task."""
    if job["array_job_id"] is None:
        return str(job["raw_id"])
    return f"{job['array_job_id']}_{job['task_id']}"


# ----------------------------------------------------------------------------- option parsing
def parse_options(argv: list[str], with_value: set[str], flags: set[str], aliases: dict[str, str],
                  stop_at_positional: bool = True) -> tuple[dict, list[str]]:
    """``--opt=v``, ``--opt v``, ``-o v``, ``-ov``, ``-abc`` (flags): {canonical name: value or True}
    (an option given twice keeps the last), and the arguments from the first positional on."""
    opts: dict = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return opts, argv[i + 1:]
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            key = aliases.get("--" + name, "--" + name)
            if key in with_value:
                if not eq:
                    i += 1
                    if i >= len(argv):
                        raise Usage(f"option '--{name}' requires an argument")
                    value = argv[i]
                opts[key] = value
            elif key in flags:
                if eq:
                    raise Usage(f"option '--{name}' doesn't allow an argument")
                opts[key] = True
            else:
                raise Usage(f"unrecognized option '{arg}'")
        elif arg.startswith("-") and len(arg) > 1:
            j = 1
            while j < len(arg):
                key = aliases.get("-" + arg[j], "-" + arg[j])
                if key in with_value:
                    value = arg[j + 1:]
                    if not value:
                        i += 1
                        if i >= len(argv):
                            raise Usage(f"option requires an argument -- '{arg[j]}'")
                        value = argv[i]
                    opts[key] = value
                    break
                if key in flags:
                    opts[key] = True
                    j += 1
                    continue
                raise Usage(f"invalid option -- '{arg[j]}'")
        else:
            if stop_at_positional:
                return opts, argv[i:]
            raise Usage(f"Unknown arguments: {' '.join(argv[i:])}")
        i += 1
    return opts, []


def parse_array(spec: str) -> list[int]:
    """``1-4``, ``1-9:2``, ``1,3,5``, ``1-100%10`` (the throttle is accepted and ignored)."""
    spec = spec.split("%", 1)[0]
    tasks: list[int] = []
    for part in spec.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part.strip())
        if not m:
            raise Usage(f"Invalid job array specification: {spec}")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else first
        step = int(m.group(3)) if m.group(3) else 1
        if last < first or step < 1:
            raise Usage(f"Invalid job array specification: {spec}")
        tasks += range(first, last + 1, step)
    return sorted(set(tasks))


def compress_ranges(ids: list[int]) -> str:
    parts, start, prev = [], None, None
    for i in sorted(ids):
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            parts.append(f"{start}-{prev}" if prev != start else str(start))
            start = prev = i
    if start is not None:
        parts.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(parts)


# ----------------------------------------------------------------------------- sbatch
SBATCH_VALUE = {"--job-name", "--output", "--error", "--comment", "--account", "--partition",
                "--clusters", "--time", "--constraint", "--qos", "--mem", "--mem-per-cpu", "--nodes",
                "--ntasks", "--ntasks-per-gpu", "--ntasks-per-node", "--cpus-per-task",
                "--cpus-per-gpu", "--chdir", "--array", "--wrap", "--exclude", "--reservation",
                "--gres", "--gpus", "--export", "--dependency", "--mail-type", "--mail-user",
                "--nodelist", "--signal", "--begin", "--tmp"}
SBATCH_FLAGS = {"--parsable", "--requeue", "--no-requeue", "--exclusive", "--hold", "--wait",
                "--test-only", "--overcommit", "--oversubscribe"}
SBATCH_ALIASES = {"-J": "--job-name", "-o": "--output", "-e": "--error", "-A": "--account",
                  "-p": "--partition", "-M": "--clusters", "-t": "--time", "-C": "--constraint",
                  "-N": "--nodes", "-n": "--ntasks", "-c": "--cpus-per-task", "-D": "--chdir",
                  "--workdir": "--chdir", "-a": "--array", "-x": "--exclude", "-G": "--gpus",
                  "-d": "--dependency", "-w": "--nodelist", "-H": "--hold", "-W": "--wait",
                  "-q": "--qos", "-s": "--oversubscribe"}


def sbatch(argv: list[str], root: Path) -> int:
    opts, rest = parse_options(argv, SBATCH_VALUE, SBATCH_FLAGS, SBATCH_ALIASES)
    cwd = os.getcwd()
    if "--wrap" in opts:
        if rest:
            raise Usage("script arguments not permitted with --wrap option")
        script = f"#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{opts['--wrap']}\n"
        from_stdin = False
    else:
        path = rest[0] if rest else "/dev/stdin"  # no script file: sbatch reads it from stdin
        from_stdin = path in ("/dev/stdin", "-")
        try:
            script = sys.stdin.read() if from_stdin else Path(path).read_text()
        except OSError as exc:
            raise Usage(f"Unable to open file {path}: {exc.strerror}") from None
        if not script.startswith("#!"):
            raise Usage("This does not look like a batch script.  The first line must start with "
                        "#! followed by the path to an interpreter.")
        rest = rest[1:]
    account = opts.get("--account")
    if account is not None and account not in accounts():
        raise Usage("Batch job submission failed: Invalid account or account/partition "
                    "combination specified")
    partition = opts.get("--partition", partitions()[0] if partitions() else None)
    if partition is not None and partition not in partitions():
        print(f"sbatch: error: invalid partition specified: {partition}", file=sys.stderr)
        raise Usage("Batch job submission failed: Invalid partition name specified")
    tasks = parse_array(opts["--array"]) if "--array" in opts else None
    max_array = int(_env("FAKE_SLURM_MAX_ARRAY_SIZE", "1001"))
    if tasks and tasks[-1] >= max_array:
        raise Usage("Batch job submission failed: Invalid job array specification")
    chdir = opts.get("--chdir", cwd)
    if not Path(chdir).is_dir():
        raise Usage(f"Batch job submission failed: Invalid directory: {chdir}")

    with locked(root):
        counter = root / "next_id"
        base = int(counter.read_text()) if counter.exists() else 1000
        n = len(tasks) if tasks else 1
        counter.write_text(str(base + n))
    (root / "scripts" / f"{base}.sh").write_text(script)
    common = {"name": opts.get("--job-name", "sbatch"), "comment": opts.get("--comment", ""),
              "account": account or (accounts() or [None])[0], "partition": partition,
              "output": opts.get("--output", "slurm-%A_%a.out" if tasks else "slurm-%j.out"),
              "error": opts.get("--error"), "cwd": chdir, "submit_dir": cwd,
              "cpus_per_task": int(opts.get("--cpus-per-task", 1)), "mem": opts.get("--mem"),
              "mem_per_cpu": opts.get("--mem-per-cpu"), "time": opts.get("--time"),
              "ntasks": int(opts.get("--ntasks", 1)), "script": str(root / "scripts" / f"{base}.sh"),
              "script_args": rest, "submit": time.time(), "start": None, "end": None,
              "state": "PENDING", "exit_code": None, "pid": None, "steps": [], "user": getpass.getuser(),
              "cpu_seconds": None}
    if tasks:
        # the last task keeps the array's id; the others get ids of their own (SLURM's job_array.html)
        ids = {t: base + 1 + k for k, t in enumerate(tasks[:-1])}
        ids[tasks[-1]] = base
        records = [dict(common, raw_id=ids[t], array_job_id=base, task_id=t, array_tasks=tasks)
                   for t in tasks]
    else:
        records = [dict(common, raw_id=base, array_job_id=None, task_id=None, array_tasks=None)]
    for rec in records:
        write_json(root / "jobs" / f"{rec['raw_id']}.json", rec)
    append_jsonl(root / "sbatch.jsonl", {"argv": argv, "options": opts, "script_args": rest,
                                         "job_id": base, "tasks": tasks, "from_stdin": from_stdin,
                                         "cwd": cwd, "time": time.time()})
    # the job runs in a process of its own, which outlives this sbatch
    subprocess.Popen([sys.executable, os.path.realpath(__file__), "_run", str(base)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True)
    cluster = opts.get("--clusters")
    if opts.get("--parsable"):
        print(f"{base};{cluster}" if cluster else base)
    else:
        print(f"Submitted batch job {base}" + (f" on cluster {cluster}" if cluster else ""))
    return 0


def expand_output(pattern: str, job: dict) -> str:
    subst = {"j": str(job["raw_id"]), "A": str(job["array_job_id"] or job["raw_id"]),
             "a": str(job["task_id"] if job["task_id"] is not None else 4294967294),
             "x": job["name"], "u": job["user"], "N": NODE, "%": "%"}
    return re.sub(r"%([jAaxuN%])", lambda m: subst[m.group(1)], pattern)


def run_job(base: int, root: Path) -> None:
    """The background process of one submission: start its tasks, wait, record how they ended."""
    time.sleep(float(_env("FAKE_SLURM_PENDING_SECONDS", "0")))
    tasks = [j for j in all_jobs(root) if j["raw_id"] == base and j["array_job_id"] is None
             or j["array_job_id"] == base]
    threads = [threading.Thread(target=run_task, args=(job, root)) for job in tasks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run_task(job: dict, root: Path) -> None:
    if json.loads((root / "jobs" / f"{job['raw_id']}.json").read_text())["state"] != "PENDING":
        return  # cancelled while pending
    fail = _env("FAKE_SLURM_FAIL")
    fail_tasks = {int(t) for t in _env("FAKE_SLURM_FAIL_TASKS").split(",") if t.strip()}
    injected = bool(fail) and re.search(fail, job["comment"]) is not None and (
        not fail_tasks or job["task_id"] in fail_tasks)
    env = dict(os.environ)
    env.update(SLURM_JOB_ID=str(job["raw_id"]), SLURM_JOBID=str(job["raw_id"]),
               SLURM_JOB_NAME=job["name"], SLURM_JOB_ACCOUNT=str(job["account"]),
               SLURM_JOB_PARTITION=str(job["partition"]), SLURM_SUBMIT_DIR=job["submit_dir"],
               SLURM_SUBMIT_HOST=socket.gethostname(), SLURM_CLUSTER_NAME=CLUSTER,
               SLURM_JOB_NUM_NODES="1", SLURM_NNODES="1", SLURM_JOB_NODELIST=NODE,
               SLURM_NODELIST=NODE, SLURMD_NODENAME=NODE, SLURM_NTASKS=str(job["ntasks"]),
               SLURM_CPUS_PER_TASK=str(job["cpus_per_task"]),
               SLURM_CPUS_ON_NODE=str(job["cpus_per_task"] * job["ntasks"]))
    if job["mem"]:
        env["SLURM_MEM_PER_NODE"] = str(job["mem"])
    if job["array_job_id"] is not None:
        tasks = job["array_tasks"]
        env.update(SLURM_ARRAY_JOB_ID=str(job["array_job_id"]), SLURM_ARRAY_TASK_ID=str(job["task_id"]),
                   SLURM_ARRAY_TASK_MIN=str(min(tasks)), SLURM_ARRAY_TASK_MAX=str(max(tasks)),
                   SLURM_ARRAY_TASK_COUNT=str(len(tasks)), SLURM_ARRAY_TASK_STEP="1")
    out_path = Path(job["cwd"]) / expand_output(job["output"], job)
    err_path = Path(job["cwd"]) / expand_output(job["error"], job) if job["error"] else None
    with ExitStack() as files:
        try:
            out = files.enter_context(open(out_path, "w"))
            err = files.enter_context(open(err_path, "w")) if err_path else subprocess.STDOUT
        except OSError:  # SLURM cannot open the output file: the job fails at once, without a log
            update_job(root, job["raw_id"], state="FAILED", exit_code="0:53", start=time.time(),
                       end=time.time())
            return
        if update_job(root, job["raw_id"], state="RUNNING", start=time.time())["state"] != "RUNNING":
            return  # cancelled before it started
        if injected:
            state = _env("FAKE_SLURM_FAIL_STATE", "FAILED")
            out.write(f"fake_slurm: injected failure ({state}) of job {job_id(job)}\n")
            update_job(root, job["raw_id"], state=state, end=time.time(),
                       exit_code="1:0" if state == "FAILED" else "0:0")
            return
        proc = subprocess.Popen(["/bin/sh", job["script"], *job["script_args"]], cwd=job["cwd"],
                                env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True)
        if update_job(root, job["raw_id"], pid=proc.pid)["state"] == "CANCELLED":
            os.killpg(proc.pid, signal.SIGTERM)  # scancel came between the start and the pid's record
        _, status, usage = os.wait4(proc.pid, 0)  # the script's exit, and the CPU its processes used
        code = proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = round(usage.ru_utime + usage.ru_stime, 3)
    if code < 0:  # killed by a signal (scancel): state already CANCELLED
        update_job(root, job["raw_id"], state="CANCELLED", exit_code=f"0:{-code}", end=time.time(),
                   cpu_seconds=cpu)
    else:
        update_job(root, job["raw_id"], state="COMPLETED" if code == 0 else "FAILED",
                   exit_code=f"{code}:0", end=time.time(), cpu_seconds=cpu)


# ----------------------------------------------------------------------------- srun (a job step)
SRUN_VALUE = {"--ntasks", "--cpus-per-task", "--cpu-bind", "--nodes", "--gpus", "--mem",
              "--mem-per-cpu", "--job-name", "--jobid", "--export", "--time", "--cpus-per-gpu",
              "--ntasks-per-node", "--partition", "--account"}
SRUN_FLAGS = {"--exclusive", "--overlap", "--label", "--unbuffered"}
SRUN_ALIASES = {"-n": "--ntasks", "-c": "--cpus-per-task", "-N": "--nodes", "-G": "--gpus",
                "-J": "--job-name", "-t": "--time", "-p": "--partition", "-A": "--account",
                "-l": "--label", "-u": "--unbuffered"}


def srun(argv: list[str], root: Path) -> int:
    opts, command = parse_options(argv, SRUN_VALUE, SRUN_FLAGS, SRUN_ALIASES)
    raw = os.environ.get("SLURM_JOB_ID")
    if not raw or not (root / "jobs" / f"{raw}.json").exists():
        raise Usage("fake_slurm runs srun only inside a job (SLURM_JOB_ID of a job it started)")
    if not command:
        raise Usage("No command given to execute.")
    with locked(root):
        path = root / "jobs" / f"{raw}.json"
        job = json.loads(path.read_text())
        step = len(job["steps"])
        job["steps"].append({"step": step, "argv": argv, "options": opts, "state": "RUNNING",
                             "exit_code": None, "start": time.time(), "end": None})
        write_json(path, job)
    env = dict(os.environ, SLURM_STEP_ID=str(step), SLURM_STEPID=str(step))
    if "--cpus-per-task" in opts:
        env["SLURM_CPUS_PER_TASK"] = str(opts["--cpus-per-task"])
    code = subprocess.call(command, env=env)
    with locked(root):
        job = json.loads(path.read_text())
        job["steps"][step].update(state="COMPLETED" if code == 0 else "FAILED",
                                  exit_code=f"{max(code, 0)}:{max(-code, 0)}", end=time.time())
        write_json(path, job)
    if code != 0:
        print(f"srun: error: {NODE}: task 0: Exited with exit code {code}", file=sys.stderr)
    return code if code >= 0 else 128 - code


# ----------------------------------------------------------------------------- status queries
def _since_last_poll(root: Path, name: str, wait: float) -> None:
    """FAKE_SLURM_POLL_WAIT: hold the answer until a job named ``name`` ended since the last query
    (or none of them is still pending or running), at most ``wait`` seconds."""
    seen_file = root / f"polled-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.json"
    seen = set(json.loads(seen_file.read_text())) if seen_file.exists() else set()
    deadline = time.time() + wait
    while True:
        jobs = [j for j in all_jobs(root) if j["name"] == name]
        ended = {str(j["raw_id"]) for j in jobs if j["state"] in END_STATES}
        if ended - seen or all(j["state"] in END_STATES for j in jobs) or time.time() >= deadline:
            write_json(seen_file, sorted(ended | seen))
            return
        time.sleep(0.1)


def _select(jobs: list[dict], opts: dict) -> list[dict]:
    if "--name" in opts:
        names = set(opts["--name"].split(","))
        jobs = [j for j in jobs if j["name"] in names]
    if "--user" in opts:
        jobs = [j for j in jobs if j["user"] == opts["--user"]]
    return jobs


def _fmt(value: str, width: int | None, right: bool) -> str:
    if width is None:
        return value
    value = value[:width]
    return value.rjust(width) if right else value.ljust(width)


def _state_long(job: dict) -> str:
    return job["state"]


SQUEUE_VALUE = {"--format", "--states", "--name", "--jobs", "--user", "--partition", "--clusters",
                "--Format", "--sort"}
SQUEUE_FLAGS = {"--noheader", "--me", "--array", "--all", "--long"}
SQUEUE_ALIASES = {"-o": "--format", "-t": "--states", "-n": "--name", "-j": "--jobs", "-u": "--user",
                  "-p": "--partition", "-M": "--clusters", "-h": "--noheader", "-r": "--array",
                  "-a": "--all", "-l": "--long", "-O": "--Format", "-S": "--sort"}
SQUEUE_HEADER = {"i": "JOBID", "A": "JOBID", "F": "ARRAY_JOB_ID", "K": "ARRAY_TASK_ID", "T": "STATE",
                 "t": "ST", "j": "NAME", "P": "PARTITION", "a": "ACCOUNT", "u": "USER", "k": "COMMENT",
                 "C": "CPUS", "m": "MIN_MEMORY", "l": "TIME_LIMIT", "N": "NODELIST"}
SHORT_STATE = {"PENDING": "PD", "RUNNING": "R", "COMPLETED": "CD", "FAILED": "F", "CANCELLED": "CA",
               "TIMEOUT": "TO", "OUT_OF_MEMORY": "OOM", "NODE_FAIL": "NF", "PREEMPTED": "PR"}


def squeue(argv: list[str], root: Path) -> int:
    opts, _ = parse_options(argv, SQUEUE_VALUE, SQUEUE_FLAGS, SQUEUE_ALIASES,
                               stop_at_positional=False)
    if opts.get("--me"):
        opts["--user"] = getpass.getuser()
    if "--name" in opts and float(_env("FAKE_SLURM_POLL_WAIT", "0")) > 0:
        _since_last_poll(root, opts["--name"], float(_env("FAKE_SLURM_POLL_WAIT")))
    states = opts.get("--states", "")
    wanted = {s.strip().upper() for s in states.split(",") if s.strip()}
    min_age = float(_env("FAKE_SLURM_MIN_JOB_AGE", "300"))
    now = time.time()
    rows = []
    for job in _select(all_jobs(root), opts):
        if job["state"] in END_STATES:  # the controller forgets a job MinJobAge after it ended
            if now - (job["end"] or now) > min_age:
                continue
            if "ALL" not in wanted and job["state"] not in wanted:
                continue
        elif wanted and "ALL" not in wanted and job["state"] not in wanted:
            continue
        rows.append(job)
    # pending tasks of an array are one record, <array id>_[<tasks>] (squeue -r lists them one by one)
    records: list[dict] = []
    pending: dict[int, list[dict]] = {}
    for job in rows:
        if job["array_job_id"] is not None and job["state"] == "PENDING" and not opts.get("--array"):
            pending.setdefault(job["array_job_id"], []).append(job)
        else:
            records.append(dict(job, shown_id=job_id(job)))
    for base, jobs in pending.items():
        records.append(dict(jobs[0], raw_id=base,
                            shown_id=f"{base}_[{compress_ranges([j['task_id'] for j in jobs])}]"))
    fmt = opts.get("--format", "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R")
    tokens = list(re.finditer(r"%(\.)?(\d+)?([a-zA-Z])", fmt))

    def render(values) -> str:
        out, last = [], 0
        for m, value in zip(tokens, values):
            out.append(fmt[last:m.start()])
            out.append(_fmt(value, int(m.group(2)) if m.group(2) else None, bool(m.group(1))))
            last = m.end()
        out.append(fmt[last:])
        return "".join(out)

    if not opts.get("--noheader"):
        print(render([SQUEUE_HEADER.get(m.group(3), m.group(3).upper()) for m in tokens]))
    for rec in records:
        field = {"i": rec["shown_id"], "A": str(rec["raw_id"]),
                 "F": str(rec["array_job_id"] or rec["raw_id"]),
                 "K": str(rec["task_id"]) if rec["task_id"] is not None else "N/A",
                 "T": _state_long(rec), "t": SHORT_STATE.get(rec["state"], rec["state"][:2]),
                 "j": rec["name"], "P": str(rec["partition"]), "a": str(rec["account"]),
                 "u": rec["user"], "k": rec["comment"], "C": str(rec["cpus_per_task"]),
                 "m": str(rec["mem"]), "l": str(rec["time"]), "N": NODE, "M": "0:00", "D": "1",
                 "R": NODE if rec["state"] == "RUNNING" else "(None)"}
        print(render([field.get(m.group(3), "") for m in tokens]))
    return 0


SACCT_VALUE = {"--format", "--name", "--starttime", "--endtime", "--clusters", "--jobs", "--user",
               "--state", "--partition", "--account", "--delimiter"}
SACCT_FLAGS = {"--allocations", "--parsable", "--parsable2", "--noheader", "--allusers",
               "--allclusters", "--brief", "--array"}
SACCT_ALIASES = {"-o": "--format", "-S": "--starttime", "-E": "--endtime", "-M": "--clusters",
                 "-j": "--jobs", "-u": "--user", "-s": "--state", "-r": "--partition", "-A": "--account",
                 "-X": "--allocations", "-p": "--parsable", "-P": "--parsable2", "-n": "--noheader",
                 "-a": "--allusers", "-L": "--allclusters", "-b": "--brief", "--job-name": "--name"}
SACCT_FIELDS = ("JobID", "JobIDRaw", "JobName", "State", "ExitCode", "Account", "Partition",
                "TotalCPU", "AllocCPUS", "ReqCPUS", "ReqMem", "Timelimit", "Elapsed", "NodeList", "Comment",
                "Reason", "Submit", "Start", "End", "ArrayJobID", "ArrayTaskID", "User", "Cluster",
                "WorkDir")


def _elapsed(start, end) -> str:
    if not start:
        return "00:00:00"
    s = int((end or time.time()) - start)
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _stamp(t) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t)) if t else "Unknown"


def _sacct_rows(job: dict, allocations: bool) -> list[dict]:
    """The allocation's row, then (without -X) its batch step and srun steps, as SLURM lists them."""
    base = {"JobName": job["name"], "Account": job["account"], "Partition": job["partition"],
            "AllocCPUS": job["cpus_per_task"] * job["ntasks"], "ReqCPUS": job["cpus_per_task"],
            "ReqMem": f"{job['mem']}M" if job["mem"] else "", "Timelimit": job["time"] or "",
            "NodeList": NODE if job["start"] else "None assigned", "Comment": job["comment"],
            "Submit": _stamp(job["submit"]), "User": job["user"], "Cluster": CLUSTER,
            "WorkDir": job["cwd"], "ArrayJobID": str(job["array_job_id"] or job["raw_id"]),
            "ArrayTaskID": str(job["task_id"]) if job["task_id"] is not None else ""}
    cpu = job.get("cpu_seconds") or 0
    base["TotalCPU"] = f"{int(cpu) // 60:02d}:{cpu % 60:06.3f}"
    rows = [dict(base, JobID=job_id(job), JobIDRaw=str(job["raw_id"]), State=job["state"],
                 ExitCode=job["exit_code"] or "0:0", Reason=REASONS.get(job["state"], "None"),
                 Start=_stamp(job["start"]), End=_stamp(job["end"]),
                 Elapsed=_elapsed(job["start"], job["end"]), _key={job_id(job), str(job["raw_id"])})]
    if allocations or not job["start"]:
        return rows
    rows.append(dict(base, JobID=f"{job_id(job)}.batch", JobIDRaw=f"{job['raw_id']}.batch",
                     JobName="batch", State=job["state"], ExitCode=job["exit_code"] or "0:0",
                     Reason="", Start=_stamp(job["start"]), End=_stamp(job["end"]),
                     Elapsed=_elapsed(job["start"], job["end"]),
                     _key={f"{job_id(job)}.batch", f"{job['raw_id']}.batch"}))
    for st in job["steps"]:
        rows.append(dict(base, JobID=f"{job_id(job)}.{st['step']}", JobIDRaw=f"{job['raw_id']}.{st['step']}",
                         JobName=os.path.basename(st["argv"][-1]) if st["argv"] else "", State=st["state"],
                         ExitCode=st["exit_code"] or "0:0", Reason=REASONS.get(st["state"], "None"),
                         Start=_stamp(st["start"]), End=_stamp(st["end"]),
                         Elapsed=_elapsed(st["start"], st["end"]),
                         _key={f"{job_id(job)}.{st['step']}", f"{job['raw_id']}.{st['step']}"}))
    return rows


def sacct(argv: list[str], root: Path) -> int:
    opts, _ = parse_options(argv, SACCT_VALUE, SACCT_FLAGS, SACCT_ALIASES, stop_at_positional=False)
    fields = []
    for spec in opts.get("--format", "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode").split(","):
        m = re.fullmatch(r"\s*([A-Za-z]+)(?:%(-?)(\d+))?\s*", spec)
        name = next((f for f in SACCT_FIELDS if m and f.lower() == m.group(1).lower()), None)
        if name is None:
            raise Usage(f"Invalid field requested: \"{spec.strip()}\"")
        fields.append((name, int(m.group(3)) if m.group(3) else None, m.group(2) != "-"))
    if "--name" in opts and float(_env("FAKE_SLURM_POLL_WAIT", "0")) > 0:
        _since_last_poll(root, opts["--name"], float(_env("FAKE_SLURM_POLL_WAIT")))
    jobs = _select(all_jobs(root), opts)
    rows = []
    # tasks of an array still pending are one record <array id>_[<tasks>], raw id the array's
    pending: dict[int, list[dict]] = {}
    for job in jobs:
        if job["array_job_id"] is not None and job["state"] == "PENDING":
            pending.setdefault(job["array_job_id"], []).append(job)
        else:
            rows += _sacct_rows(job, bool(opts.get("--allocations")))
    for base, group in pending.items():
        row = _sacct_rows(group[0], True)[0]
        shown = f"{base}_[{compress_ranges([j['task_id'] for j in group])}]"
        rows.append(dict(row, JobID=shown, JobIDRaw=str(base), _key={shown, str(base)}
                         | {job_id(j) for j in group}))
    if "--jobs" in opts:
        wanted = set(opts["--jobs"].split(","))
        arrays = {w for w in wanted if w.isdigit()}
        rows = [r for r in rows if r["_key"] & wanted
                or (r["ArrayJobID"] in arrays and "." not in r["JobIDRaw"])]
    sep = opts.get("--delimiter", "|")
    parsable = opts.get("--parsable2") or opts.get("--parsable")
    if not opts.get("--noheader"):
        if parsable:
            print(sep.join(f for f, _, _ in fields) + (sep if opts.get("--parsable") else ""))
        else:
            print(" ".join(_fmt(f, w or 10, r) for f, w, r in fields))
            print(" ".join("-" * (w or 10) for f, w, r in fields))
    for row in rows:
        values = [str(row[f]) for f, _, _ in fields]
        if parsable:
            print(sep.join(values) + (sep if opts.get("--parsable") else ""))
        else:
            print(" ".join(_fmt(v, w or 10, r) for v, (f, w, r) in zip(values, fields)))
    return 0


# ----------------------------------------------------------------------------- the other tools
def scancel(argv: list[str], root: Path) -> int:
    ids, name, i = [], None, 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-M", "--clusters", "-n", "--name", "-u", "--user", "-s", "--signal"):
            if i + 1 >= len(argv):
                raise Usage(f"option '{arg}' requires an argument")
            name = argv[i + 1] if arg in ("-n", "--name") else name
            i += 2
            continue
        if arg.startswith(("--clusters=", "--user=", "--signal=")) or arg in ("-Q", "--quiet", "-f",
                                                                               "--full", "-b", "--batch"):
            pass
        elif arg.startswith("--name="):
            name = arg.split("=", 1)[1]
        elif arg.startswith("-"):
            raise Usage(f"unrecognized option '{arg}'")
        else:
            ids.append(arg)
        i += 1
    jobs = all_jobs(root)
    targets = [j for j in jobs if name is not None and j["name"] == name]
    code = 0
    for ident in ids:
        hit = [j for j in jobs if job_id(j) == ident or str(j["raw_id"]) == ident
               or (ident.isdigit() and str(j["array_job_id"]) == ident)]
        if not hit:
            print(f"scancel: error: Kill job error on job id {ident}: Invalid job id specified",
                  file=sys.stderr)
            code = 1
        targets += hit
    for job in targets:
        if job["state"] in END_STATES:
            continue
        update_job(root, job["raw_id"], state="CANCELLED", exit_code="0:15", end=time.time())
        pid = json.loads((root / "jobs" / f"{job['raw_id']}.json").read_text())["pid"]
        if pid:
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    return code


def scontrol(argv: list[str], root: Path) -> int:
    if argv[:2] == ["show", "config"]:
        print(f"Configuration data as of {_stamp(time.time())}")
        for key, value in [("AccountingStorageType", "accounting_storage/slurmdbd"),
                           ("ClusterName", CLUSTER),
                           ("MaxArraySize", _env("FAKE_SLURM_MAX_ARRAY_SIZE", "1001")),
                           ("MaxJobCount", "10000"),
                           ("MinJobAge", f"{_env('FAKE_SLURM_MIN_JOB_AGE', '300')} sec"),
                           ("SLURM_VERSION", "23.11.10")]:
            print(f"{key:<23} = {value}")
        return 0
    if argv[:2] == ["show", "partition"]:
        for i, p in enumerate(partitions()):
            print(f"PartitionName={p}\n   Default={'YES' if i == 0 else 'NO'} State=UP "
                  f"MaxTime=UNLIMITED MaxNodes=UNLIMITED\n   TotalCPUs=16 TotalNodes=1\n")
        return 0
    if argv[:2] == ["show", "job"] and len(argv) == 3:
        for j in all_jobs(root):
            if argv[2] in (job_id(j), str(j["raw_id"])):
                print(f"JobId={j['raw_id']} JobName={j['name']}\n   JobState={j['state']} "
                      f"Reason={REASONS.get(j['state'], 'None')} ExitCode={j['exit_code'] or '0:0'}")
                return 0
        raise Usage("Invalid job id specified")
    raise Usage(f"fake_slurm's scontrol knows 'show config|partition|job', not {' '.join(argv)!r}")


def sinfo(argv: list[str], root: Path) -> int:
    opts, _ = parse_options(argv, {"--format"}, {"--noheader", "--summarize"},
                            {"-o": "--format", "-h": "--noheader", "-s": "--summarize"},
                            stop_at_positional=False)
    fmt = opts.get("--format", "%P %a %l %D %N")
    names = {"P": "PARTITION", "a": "AVAIL", "l": "TIMELIMIT", "D": "NODES", "N": "NODELIST",
             "c": "CPUS", "m": "MEMORY"}
    if not opts.get("--noheader"):
        print(re.sub(r"%\.?\d*([a-zA-Z])", lambda m: names.get(m.group(1), m.group(1)), fmt))
    for i, p in enumerate(partitions()):
        values = {"P": p + ("*" if i == 0 else ""), "a": "up", "l": "infinite", "D": "1", "N": NODE,
                  "c": "16", "m": "128000"}
        print(re.sub(r"%\.?\d*([a-zA-Z])", lambda m, v=values: v.get(m.group(1), ""), fmt))
    return 0


def _width_list(values: list[str], fmt_arg: str | None) -> list[str]:
    m = re.search(r"%(-?)(\d+)", fmt_arg or "")
    if not m:
        return values
    width = int(m.group(2))
    return [v.ljust(width) if m.group(1) else v.rjust(width) for v in values]


def sacctmgr(argv: list[str], root: Path) -> int:
    words = [a for a in argv if not a.startswith("-")]
    flags = [a for a in argv if a.startswith("-")]
    for f in flags:
        if f not in ("-n", "--noheader", "-s", "--associations", "-P", "--parsable2", "-p", "-ns", "-sn"):
            raise Usage(f"unrecognized option '{f}'")
    if len(words) < 2 or words[0] not in ("list", "show") or words[1] not in ("user", "users",
                                                                               "account", "accounts"):
        raise Usage(f"fake_slurm's sacctmgr knows 'list user|account', not {' '.join(argv)!r}")
    fmt = next((w.split("=", 1)[1] for w in words if w.lower().startswith("format=")), None)
    users = [w for w in words[2:] if "=" not in w]
    if users and getpass.getuser() not in users:
        return 0
    if not any(f in ("-n", "--noheader", "-ns", "-sn") for f in flags):
        print(_width_list(["Account"], fmt)[0])
    for line in _width_list(accounts(), fmt):
        print(line)
    return 0


def sshare(argv: list[str], root: Path) -> int:
    opts, _ = parse_options(argv, {"--format", "--accounts", "--users"},
                            {"--noheader", "--Users", "--all", "--parsable2"},
                            {"-o": "--format", "-A": "--accounts", "-u": "--users", "-n": "--noheader",
                             "-h": "--noheader", "-U": "--Users", "-a": "--all", "-P": "--parsable2"},
                            stop_at_positional=False)
    if not opts.get("--noheader"):
        print(_width_list(["Account"], opts.get("--format"))[0])
    for line in _width_list(accounts(), opts.get("--format")):
        print(line)
    return 0


# ----------------------------------------------------------------------------- entry point
def cancel_all(root: Path) -> list[str]:
    """Test teardown: cancel every job still pending or running (their process groups)."""
    os.environ["FAKE_SLURM_DIR"] = str(root)
    live = [job_id(j) for j in all_jobs(root) if j["state"] not in END_STATES]
    if live:
        scancel(live, root)
    return live


def main(argv: list[str]) -> int:
    prog = os.path.basename(argv[0])
    if prog not in TOOLS and prog != "_run":
        if len(argv) < 2 or argv[1] not in (*TOOLS, "_run"):
            print(f"usage: fake_slurm.py {{{'|'.join(TOOLS)}}} ARGS...  (or call it by one of these "
                  "names)", file=sys.stderr)
            return 2
        prog, argv = argv[1], argv[1:]
    args = argv[1:]
    try:
        root = state_dir()
        if prog == "_run":
            run_job(int(args[0]), root)
            return 0
        append_jsonl(root / "calls.jsonl", {"tool": prog, "argv": args, "cwd": os.getcwd(),
                                            "job": os.environ.get("SLURM_JOB_ID"), "time": time.time()})
        return globals()[prog](args, root)
    except Usage as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
