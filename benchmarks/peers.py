"""gssl beside GraphLearning (1.7.5, the authors' package; ``pip install -e '.[peers]'``) on every
method the two share: the same weight matrix, the same label draws, one thread, interleaved fit by
fit in one process. Prints per data set and method the CPU seconds of a fit (median over the
draws) of each, the CPU-time ratio gssl / GraphLearning (the median of the per-draw ratios: < 1,
gssl faster; each draw times both back to back, so a load change on the machine hits both), the
mean accuracy of each on the unlabeled points, the share of unlabeled points both label alike,
and gssl's fit time over its own Poisson fit on the same draws (``/poisson``, when poisson runs).

Graph, draws and parameters are those of ``benchmarks/lowlabel_speed.py`` (whose helpers this
reuses): the knn10_calder graph of config/experiments/lowlabel.yaml, the workflow's
labels-per-class draws, each method's defaults; PoissonMBO gets the labeled set's class
fractions on both sides, volume MBO those fractions as exact integer class sizes at temperature
0.1, multiclass MBO the same seeded random start, p-Laplace p = 10; modularity MBO, dynamic and
sparse label propagation (not in lowlabel.yaml) their defaults, GraphLearning's modularity MBO
with its module global k set to the number of classes (its 1.7.5 code reads k undefined). ``digits`` is scikit-learn's
bundled set (1,797 points); the others come from the data mirror (GSSL_DATA_MIRROR) or raw-dir.
Before the timed draws every method is fitted once on each side, untimed (numba loads its
compiled kernels from the on-disk cache, GraphLearning its C extension; ``--no-warmup``: not).
As in a workflow cell, the draws of a data set share W's operators (``shared_graph_operators``;
``--unshared``: each gssl fit builds its own, as GraphLearning's does).

    python benchmarks/peers.py                # digits, 3 draws: about a minute (one thread)
    GSSL_DATA_MIRROR=../shared/data OMP_NUM_THREADS=1 python benchmarks/peers.py \\
        --datasets digits mnist_test --draws 3 --graph-cache results/benchmarks/graphs
    GSSL_DATA_MIRROR=../shared/data OMP_NUM_THREADS=1 python benchmarks/peers.py \\
        --datasets fashion_mnist --draws 1 --no-warmup --graph-cache results/benchmarks/graphs
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"  # one thread on both sides: before numpy, scipy or numba load

import argparse  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import yaml  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lowlabel_speed import REPO, graph_of, reference_model  # noqa: E402  (puts src/ on the path)

import graphlearning as gl  # noqa: E402

from gssl.optim.shared_operators import shared_graph_operators  # noqa: E402
from gssl.solvers.registry import make_solver  # noqa: E402
from gssl.splits import LABELED, make_splits  # noqa: E402

METHODS = ("laplace", "poisson", "poisson_mbo", "multiclass_mbo", "volume_mbo", "plaplace",
           "randomwalk", "graph_nearest_neighbor", "centered_kernel", "amle", "peikonal",
           "modularity_mbo", "dynamic_label_propagation", "sparse_label_propagation")
# methods outside lowlabel.yaml: GraphLearning's model at its defaults (gssl's match them)
DEFAULT_PEERS = {"randomwalk": gl.ssl.randomwalk,
                 "graph_nearest_neighbor": gl.ssl.graph_nearest_neighbor,
                 "centered_kernel": gl.ssl.centered_kernel, "amle": gl.ssl.amle,
                 "peikonal": gl.ssl.peikonal,
                 "dynamic_label_propagation": gl.ssl.dynamic_label_propagation,
                 "sparse_label_propagation": gl.ssl.sparse_label_propagation}
DATASETS = {"digits": {"source": "digits"}}  # beside lowlabel.yaml's (mnist_test, fashion_mnist)


def peer_model(method: str, W, priors):
    """GraphLearning's model of ``method`` with the settings gssl's defaults match."""
    if method == "plaplace":
        return gl.ssl.plaplace(W, p=10)
    if method == "modularity_mbo":
        gl.ssl.k = int(priors.size)  # its _fit reads an undefined global k (1.7.5): the classes
        return gl.ssl.modularity_mbo(W)
    if method in DEFAULT_PEERS:
        return DEFAULT_PEERS[method](W)
    return reference_model(method, W, priors)


def gssl_params(cfg: dict, method: str) -> dict:
    params = dict((cfg["methods"].get(method) or {}).get("params") or {})  # else defaults
    if method == "multiclass_mbo":
        params["random_state"] = 0  # GraphLearning's start: np.random.seed(0), as reference_model
    if method == "volume_mbo":
        params["random_state"] = 0
    return params


def cpu(fn):
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "config/experiments/lowlabel.yaml"))
    ap.add_argument("--datasets", nargs="+", default=["digits"])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--labels", type=int, default=1, help="labels per class (1..5)")
    ap.add_argument("--draws", type=int, default=3, help="label draws (the workflow's first ones)")
    ap.add_argument("--raw-dir", default=None,
                    help="folder the mirror's files are fetched into (default: read them in place "
                         "from GSSL_DATA_MIRROR)")
    ap.add_argument("--graph-cache", default=None, help="folder for an HDF5 cache of the graphs")
    ap.add_argument("--no-warmup", action="store_true",
                    help="no untimed first fit (for the largest sets: the first timed fit of each "
                         "side then also loads its kernels)")
    ap.add_argument("--unshared", action="store_true",
                    help="no shared_graph_operators block: every gssl fit builds W's operators")
    args = ap.parse_args(argv)
    cfg = yaml.safe_load(Path(args.config).read_text())
    cfg["datasets"] = {**DATASETS, **cfg["datasets"]}
    import numba

    numba.set_num_threads(1)
    print(f"{'dataset':14s} {'method':15s} {'gssl s':>8s} {'GL s':>8s} {'gssl/GL':>8s} "
          f"{'acc gssl':>9s} {'acc GL':>7s} {'same %':>7s} {'/poisson':>9s}")
    for name in args.datasets:
        ds, g, build = graph_of(cfg, name, args.raw_dir, args.graph_cache)
        y = np.asarray(ds.y)
        print(f"# {name}: n = {y.size}, {args.labels} label(s) per class, {args.draws} draws, "
              f"graph built in {build:.1f} s (0: cached)", flush=True)
        block = contextlib.nullcontext() if args.unshared else shared_graph_operators(g.W)
        with block:
            run_dataset(args, cfg, name, y, g)
    return 0


def run_dataset(args, cfg: dict, name: str, y: np.ndarray, g) -> None:
    pid = f"lpc{args.labels}"
    roles = make_splits(y, cfg["protocols"][pid], name, pid)[:args.draws]
    draws = []
    for role in roles:
        train = np.flatnonzero(role == LABELED)
        codes = np.full(y.size, -1)
        codes[train] = y[train]
        draws.append((train, codes, role != LABELED,
                      np.bincount(y[train], minlength=y.max() + 1) / train.size))

    def ours(method, codes):
        return make_solver(method, gssl_params(cfg, method)).fit(g, codes).transduction_

    def theirs(method, train, priors):
        return peer_model(method, g.W, priors).fit_predict(train, y[train])

    for method in [] if args.no_warmup else args.methods:  # untimed: kernels loaded, caches warm
        ours(method, draws[0][1])
        theirs(method, draws[0][0], draws[0][3])
    rows = {m: {"ours": [], "theirs": [], "ratio": [], "acc": [], "acc_gl": [], "same": []}
            for m in args.methods}
    for k, (train, codes, unl, priors) in enumerate(draws):
        for method in args.methods:  # interleaved: one draw of every method, then the next draw
            r = rows[method]
            if k % 2 == 0:  # alternate which side runs first
                a, ta = cpu(lambda: ours(method, codes))
                b, tb = cpu(lambda: theirs(method, train, priors))
            else:
                b, tb = cpu(lambda: theirs(method, train, priors))
                a, ta = cpu(lambda: ours(method, codes))
            r["ours"].append(ta)
            r["theirs"].append(tb)
            r["ratio"].append(ta / tb if tb > 0 else np.inf)
            r["acc"].append(100 * np.mean(a[unl] == y[unl]))
            r["acc_gl"].append(100 * np.mean(b[unl] == y[unl]))
            r["same"].append(100 * np.mean(a[unl] == b[unl]))
    base = rows.get("poisson")
    for method in args.methods:
        r = rows[method]
        rel = ""
        if base is not None:
            rel = f"{statistics.median(np.divide(r['ours'], base['ours'])):9.2f}"
        print(f"{name:14s} {method:15s} {statistics.median(r['ours']):8.3f} "
              f"{statistics.median(r['theirs']):8.3f} {statistics.median(r['ratio']):8.2f} "
              f"{np.mean(r['acc']):9.2f} {np.mean(r['acc_gl']):7.2f} {np.mean(r['same']):7.2f} "
              f"{rel}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
