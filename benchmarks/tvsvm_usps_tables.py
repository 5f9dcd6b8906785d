"""Tables 1 and 2 of Bresson & Zhang (TV-SVM) on USPS through the library, outside the workflow.

Reads config/experiments/tvsvm_usps.yaml (datasets, graph, methods with the selected
hyper-parameters, protocols) and runs every method of an experiment on every split with the same
code a solve job runs (gssl.datasets -> gssl.graphs.build_graph -> gssl.splits.make_splits with
the workflow's seeds -> gssl.solvers.make_solver -> fit); only the repeat count can be raised
(split i is seeded by (dataset, protocol id, i), so the workflow's splits are the first ones here).

    GSSL_DATA_MIRROR=../shared/data OMP_NUM_THREADS=1 nice -n 10 \
      .venv/bin/python benchmarks/tvsvm_usps_tables.py --experiment tvsvm_usps49 --repeats 10 \
      --json results/benchmarks/tvsvm_usps49.json

``--select`` instead runs the hyper-parameter selection grid on the held-out selection splits
(protocol id ``tvsel_lpc<N>`` for ``--select-labels N``, never used for the reported runs).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gssl.datasets import load, select  # noqa: E402
from gssl.features import apply_chain  # noqa: E402
from gssl.graphs import build_graph  # noqa: E402
from gssl.solvers import make_solver  # noqa: E402
from gssl.splits import LABELED, UNLABELED, make_splits  # noqa: E402


def load_problem(cfg, ds_id, prep_id, graph_id):
    spec = cfg["datasets"][ds_id]
    ds = load(spec["source"], raw_dir=str(ROOT / "resources/raw"))
    if spec.get("classes") or spec.get("groups"):
        ds = select(ds, classes=spec.get("classes"), groups=spec.get("groups"))
    X = apply_chain(ds.X, cfg["preprocessing"][prep_id], random_state=0)
    X = np.asarray(X, dtype=np.float64)
    t0 = time.perf_counter()
    graph = build_graph(X, cfg["graphs"][graph_id])
    graph.X = X
    return graph, np.asarray(ds.y), time.perf_counter() - t0


def run_method(graph, y, roles, method):
    n_classes = int(y.max()) + 1
    out = []
    for role in roles:
        est = make_solver(method["solver"], method.get("params"))
        t0 = time.perf_counter()
        est.fit(graph, np.where(role == LABELED, y, -1), n_classes=n_classes)
        sec = time.perf_counter() - t0
        m = role == UNLABELED
        out.append({"error": float(100 * np.mean(est.predict()[m] != y[m])), "seconds": sec,
                    "n_iter": int(getattr(est, "n_iter_", 0) or 0),
                    "stop_reason": getattr(est, "stop_reason_", None),
                    **getattr(est, "fit_metrics_", {})})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(ROOT / "config/experiments/tvsvm_usps.yaml"))
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--protocols", nargs="*", help="protocol ids (default: the experiment's)")
    ap.add_argument("--methods", nargs="*", help="method ids (default: the experiment's)")
    ap.add_argument("--select", metavar="GRID_JSON",
                    help="selection mode: JSON {method_id: {param: [values...]}} grid")
    ap.add_argument("--select-repeats", type=int, default=3)
    ap.add_argument("--select-labels", type=int, default=1,
                    help="labels per class of the selection draws (protocol id tvsel_lpc<N>)")
    ap.add_argument("--json", help="write all per-run results here")
    args = ap.parse_args(argv)

    cfg = yaml.safe_load(Path(args.config).read_text())
    exp = cfg["experiments"][args.experiment]
    ds_id, prep_id, graph_id = exp["datasets"][0], exp["preprocessing"][0], exp["graphs"][0]
    graph, y, gsec = load_problem(cfg, ds_id, prep_id, graph_id)
    print(f"# {args.experiment}: {ds_id} n={y.size} classes={np.bincount(y).tolist()} "
          f"graph {graph_id} ({graph.W.nnz} nonzeros, {gsec:.1f}s)", flush=True)
    results = {"experiment": args.experiment, "dataset": ds_id, "n": int(y.size), "runs": {}}

    if args.select:
        grid = json.loads(Path(args.select).read_text())
        spec = {"kind": "labels_per_class", "n": args.select_labels,
                "repeats": args.select_repeats}
        roles = make_splits(y, spec, ds_id, f"tvsel_lpc{args.select_labels}")
        for mid, space in grid.items():
            base = cfg["methods"][mid]
            keys = list(space)
            for values in itertools.product(*(space[k] for k in keys)):
                params = json.loads(json.dumps(base.get("params") or {}))
                for k, v in zip(keys, values):
                    params[k] = v
                runs = run_method(graph, y, roles, {"solver": base["solver"], "params": params})
                errs = [r["error"] for r in runs]
                print(f"select {mid} {dict(zip(keys, values))}: mean {np.mean(errs):.2f} "
                      f"runs {np.round(errs, 2).tolist()} "
                      f"({np.mean([r['seconds'] for r in runs]):.1f}s/fit)", flush=True)
                results["runs"].setdefault(mid, []).append(
                    {"params": dict(zip(keys, values)), "runs": runs})
    else:
        protos = args.protocols or exp["protocols"]
        methods = args.methods or exp["methods"]
        for pid in protos:
            spec = dict(cfg["protocols"][pid], repeats=args.repeats)
            roles = make_splits(y, spec, ds_id, pid)
            for mid in methods:
                runs = run_method(graph, y, roles, cfg["methods"][mid])
                errs = [r["error"] for r in runs]
                print(f"{pid} {mid}: error {np.mean(errs):.2f} ± {np.std(errs):.2f} "
                      f"({len(errs)} runs; {np.mean([r['seconds'] for r in runs]):.1f}s/fit, "
                      f"{np.mean([r['n_iter'] for r in runs]):.0f} it)", flush=True)
                results["runs"][f"{pid}/{mid}"] = runs
                if args.json:
                    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
                    Path(args.json).write_text(json.dumps(results, indent=1))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
