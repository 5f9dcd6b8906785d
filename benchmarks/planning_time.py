"""Planning time: `snakemake -n` on a researcher's 100,000 x 50 CSV, beside a bare Snakefile.

Prints, measured side by side in one run on this machine (medians of ``--repeats`` dry runs,
taken in turn so that a load change hits every variant alike; wall time and peak memory):
  1. bare: a one-rule Snakefile (what Snakemake itself costs);
  2. unchanged: gssl's workflow on the CSV config, planned before (the check kept);
  3. changed config: a method's parameter changed (the config checked again; the CSV's facts
     and the protocols' draw verdicts kept);
  4. first plan: nothing kept (the CSV parsed, every protocol drawn).

    python benchmarks/planning_time.py [--repeats 5]

Everything runs in a temporary folder; nothing under results/ is touched.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def write_csv(path: Path, n: int = 100_000, d: int = 50) -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, n)
    X = rng.normal(size=(n, d))
    X[:, 0] += y
    with open(path, "w") as fh:
        fh.write(",".join([*(f"f{i}" for i in range(d)), "label"]) + "\n")
        np.savetxt(fh, np.column_stack([X, y]), delimiter=",", fmt=["%.6f"] * d + ["%d"])


def config(csv: Path, results: Path, tol: float) -> dict:
    """4 methods x 3 label counts x 8 splits on the CSV, as the issue's new user ran."""
    return {"run": ["mine"], "results": str(results), "results_outside_workdir": True,
            "datasets": {"big": {"source": "file", "path": str(csv), "label": "label"}},
            "preprocessing": {"raw": []}, "graphs": {"knn10": {"kind": "knn", "k": 10}},
            "methods": {"laplace": {"solver": "laplace"}, "poisson": {"solver": "poisson", "params": {"tol": tol}},
                        "randomwalk": {"solver": "randomwalk"}, "spreading": {"solver": "label_spreading"}},
            "protocols": {f"l{n}": {"kind": "labels_per_class", "n": n, "repeats": 8} for n in (1, 5, 10)},
            "experiments": {"mine": {"datasets": ["big"], "preprocessing": ["raw"], "graphs": ["knn10"],
                                     "methods": ["laplace", "poisson", "randomwalk", "spreading"],
                                     "protocols": ["l1", "l5", "l10"]}}}


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, peak resident MB) of one run, which must succeed (peak memory: GNU time)."""
    if not Path("/usr/bin/time").exists():
        raise SystemExit("planning_time.py reads each run's peak memory with GNU time: install it "
                         "(Debian/Ubuntu: apt install time)")
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return wall, int(proc.stderr.strip().splitlines()[-1]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gssl-planning-") as tmp:
        tmp = Path(tmp)
        csv, results = tmp / "big.csv", tmp / "results"
        write_csv(csv)

        def plan(tol: float) -> tuple[float, float]:
            path = tmp / f"tol{tol:g}.yaml"
            if not path.exists():
                path.write_text(yaml.safe_dump(config(csv, results, tol)))
            return timed([SNAKEMAKE, "-n", "--quiet", "--configfile", str(path)], REPO)

        bare = tmp / "bare"
        bare.mkdir()
        (bare / "Snakefile").write_text('rule all:\n    output: "x"\n    shell: "touch {output}"\n')
        fresh = iter(range(1, 10_000))  # a new tolerance each time: a config not checked before
        variants = {
            "bare Snakefile": lambda: timed([SNAKEMAKE, "-n", "--quiet"], bare),
            "unchanged (check kept)": lambda: plan(1e-6),
            "changed config": lambda: plan(1e-5 * next(fresh)),
            "first plan (nothing kept)": lambda: (shutil.rmtree(results / "planning", ignore_errors=True),
                                                  plan(1e-6))[1],
        }
        plan(1e-6)  # warm the file system
        runs = {name: [] for name in variants}
        for _ in range(args.repeats):
            for name, run in variants.items():
                runs[name].append(run())
        base = statistics.median(w for w, _ in runs["bare Snakefile"])
        print(f"snakemake -n, medians of {args.repeats} (100,000 x 50 CSV; 4 methods x 3 protocols x 8 splits)")
        for name, vals in runs.items():
            wall, mem = statistics.median(w for w, _ in vals), statistics.median(m for _, m in vals)
            print(f"  {name:28s} {wall:5.2f} s  {mem:5.0f} MB  {wall / base:4.2f}x bare")


if __name__ == "__main__":
    main()
