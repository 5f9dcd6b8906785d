"""Laplace, Poisson, PoissonMBO, volume MBO and multiclass MBO learning: fit time of gssl beside GraphLearning's (1.7.5, the
authors' package), on the same weight matrix and the same label draws, measured side by side in
one process. Prints per data set, method and labels per class the median fit time of each, the
ratio GraphLearning / gssl (> 1: gssl faster), and, as a check that the same problem was solved,
the mean accuracy of each on the unlabeled points and their difference.

The graphs, draws and method parameters are the workflow's (config/experiments/lowlabel.yaml:
the knn10_calder graph, read from results/graphs when the workflow has built it, else built with
the same library code; gssl.splits.make_splits's draws; each method's defaults).
PoissonMBO gets the labeled set's class fractions as priors on both sides; so does volume MBO
(as integer class sizes, which GraphLearning takes as fractions a hair above them), both at
temperature 0.1 with exact volumes. Multiclass MBO starts from the same seeded random labels.
``--methods`` picks among them (default: the three of the issue's speed goal).

    OMP_NUM_THREADS=1 python benchmarks/lowlabel_speed.py --datasets mnist_test usps optdigits \\
        pendigits --labels 1 3 5 --draws 5 [--graph-cache results/benchmarks/graphs]
    OMP_NUM_THREADS=1 python benchmarks/lowlabel_speed.py --datasets fashion_mnist --labels 1 \\
        --draws 3 --graph-cache results/benchmarks/graphs      # the 70,000-point goal (<= 30 s)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

import graphlearning as gl  # noqa: E402

from gssl.datasets import load  # noqa: E402
from gssl.graphs import build_graph  # noqa: E402
from gssl.graphs.cache import load_graph, save_graph  # noqa: E402
from gssl.optim.mbo import class_volumes  # noqa: E402
from gssl.optim.shared_operators import shared_graph_operators  # noqa: E402
from gssl.solvers.registry import make_solver  # noqa: E402
from gssl.splits import LABELED, make_splits  # noqa: E402

GRAPH = "knn10_calder"
METHODS = ("laplace", "poisson", "poisson_mbo")
MORE = ("volume_mbo", "multiclass_mbo")


def graph_of(cfg: dict, name: str, raw_dir: str, cache_dir: str | None):
    """The data set and its graph: the workflow's cached graph file when it exists (the very W of
    the lowlabel table), else one built here (and kept in ``cache_dir`` when given)."""
    entry = cfg["datasets"][name]
    ds = load(entry["source"], raw_dir=raw_dir, params=entry.get("params"))
    spec = dict(cfg["graphs"][GRAPH])
    workflow = REPO / "results" / "graphs" / name / "raw" / f"{GRAPH}.h5"
    if workflow.exists():
        return ds, load_graph(workflow, expect_params=spec), 0.0
    path = Path(cache_dir) / name / f"{GRAPH}.h5" if cache_dir else None
    if path is not None and path.exists():
        return ds, load_graph(path, expect_params=spec), 0.0
    t0 = time.perf_counter()
    g = build_graph(np.asarray(ds.X, dtype=np.float64), spec)
    seconds = time.perf_counter() - t0
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_graph(path, g, spec, build_seconds=seconds)
    return ds, g, seconds


def reference_model(method: str, W, priors):
    if method == "laplace":
        return gl.ssl.laplace(W)
    if method == "poisson":
        return gl.ssl.poisson(W)
    if method == "volume_mbo":
        n = W.shape[0]
        return gl.ssl.volume_mbo(W, class_priors=(class_volumes(priors, n) + 0.5) / n,
                                 temperature=0.1, volume_constraint=1.0)
    if method == "multiclass_mbo":
        np.random.seed(0)  # its start: np.random.rand, as ours with random_state=0
        return gl.ssl.multiclass_mbo(W)
    return gl.ssl.poisson_mbo(W, class_priors=priors)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "config/experiments/lowlabel.yaml"))
    ap.add_argument("--datasets", nargs="+", default=["optdigits", "usps"])
    ap.add_argument("--labels", nargs="+", type=int, default=[1, 3, 5], help="labels per class")
    ap.add_argument("--draws", type=int, default=5, help="label draws per count (the workflow's first ones)")
    ap.add_argument("--raw-dir", default=str(REPO / "resources/raw"))
    ap.add_argument("--graph-cache", default=None, help="folder for an HDF5 cache of the graphs")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS + MORE)
    args = ap.parse_args(argv)
    cfg = yaml.safe_load(Path(args.config).read_text())

    print(f"{'dataset':14s} {'method':12s} {'l/c':>3s} {'gssl s':>8s} {'GL s':>8s} {'GL/gssl':>8s} "
          f"{'acc gssl':>9s} {'acc GL':>8s} {'diff':>6s}")
    for name in args.datasets:
        ds, g, build = graph_of(cfg, name, args.raw_dir, args.graph_cache)
        y = np.asarray(ds.y)
        print(f"# {name}: n = {y.size}, graph built in {build:.1f} s (0: the workflow's cached graph)")
        with shared_graph_operators(g.W):  # as in a workflow cell: the draws share W's operators
            run_dataset(args, cfg, name, y, g)
    return 0


def run_dataset(args, cfg: dict, name: str, y: np.ndarray, g) -> None:
    """Every method at every label count on one data set's graph, ours and GraphLearning's."""
    for per_class in args.labels:
        pid = f"lpc{per_class}"
        roles = make_splits(y, cfg["protocols"][pid], name, pid)[:args.draws]
        for method in args.methods:
            t_ours, t_gl, acc_ours, acc_gl = [], [], [], []
            for role in roles:
                train = np.flatnonzero(role == LABELED)
                codes = np.full(y.size, -1)
                codes[train] = y[train]
                unl = role != LABELED
                priors = np.bincount(y[train], minlength=y.max() + 1) / train.size
                params = dict(cfg["methods"][method].get("params") or {})
                if method == "multiclass_mbo":
                    params["random_state"] = 0
                est, t = timed(lambda: make_solver(method, params).fit(g, codes))
                t_ours.append(t)
                acc_ours.append(100 * np.mean(est.transduction_[unl] == y[unl]))
                model = reference_model(method, g.W, priors)
                pred, t = timed(lambda: model.fit_predict(train, y[train]))
                t_gl.append(t)
                acc_gl.append(100 * np.mean(pred[unl] == y[unl]))
            mo, mg = statistics.median(t_ours), statistics.median(t_gl)
            a, b = float(np.mean(acc_ours)), float(np.mean(acc_gl))
            print(f"{name:14s} {method:12s} {per_class:3d} {mo:8.3f} {mg:8.3f} {mg / mo:8.2f} "
                  f"{a:9.2f} {b:8.2f} {a - b:+6.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
