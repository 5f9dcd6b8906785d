"""How far a solver's stop rule is at its iteration limit: one split of a cell a workflow run has
cached, fitted again with a larger ``max_iter`` (and ``tol`` 1e-12, so that it runs to the end), its
recorded history at chosen iterations, and its errors beside those of the run's own fit.

For the cells the reproduction pages flag ⚠ (not converged): do more iterations change the numbers?

    OMP_NUM_THREADS=1 python benchmarks/iterations_to_tolerance.py config/experiments/ssdl.yaml \\
        --results results/repro_ssdl --experiment ssdl_t6_usps --method ssdlga_usps --max-iter 60

Prints JSON: per split, the errors of the run (its block file) and of the longer fit, and every
numeric history field (objective, relative change, residual) at iterations 1, 10, 20, 50, 100, ...
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

from gssl.pipeline.config import load_yaml_files
from gssl.pipeline.stages import Cell, fit_split

MARKS = (1, 5, 10, 13, 15, 20, 21, 30, 40, 50, 60, 100, 200, 300, 500, 1000)


def cell_paths(cfg: dict, results: Path, experiment: str, protocol: str | None) -> tuple:
    exp = cfg["experiments"][experiment]
    ds, prep, graph = exp["datasets"][0], exp["preprocessing"][0], exp["graphs"][0]
    protocol = protocol or exp["protocols"][0]
    return (results / "features" / ds / f"{prep}.h5", results / "graphs" / ds / prep / f"{graph}.h5",
            results / "splits" / ds / f"{protocol}.h5",
            results / "runs" / experiment / ds / prep / graph, results / "selected" / experiment / ds / prep / graph,
            protocol)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--method", required=True)
    ap.add_argument("--protocol", help="default: the experiment's first")
    ap.add_argument("--splits", type=int, nargs="+", default=[0])
    ap.add_argument("--max-iter", type=int, required=True)
    args = ap.parse_args()

    cfg = load_yaml_files([args.config])
    features, graph, splits, runs, selected, protocol = cell_paths(cfg, args.results, args.experiment, args.protocol)
    entry = cfg["methods"][args.method]
    chosen = selected / f"{args.method}.json"
    params = {**entry.get("params", {}),
              **(json.loads(chosen.read_text())["values"] if chosen.exists() else {}),
              "max_iter": args.max_iter, "tol": 1e-12}
    run_splits = {s["split"]: s for p in (runs / args.method / protocol).glob("*.json")
                  for s in json.loads(p.read_text())["splits"]}
    cell = Cell(features, graph, splits)
    out = {"method": args.method, "protocol": protocol, "params": params, "splits": {}}
    for split in args.splits:
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tol 1e-12: it stops at max_iter
            r = fit_split(cell, split, {"solver": entry["solver"], "params": params}, seed=cfg.get("seed", 0))
        history = r["history"]
        fields = [k for k, v in history[0].items() if k != "iteration" and isinstance(v, (int, float))]
        own = run_splits.get(split, {})
        out["splits"][split] = {
            "cpu_seconds": round(time.process_time() - t0, 1),
            "run": {"n_iter": own.get("metrics", {}).get("n_iter"), "stop_reason": own.get("stop_reason"),
                    **{k: v for k, v in own.get("metrics", {}).items() if k.startswith("error_")}},
            "longer": {"n_iter": len(history), **{k: v for k, v in r["metrics"].items() if k.startswith("error_")}},
            "history": {i: {k: float(f"{history[i - 1][k]:.7g}") for k in fields}
                        for i in MARKS if i <= len(history)}}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
