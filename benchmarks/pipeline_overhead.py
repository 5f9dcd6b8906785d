"""Pipeline overhead: what the workflow costs on top of the numerics.

Prints, measured in one run on this machine:
  1. DAG construction time of a dry run for a config of >= 2,000 solve jobs;
  2. the solve stage on one cell of >= 20 cheap splits, run twice side by side: one job per split
     (splits_per_job: 1) and one job for the cell (the default); per split: everything but the fit
     (process start, imports, loading, writing the outputs, from the Snakemake benchmark files and
     the jobs' own timings) plus the split's share of the MLflow logging (the experiment's
     logging job logs every job's runs: its time logging them, its start excluded: the job opens
     the store, creating its schema and the experiment where missing, once per experiment), and
     the ratio of the two;
  3. MLflow logging time per run: in a batched job (its runs' share of the job's logging time,
     connection included) and in-process warm (log_run on the sqlite store).

    python benchmarks/pipeline_overhead.py [--jobs 2000] [--splits 20] [--log-runs 50]

Everything runs in a temporary copy of the workflow; nothing under results/ is touched.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def workspace(root: Path, config: dict) -> Path:
    shutil.copy(REPO / "environment.yml", root)
    shutil.copytree(REPO / "workflow", root / "workflow")
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return root


def config_for(n_methods: int, repeats: int) -> dict:
    """A moons config with n_methods x 2 protocols x repeats solve jobs (cheap RLS fits)."""
    methods = {f"rls{i}": {"solver": "rls", "params": {"kernel": {"kind": "rbf", "sigma": 1.0 + i},
                                                       "gamma_A": 0.01}}
               for i in range(n_methods)}
    return {
        "datasets": {"moons": {"source": "two_moons",
                               "params": {"n_samples": 200, "n_features": 10, "noise": 0.1}}},
        "preprocessing": {"std": ["standardize"]},
        "graphs": {"knn8": {"kind": "knn", "k": 8, "weights": "binary"}},
        "methods": methods,
        "protocols": {"lpc1": {"kind": "labels_per_class", "n": 1, "repeats": repeats},
                      "lpc2": {"kind": "labels_per_class", "n": 2, "repeats": repeats}},
        "experiments": {"bench": {"datasets": ["moons"], "preprocessing": ["std"],
                                  "graphs": ["knn8"], "methods": sorted(methods),
                                  "protocols": ["lpc1", "lpc2"]}},
    }


def snakemake(ws: Path, *args) -> float:
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env["GSSL_OFFLINE"] = "1"
    t0 = time.perf_counter()
    proc = subprocess.run([SNAKEMAKE, *args], cwd=ws, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"snakemake {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return elapsed


def dag_time(n_jobs: int) -> tuple[int, float]:
    """Wall time of `snakemake -n` (start, config check, DAG) for >= n_jobs solve jobs."""
    n_methods = max(1, -(-n_jobs // (2 * 50)))
    with tempfile.TemporaryDirectory() as tmp:
        cfg = config_for(n_methods, 50)
        cfg["splits_per_job"] = 1  # the DAG's size at its largest: one job per split
        ws = workspace(Path(tmp), cfg)
        t = snakemake(ws, "-n", "--cores", "1", "--quiet")
    return n_methods * 2 * 50, t


def solve_overhead(n_splits: int, per_job) -> dict:
    """One cell of ``n_splits`` splits, ``per_job`` splits per solve job (None: the whole cell)."""
    cfg = config_for(1, n_splits)
    cfg["experiments"]["bench"]["protocols"] = ["lpc1"]
    cfg["splits_per_job"] = per_job
    with tempfile.TemporaryDirectory() as tmp:
        ws = workspace(Path(tmp), cfg)
        snakemake(ws, "--cores", "1")
        jobs = []  # (wall time from Snakemake's benchmark file, the job's JSON output)
        for tsv in (ws / "results" / "benchmarks" / "solve").rglob("*.tsv"):
            with open(tsv) as fh:
                wall = float(next(csv.DictReader(fh, delimiter="\t"))["s"])
            out = Path(str(tsv).replace("/benchmarks/solve/", "/runs/")).with_suffix(".json")
            jobs.append((wall, json.loads(out.read_text())))
        logger = json.loads((ws / "results" / "mlflow" / "bench.summary.json").read_text())
    fit = [sum(s["metrics"]["fit_seconds"] for s in b["splits"]) for _, b in jobs]
    n = sum(len(b["splits"]) for _, b in jobs)
    wall = sum(w for w, _ in jobs)
    log = logger["timings"]["log_seconds"]  # every run of the experiment: this cell's
    runs = logger["n_logged_now"]  # the split runs and each job's parent run
    assert runs == n + len(jobs), (runs, n, len(jobs))
    return {"jobs": len(jobs), "splits": n, "wall": wall, "fit": sum(fit),
            "solve_per_split": (wall - sum(fit)) / n, "log_per_split": log / n,
            "overhead_per_split": (wall - sum(fit) + log) / n, "log_per_run": log / runs,
            "init": logger["timings"]["init_seconds"],
            "job_overhead_median": statistics.median(w - f for (w, _), f in zip(jobs, fit))}


def mlflow_log_time(n: int) -> dict:
    from gssl.tracking.client import init_store, log_run

    with tempfile.TemporaryDirectory() as tmp:
        uri = f"sqlite:///{tmp}/mlflow.db"
        t0 = time.perf_counter()
        exp_id = init_store(uri, ["bench"], results_dir=tmp)["bench"]
        t_init = time.perf_counter() - t0
        params = {"method": {"solver": "rls", "params": {"gamma_A": 0.01, "kernel": {"sigma": 1}}},
                  "graph": {"kind": "knn", "k": 10}, "seed": 0}
        metrics = {"error_unlabeled": 12.5, "fit_seconds": 0.1, "n_iter": 1.0}
        times = []
        for i in range(n):
            t0 = time.perf_counter()
            log_run(uri, exp_id, f"run{i}", {"gssl.method": "rls"}, params, metrics,
                    history=[{"iteration": 1, "objective": 1.0}],
                    artifacts={"predictions.json": {"predictions": list(range(200))}})
            times.append(time.perf_counter() - t0)
    return {"init": t_init, "median": statistics.median(times), "max": max(times), "n": n}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2000, help="solve jobs in the dry-run config")
    ap.add_argument("--splits", type=int, default=20, help="splits of the cell solved both ways")
    ap.add_argument("--log-runs", type=int, default=50, help="MLflow runs logged in-process")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    import_mlflow = subprocess.run([sys.executable, "-c", "import time; t=time.perf_counter(); "
                                    "import gssl.tracking.client, mlflow.tracking, "
                                    "mlflow.store.tracking.sqlalchemy_store; "
                                    "print(time.perf_counter()-t)"], capture_output=True, text=True)
    import_sklearn = subprocess.run([sys.executable, "-c", "import time; t=time.perf_counter(); "
                                     "import gssl.solvers.registry, gssl.pipeline.stages; "
                                     "print(time.perf_counter()-t)"], capture_output=True, text=True)
    jobs, t_dag = dag_time(args.jobs)
    single = solve_overhead(args.splits, 1)
    batched = solve_overhead(args.splits, None)
    ml = mlflow_log_time(args.log_runs)

    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(f"1. DAG construction, dry run of {jobs} solve jobs ({jobs + 8} jobs in all): "
          f"{t_dag:.1f} s ({1000 * t_dag / jobs:.2f} ms per job)")
    print(f"2. one cell of {args.splits} cheap splits (RLS, 200 points), snakemake --cores 1:")
    for name, r in (("one job per split", single), ("one job per cell ", batched)):
        print(f"     {name}: {r['jobs']:>3} jobs, wall {r['wall']:6.1f} s, fits {r['fit']:.2f} s -> "
              f"overhead {r['overhead_per_split']:.3f} s per split (solve jobs {r['solve_per_split']:.3f} s + "
              f"MLflow logging {r['log_per_split']:.3f} s: {1000 * r['log_per_run']:.0f} ms per run); "
              f"the logging job's store opening (schema, experiment), once per experiment: {r['init']:.2f} s")
    print(f"     ratio: {single['overhead_per_split'] / batched['overhead_per_split']:.1f}x less overhead "
          f"per split batched; a cell's first split costs a job's fixed overhead: "
          f"{single['job_overhead_median']:.2f} s (median over the one-split jobs: process start, "
          f"imports, loading, writing) + its 2 runs' logging {2 * single['log_per_run']:.2f} s")
    print(f"     import of gssl.tracking.client + MLflow sqlite store: {float(import_mlflow.stdout):.2f} s; "
          f"import of gssl solvers (scikit-learn, scipy): {float(import_sklearn.stdout):.2f} s")
    print(f"3. MLflow log_run on sqlite, {ml['n']} runs in one process: median {1000 * ml['median']:.0f} ms, "
          f"max {1000 * ml['max']:.0f} ms per run (store init {ml['init']:.2f} s)")
    print(f"total benchmark time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
