"""Laplace and Poisson fits from 10^5 to 2 x 10^6 points: the splits of a cell fitted on graph
operators built per split and on operators shared by the cell (``shared_graph_operators``, as
the workflow's solve job does), side by side in one process; then the log-log slopes between
sizes (issue #16: the slope of one fit, goal <= 1.2), and the time of one CG iteration.

The graphs are scale.yaml's (four half-moons in 50-D, noise 0.1, 10-NN ``gaussian_kth`` weights,
mean-symmetrized) built with the NN-descent backend, the quickest at these sizes; 10 labels per
class, ``--draws`` seeded draws per size, the same in both modes.

    OMP_NUM_THREADS=1 python benchmarks/fit_scaling.py [--sizes 100000,1000000,2000000] [--draws 3]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from gssl import build_graph, make_solver  # noqa: E402
from gssl.datasets.synthetic import four_moons  # noqa: E402
from gssl.optim.shared_operators import shared_graph_operators  # noqa: E402

METHODS = ("poisson", "laplace")


def draws(y: np.ndarray, n_draws: int) -> list[np.ndarray]:
    out = []
    for seed in range(n_draws):
        rng = np.random.default_rng(seed)
        codes = np.full(y.size, -1)
        for c in np.unique(y):
            codes[rng.choice(np.flatnonzero(y == c), 10, replace=False)] = c
        out.append(codes)
    return out


def fit_cell(graph, method: str, codes_list, shared: bool) -> tuple[list[float], list[int]]:
    """Fit every draw; with ``shared`` inside one shared_graph_operators block."""
    seconds, iters = [], []
    with shared_graph_operators(graph.W) if shared else contextlib.nullcontext():
        for codes in codes_list:
            t0 = time.perf_counter()
            est = make_solver(method, {"unreachable": "abstain"}).fit(graph, codes)
            seconds.append(time.perf_counter() - t0)
            iters.append(est.n_iter_)
    return seconds, iters


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100000,1000000,2000000")
    ap.add_argument("--draws", type=int, default=3)
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    shared_mean = {}  # (method, n) -> (mean fit s, ms per CG iteration)
    print(f"{'method':8s} {'n':>9s} {'per-split s':>12s} {'shared s':>9s} {'ratio':>6s} "
          f"{'shared: first / later s':>24s} {'CG iters':>9s} {'ms/iter':>8s}", flush=True)
    for n in sizes:
        ds = four_moons(n_samples=n, n_features=50, noise=0.1, random_state=0)
        t0 = time.perf_counter()
        graph = build_graph(np.asarray(ds.X, dtype=np.float32), k=10, weights="gaussian_kth",
                            symmetrize="mean", backend="nndescent")
        print(f"# n = {n}: graph (NN-descent) in {time.perf_counter() - t0:.1f} s, "
              f"{graph.W.nnz} nonzeros", flush=True)
        codes_list = draws(np.asarray(ds.y), args.draws)
        for method in METHODS:
            fit_cell(graph, method, codes_list[:1], shared=False)  # warm-up (imports, first touch)
            plain, _ = fit_cell(graph, method, codes_list, shared=False)
            shared, iters = fit_cell(graph, method, codes_list, shared=True)
            a, b = statistics.mean(plain), statistics.mean(shared)
            later = statistics.mean(shared[1:]) if len(shared) > 1 else math.nan
            ms_iter = 1e3 * statistics.mean(s / i for s, i in zip(shared[1:] or shared, iters[1:] or iters))
            shared_mean[method, n] = (b, ms_iter)
            print(f"{method:8s} {n:9d} {a:12.2f} {b:9.2f} {a / b:6.2f} "
                  f"{shared[0]:11.2f} / {later:10.2f} {statistics.mean(iters):9.1f} {ms_iter:8.2f}",
                  flush=True)
    print("\nlog-log slopes of the shared-operator fit (mean over the draws) and of one CG iteration")
    for method in METHODS:
        for n1, n2 in itertools.pairwise(sizes):
            (t1, i1), (t2, i2) = shared_mean[method, n1], shared_mean[method, n2]
            k = math.log(n2 / n1)
            print(f"{method:8s} {n1:>9d} -> {n2:<9d} fit {math.log(t2 / t1) / k:5.2f}   "
                  f"iteration {math.log(i2 / i1) / k:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
