"""Side-by-side timing of two versions of ``gssl.optim.mtv_step`` (Algorithm 1) on the same graph,
start and settings, runs interleaved (A B A B ...) so both see the same machine load.

    git show c87e7bc:src/gssl/optim/mtv_step.py > /tmp/mtv_step_before.py
    OMP_NUM_THREADS=1 python benchmarks/mtv_speed_compare.py --baseline /tmp/mtv_step_before.py \\
        --datasets optdigits pendigits --repeats 2

Transductive: 1 label per class (the workflow's lpc1 split 0), all labels propagated by (I + L)^-1,
the config's stopping rule. Unsupervised (``--unsup-iters K``): one random NCut-free start
(one random node per class, propagated), exactly K inner iterations (rel_tol = 0), so both versions
do the same number of iterations and the time per iteration compares directly.
Reports CPU time (process_time) and wall time of each run, iterations, energies and purity.
With multi-threaded kernels, compare wall times (CPU time adds up the threads).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

from gssl.metrics import purity  # noqa: E402
from gssl.optim import mtv_step as current  # noqa: E402
from gssl.optim.graph_ops import diffuse, gradient_operator  # noqa: E402
from gssl.splits import LABELED, make_splits  # noqa: E402


def load_module(path: str):
    spec = importlib.util.spec_from_file_location("gssl.optim._mtv_step_baseline", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", required=True, help="path of the older mtv_step.py")
    ap.add_argument("--datasets", nargs="+", default=["optdigits", "pendigits"])
    ap.add_argument("--repeats", type=int, default=2, help="A/B pairs per setting")
    ap.add_argument("--unsup-iters", type=int, default=300)
    ap.add_argument("--config", default=str(REPO / "config/experiments/mtv.yaml"))
    ap.add_argument("--raw-dir", default=str(REPO / "resources/raw"))
    ap.add_argument("--graph-cache", default=None, help="HDF5 graph cache folder (mtv_time.py)")
    ap.add_argument("--threads", type=int, default=None,
                    help="numba threads of the compiled kernels (default: numba's, all cores)")
    args = ap.parse_args(argv)
    if args.threads:
        import numba

        numba.set_num_threads(args.threads)
    os.environ.setdefault("GSSL_DATA_MIRROR", str(REPO.parent / "shared" / "data"))
    from mtv_time import load_graph
    base = load_module(args.baseline)
    cfg = yaml.safe_load(Path(args.config).read_text())
    params = cfg["methods"]["mtv_t"]["params"]
    print(f"load average {os.getloadavg()}")
    print("| data set | setting | version | CPU s | wall s | inner iterations | CPU ms / iteration "
          "| energy | purity |\n|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        ds, g, _ = load_graph(cfg, name, args.raw_dir, cache_dir=args.graph_cache)
        y = np.asarray(ds.y)
        R = int(y.max()) + 1
        W = sp.csr_matrix(g.W, dtype=np.float64)
        D = gradient_operator(W)
        norm = current.operator_norm(D)
        spec = dict(cfg["protocols"]["lpc1"], repeats=1)
        lab = make_splits(y, spec, name, "lpc1")[0] == LABELED
        F0t = np.zeros((y.size, R))
        F0t[lab] = np.eye(R)[y[lab]]
        F0t = diffuse(W, F0t)
        F0t[lab] = np.eye(R)[y[lab]]
        rng = np.random.default_rng(0)
        F0u = np.zeros((y.size, R))
        F0u[rng.choice(y.size, R, replace=False), np.arange(R)] = 1.0
        F0u = diffuse(W, F0u)
        settings = [("1 label, rel_tol", F0t, lab, params["rel_tol"], params["max_iter"])]
        if args.unsup_iters:
            settings.append((f"unsupervised, {args.unsup_iters} it", F0u, None, 0.0,
                             args.unsup_iters))
        for mod in (base, current):   # warm-up: compiled kernels load (or compile) outside timing
            mod.mtv_minimize(D, F0t, float(R - 1), fixed=lab, norm=norm, max_iter=2)
        for label, F0, fixed, rel_tol, max_iter in settings:
            for _ in range(args.repeats):
                for vname, mod in (("before", base), ("after", current)):
                    c0, t0 = time.process_time(), time.perf_counter()
                    res = mod.mtv_minimize(D, F0, float(R - 1), fixed=fixed, norm=norm,
                                           rel_tol=rel_tol, max_iter=max_iter,
                                           eps=params["eps"])
                    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
                    p = purity(y, res.F.argmax(1))
                    print(f"| {name} | {label} | {vname} | {cpu:.2f} | {wall:.2f} | {res.n_iter} | "
                          f"{1e3 * cpu / res.n_iter:.2f} | {res.energy:.5f} | {p:.2f} |",
                          flush=True)
    print(f"load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
