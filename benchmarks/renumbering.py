"""Laplace and Poisson learning at 10^6 points with and without the reverse Cuthill-McKee
renumbering of their CG solves (``gssl.optim.graph_learning.RENUMBER_MIN_NODES``), timed side by
side in one process on the same graph and labels (issue #16: the slope of the fits above 10^5).

The graph is scale.yaml's (four half-moons in 50-D, noise 0.1, 10-NN ``gaussian_kth`` weights,
mean-symmetrized) built with the NN-descent backend, the quickest at this size; 10 labels per
class, one seeded draw. Each fit runs ``--repeats`` times in each mode, alternating, and the
median is reported with the ratio and the largest difference of the two solutions.

    OMP_NUM_THREADS=1 python benchmarks/renumbering.py [--n 1000000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

import gssl.optim.graph_learning as kernels  # noqa: E402
from gssl import build_graph, make_solver  # noqa: E402
from gssl.datasets.synthetic import four_moons  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)

    ds = four_moons(n_samples=args.n, n_features=50, noise=0.1, random_state=0)
    t0 = time.perf_counter()
    graph = build_graph(np.asarray(ds.X, dtype=np.float32), k=10, weights="gaussian_kth",
                        symmetrize="mean", backend="nndescent")
    print(f"n = {args.n}, graph (NN-descent) built in {time.perf_counter() - t0:.1f} s, "
          f"{graph.W.nnz} nonzeros", flush=True)
    y = np.asarray(ds.y)
    rng = np.random.default_rng(0)
    codes = np.full(y.size, -1)
    for c in np.unique(y):
        pick = rng.choice(np.flatnonzero(y == c), 10, replace=False)
        codes[pick] = c
    print(f"{'method':8s} {'plain s':>8s} {'RCM s':>8s} {'plain/RCM':>9s} {'max |diff|':>11s}")
    for method in ("poisson", "laplace"):
        times = {"plain": [], "rcm": []}
        out = {}
        for _ in range(args.repeats):
            for mode, threshold in (("plain", np.inf), ("rcm", 0)):
                kernels.RENUMBER_MIN_NODES = threshold
                t0 = time.perf_counter()
                est = make_solver(method, {"unreachable": "abstain"}).fit(graph, codes)
                times[mode].append(time.perf_counter() - t0)
                out[mode] = est.decision_function_
        a, b = statistics.median(times["plain"]), statistics.median(times["rcm"])
        diff = float(np.abs(out["plain"] - out["rcm"]).max())
        print(f"{method:8s} {a:8.2f} {b:8.2f} {a / b:9.2f} {diff:11.2e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
