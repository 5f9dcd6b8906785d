"""Laplace and Poisson learning solved by block CG whose columns share one Krylov space
(``gssl.optim.block_cg.coupled_cg``, the code's) and by one CG per column (``block_cg``, the code
before it), timed side by side in one process on the same graphs and labels; then the log-log
slopes between sizes (issue #34: Laplace's slope from 10^5 to 10^6, goal <= 1.2).

The graphs are scale.yaml's (four half-moons in 50-D, noise 0.1, 10-NN ``gaussian_kth`` weights,
mean-symmetrized) built with the NN-descent backend; 10 labels per class, ``--draws`` seeded
draws per size, the splits of a size sharing W's operators as in a workflow cell. Each draw
runs both solvers back to back, alternating which goes first; a first untimed fit of each
builds the operators. Printed per size and method: the mean wall time of a fit, CG iterations,
the ratio per-column / coupled, and the share of nodes both label alike.

    OMP_NUM_THREADS=1 python benchmarks/coupled_cg.py [--sizes 100000,1000000] [--draws 3] \\
        [--graph-cache DIR]
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
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

import gssl.optim.graph_learning as kernels  # noqa: E402
from gssl import build_graph, make_solver  # noqa: E402
from gssl.datasets.synthetic import four_moons  # noqa: E402
from gssl.graphs.base import Graph  # noqa: E402
from gssl.optim.block_cg import block_cg, coupled_cg  # noqa: E402
from gssl.optim.shared_operators import shared_graph_operators  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_scaling import draws  # noqa: E402  (10 labels per class, seeded)

METHODS = ("laplace", "poisson")
SOLVERS = {"coupled": coupled_cg,
           "per_column": lambda matvec, B, *, tol, max_iter: block_cg(matvec, B, tol=tol,
                                                                       max_iter=max_iter)}


@contextlib.contextmanager
def solver(name: str):
    """identity_minus_cg (Laplace's and Poisson's solve) with the named CG, for the block."""
    saved = kernels.coupled_cg
    kernels.coupled_cg = SOLVERS[name]
    try:
        yield
    finally:
        kernels.coupled_cg = saved


def graph_of(n: int, cache: Path | None) -> tuple[Graph, np.ndarray, float]:
    files = (cache / f"moons4_{n}.npz", cache / f"moons4_{n}_y.npy") if cache else None
    if files and all(f.exists() for f in files):
        return Graph(W=sp.load_npz(files[0]).tocsr()), np.load(files[1]), 0.0
    ds = four_moons(n_samples=n, n_features=50, noise=0.1, random_state=0)
    t0 = time.perf_counter()
    g = build_graph(np.asarray(ds.X, dtype=np.float32), k=10, weights="gaussian_kth",
                    symmetrize="mean", backend="nndescent")
    build = time.perf_counter() - t0
    if files:
        cache.mkdir(parents=True, exist_ok=True)
        sp.save_npz(files[0], sp.csr_matrix(g.W))
        np.save(files[1], np.asarray(ds.y))
    return Graph(W=g.W), np.asarray(ds.y), build


def fit(graph, method, codes, name):
    with solver(name):
        t0 = time.perf_counter()
        est = make_solver(method, {"unreachable": "abstain"}).fit(graph, codes)
        return time.perf_counter() - t0, est.n_iter_, est.transduction_


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--graph-cache", type=Path, default=None, help="folder for the graphs (npz)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    mean = {}  # (method, solver, n) -> mean fit seconds
    print(f"{'method':8s} {'n':>9s} {'per-column s':>13s} {'coupled s':>10s} {'ratio':>6s} "
          f"{'iters per-column / coupled':>27s} {'same %':>7s}", flush=True)
    for n in sizes:
        graph, y, build = graph_of(n, args.graph_cache)
        print(f"# n = {n}: graph (NN-descent) in {build:.1f} s (0: cached), "
              f"{graph.W.nnz} nonzeros", flush=True)
        codes_list = draws(y, args.draws)
        with shared_graph_operators(graph.W):
            for method in METHODS:
                for name in SOLVERS:  # untimed: the shared operators built, kernels loaded
                    fit(graph, method, codes_list[0], name)
                rows = {name: ([], []) for name in SOLVERS}
                same = []
                for k, codes in enumerate(codes_list):
                    order = list(SOLVERS) if k % 2 == 0 else list(SOLVERS)[::-1]
                    labels = {}
                    for name in order:
                        s, it, labels[name] = fit(graph, method, codes, name)
                        rows[name][0].append(s)
                        rows[name][1].append(it)
                    same.append(100.0 * np.mean(labels["coupled"] == labels["per_column"]))
                for name in SOLVERS:
                    mean[method, name, n] = statistics.mean(rows[name][0])
                a, b = mean[method, "per_column", n], mean[method, "coupled", n]
                iters = (f"{statistics.mean(rows['per_column'][1]):.1f} / "
                         f"{statistics.mean(rows['coupled'][1]):.1f}")
                print(f"{method:8s} {n:9d} {a:13.3f} {b:10.3f} {a / b:6.2f} {iters:>27s} "
                      f"{min(same):7.3f}", flush=True)
    print("\nlog-log slopes of a fit (mean over the draws)")
    for method, name in itertools.product(METHODS, SOLVERS):
        for n1, n2 in itertools.pairwise(sizes):
            slope = math.log(mean[method, name, n2] / mean[method, name, n1]) / math.log(n2 / n1)
            print(f"{method:8s} {name:11s} {n1:>9d} -> {n2:<9d} {slope:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
