"""Cost of the TV / Cheeger-cut classifiers (issue #4) on the 4-class USPS problem (0/1/4/9).

Reports, per method of config/experiments/tvsvm_usps.yaml's tvsvm_usps0149_paper experiment, the time
to solution and the outer iterations on one split (1 label per class), and the graph ROF prox's
time per iteration against the time of the sparse matvecs it needs (D g and D'p, the bound a
first-order primal-dual iteration can approach).

    GSSL_DATA_MIRROR=../shared/data OMP_NUM_THREADS=1 nice -n 10 \
      .venv/bin/python benchmarks/tv_solvers.py [--methods tv0149_tvrls ...] [--json out.json]
"""

from __future__ import annotations

import argparse
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
from gssl.optim import gradient_norm_bound, gradient_operator, rof_prox  # noqa: E402
from gssl.solvers import make_solver  # noqa: E402
from gssl.splits import LABELED, UNLABELED, make_splits  # noqa: E402


def load_problem(cfg, ds_id, prep_id, graph_id):
    """The dataset, features and graph of a config's ids, as the workflow builds them."""
    spec = cfg["datasets"][ds_id]
    ds = load(spec["source"], raw_dir=str(ROOT / "resources/raw"))
    if spec.get("classes") or spec.get("groups"):
        ds = select(ds, classes=spec.get("classes"), groups=spec.get("groups"))
    X = np.asarray(apply_chain(ds.X, cfg["preprocessing"][prep_id], random_state=0), dtype=np.float64)
    t0 = time.perf_counter()
    graph = build_graph(X, cfg["graphs"][graph_id])
    graph.X = X
    return graph, np.asarray(ds.y), time.perf_counter() - t0


def prox_vs_matvec(D, C, iters=200, repeat=3):
    rng = np.random.default_rng(0)
    z = rng.normal(size=(D.shape[1], C))
    DT = D.T.tocsr()
    best_mv = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(iters):
            p = D @ z
            DT @ p
        best_mv = min(best_mv, (time.perf_counter() - t0) / iters)
    best_prox = np.inf
    normD = gradient_norm_bound(D)
    for _ in range(repeat):
        t0 = time.perf_counter()
        _, info = rof_prox(D, z, 1.0, 1.0, tol=0.0, max_iter=iters, norm_D=normD)
        best_prox = min(best_prox, (time.perf_counter() - t0) / info["iterations"])
    return best_prox, best_mv


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(ROOT / "config/experiments/tvsvm_usps.yaml"))
    ap.add_argument("--experiment", default="tvsvm_usps0149_paper")
    ap.add_argument("--methods", nargs="*")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    cfg = yaml.safe_load(Path(args.config).read_text())
    exp = cfg["experiments"][args.experiment]
    graph, y, gsec = load_problem(cfg, exp["datasets"][0], exp["preprocessing"][0],
                                  exp["graphs"][0])
    C = int(y.max()) + 1
    D = gradient_operator(graph.W)
    print(f"# {args.experiment}: n={y.size}, C={C}, edges={D.shape[0]} (graph {gsec:.1f}s)")
    out = {"n": int(y.size), "edges": int(D.shape[0]), "methods": {}}
    for cols in (1, C):
        tp, tm = prox_vs_matvec(D, cols)
        print(f"ROF prox, {cols} column(s): {1e3 * tp:.3f} ms/iteration; D g + D'p: "
              f"{1e3 * tm:.3f} ms (ratio {tp / tm:.2f})")
        out[f"prox_ms_per_iter_{cols}"] = 1e3 * tp
        out[f"matvec_ms_{cols}"] = 1e3 * tm
    role = make_splits(y, {"kind": "labels_per_class", "n": 1, "repeats": 1}, exp["datasets"][0],
                       "tvlpc1")[0]
    print("| method | solver | seconds | outer iterations | stop | prox iterations | error % |")
    print("|---|---|---|---|---|---|---|")
    for mid in args.methods or exp["methods"]:
        m = cfg["methods"][mid]
        est = make_solver(m["solver"], m.get("params"))
        t0 = time.perf_counter()
        est.fit(graph, np.where(role == LABELED, y, -1), n_classes=C)
        sec = time.perf_counter() - t0
        mask = role == UNLABELED
        err = 100 * np.mean(est.predict()[mask] != y[mask])
        pit = getattr(est, "prox_iterations_", 0)
        print(f"| {mid} | {m['solver']} | {sec:.1f} | {est.n_iter_} | {est.stop_reason_} | "
              f"{pit} | {err:.2f} |", flush=True)
        out["methods"][mid] = {"seconds": sec, "n_iter": int(est.n_iter_),
                               "stop_reason": est.stop_reason_, "prox_iterations": int(pit),
                               "error": float(err)}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
