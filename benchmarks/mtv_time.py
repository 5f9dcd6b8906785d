"""MTV clustering: time and peak memory under the paper's protocols (purity printed as a check).

The tables themselves come from the workflow (config/experiments/mtv.yaml, docs/reproductions/mtv.md);
this script times the same fits in one process, with a chosen thread count, on an idle machine.

Transductive table (Bresson et al. 2013, second table): for each data set and label rate
(1 label per class, 1 / 2.5 / 5 / 10 % of labels per class), ``--repeats`` random label draws
(the workflow's splits: same seeds, ``gssl.splits.make_splits``); each draw is one MTV run started
from all labels propagated by (I + L)^-1. Reported per rate: mean purity over the draws, the purity of
the lowest-energy draw (the paper's figure), the mean fit time (the paper's "average computational
time of the ten runs") and the peak resident memory of the process.

Unsupervised table (``--unsupervised``): the config's ``mtv`` method (30 NCut-seeded random trials
of 2,000 iterations; ``--trials`` to reduce) plus the deterministic NCut-indicator trial, in one run;
reported: the purity of the lowest discrete energy (P) among the random trials only (the configured
method) and among all trials (with the NCut trial), NCut alone, the purity range over the trials,
total wall / CPU time and peak memory.

Data sets, graphs and method parameters are read from config/experiments/mtv.yaml, so the numbers
are those of the workflow's settings (graphs built in-process with the same library code).

    OMP_NUM_THREADS=1 python benchmarks/mtv_time.py --datasets optdigits pendigits news20 \\
        --protocols lpc1 frac1 frac2_5 frac5 frac10 --repeats 10 [--unsupervised] \\
        [--out results/benchmarks/mtv_time.json]
    OMP_NUM_THREADS=1 python benchmarks/mtv_time.py --datasets optdigits pendigits --protocols \\
        --unsupervised --trials 10      # unsupervised only
    OMP_NUM_THREADS=1 python benchmarks/mtv_time.py --datasets fashion_mnist --protocols lpc1 \\
        --repeats 1          # the 70,000-point scale run
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numba
import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from gssl.datasets import load  # noqa: E402
from gssl.graphs import build_graph  # noqa: E402
from gssl.graphs.cache import load_graph as load_cached_graph, save_graph  # noqa: E402
from gssl.metrics import clustering_accuracy, purity  # noqa: E402
from gssl.solvers.registry import make_solver  # noqa: E402
from gssl.splits import LABELED, make_splits  # noqa: E402

GRAPH_FOR = {"moons4": "mtv_knn10st", "news20": "mtv_precomputed"}
PAPER_TRANS = {  # Bresson et al. 2013, second table: purity / seconds
    "moons4": {"lpc1": (99.55, 3.0), "frac1": (99.55, 3.1), "frac2_5": (99.55, 1.9),
               "frac5": (99.53, 1.2), "frac10": (99.55, 0.8)},
    "optdigits": {"lpc1": (98.29, 7), "frac1": (98.29, 4), "frac2_5": (98.35, 3),
                  "frac5": (98.38, 2), "frac10": (98.45, 2)},
    "pendigits": {"lpc1": (89.17, 14), "frac1": (93.73, 9), "frac2_5": (95.83, 7),
                  "frac5": (97.98, 5), "frac10": (98.22, 4)},
    "news20": {"lpc1": (50.07, 52), "frac1": (61.70, 54), "frac2_5": (67.61, 42),
               "frac5": (70.51, 32), "frac10": (73.97, 25)},
    "mnist_test": {"lpc1": (97.53, 98), "frac1": (97.59, 54), "frac2_5": (97.72, 39),
                   "frac5": (97.79, 31), "frac10": (98.05, 25)},
    "fashion_mnist": {},
}
PAPER_UNSUP = {"moons4": 99.53, "optdigits": 98.29, "pendigits": 89.06, "news20": 39.40,
               "mnist_test": 97.60}


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def graph_for(name: str, override: str | None = None) -> str:
    """The config graph of a data set: ``override`` (``--graph``) for feature data sets, else the
    default (20NEWS is a graph without features, so it always keeps its precomputed graph)."""
    if name in GRAPH_FOR and GRAPH_FOR[name] == "mtv_precomputed":
        return GRAPH_FOR[name]
    return override or GRAPH_FOR.get(name, "mtv_knn10")


def load_graph(cfg: dict, name: str, raw_dir: str, graph: str | None = None,
               cache_dir: str | None = None):
    """Data set and graph; with ``cache_dir`` the graph is kept in the HDF5 graph cache
    (``cache_dir/<data set>/<graph>.h5``, checked against the graph's spec) and built once
    (Fashion-MNIST's exact 10-NN graph takes minutes)."""
    entry = cfg["datasets"][name]
    ds = load(entry["source"], raw_dir=raw_dir, params=entry.get("params"))
    gid = graph_for(name, graph)
    spec = dict(cfg["graphs"][gid])
    path = Path(cache_dir) / name / f"{gid}.h5" if cache_dir else None
    t0 = time.perf_counter()
    if path is not None and path.exists():
        return ds, load_cached_graph(path, expect_params=spec), time.perf_counter() - t0
    if spec["kind"] == "precomputed":
        g = build_graph(X=None, spec=spec, W=ds.W)
    else:
        g = build_graph(np.asarray(ds.X, dtype=np.float64), spec)
    seconds = time.perf_counter() - t0
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_graph(path, g, spec, build_seconds=seconds)
    return ds, g, seconds


def warm_up() -> float:
    """Load (or, the first time on a machine, compile) the numba kernels on a 3-node graph, so
    that the first timed fit does not pay for it, as a MATLAB timing would not."""
    import scipy.sparse as sp

    from gssl.optim.graph_ops import gradient_operator
    from gssl.optim.mtv_step import mtv_minimize

    t0 = time.perf_counter()
    W = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float))
    fixed = np.array([True, False, True])
    mtv_minimize(gradient_operator(W), np.array([[1.0, 0], [0.5, 0.5], [0, 1.0]]), fixed=fixed,
                 max_iter=2)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "config/experiments/mtv.yaml"))
    ap.add_argument("--datasets", nargs="+", default=["optdigits", "pendigits", "news20"])
    ap.add_argument("--protocols", nargs="*", default=["lpc1", "frac1", "frac2_5", "frac5",
                                                       "frac10"])
    ap.add_argument("--repeats", type=int, default=10, help="label draws per rate (paper: 10)")
    ap.add_argument("--unsupervised", action="store_true", help="also the unsupervised table")
    ap.add_argument("--trials", type=int, default=None,
                    help="random trials of the unsupervised run (default: the config's, 30)")
    ap.add_argument("--graph", default=None,
                    help="config graph for the feature data sets (default: mtv_knn10; four moons "
                         "mtv_knn10st); 20NEWS always uses its precomputed graph")
    ap.add_argument("--raw-dir", default=str(REPO / "resources/raw"))
    ap.add_argument("--graph-cache", default=None,
                    help="folder for an HDF5 cache of the graphs (built once, then read)")
    ap.add_argument("--threads", type=int, default=None,
                    help="numba threads of the MTV kernels (default: numba's, all cores)")
    ap.add_argument("--out", default=str(REPO / "results/benchmarks/mtv_time.json"))
    args = ap.parse_args(argv)
    if args.threads:
        numba.set_num_threads(args.threads)
    os.environ.setdefault("GSSL_DATA_MIRROR", str(REPO.parent / "shared" / "data"))
    cfg = yaml.safe_load(Path(args.config).read_text())
    out = {"argv": sys.argv[1:], "threads": os.environ.get("OMP_NUM_THREADS"),
           "numba_threads": numba.get_num_threads(),
           "load_average_start": os.getloadavg(), "results": []}
    lines = ["| data set | protocol | purity mean ± std | purity (lowest energy) | paper purity "
             "| time mean (s) | CPU time mean (s) | paper time (s) | iterations | peak RSS (MiB) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    unsup_lines = []
    out["kernel_load_seconds"] = warm_up()
    print(f"compiled MTV kernels loaded in {out['kernel_load_seconds']:.2f} s (not in the fit "
          f"times); numba threads {numba.get_num_threads()}", flush=True)
    for name in args.datasets:
        ds, g, t_graph = load_graph(cfg, name, args.raw_dir, args.graph, args.graph_cache)
        y = np.asarray(ds.y)
        R = int(y.max()) + 1
        print(f"{name}: graph {graph_for(name, args.graph)}, n={y.size}, edges={g.W.nnz // 2}, "
              f"graph built in {t_graph:.1f} s",
              flush=True)
        for pid in args.protocols:
            spec = dict(cfg["protocols"][pid])
            spec["repeats"] = args.repeats
            roles = make_splits(y, spec, name, pid)
            recs = []
            for s, role in enumerate(roles):
                ytr = np.where(role == LABELED, y, -1)
                est = make_solver("mtv", dict(cfg["methods"]["mtv_t"]["params"], random_state=s))
                t0, c0 = time.perf_counter(), time.process_time()
                est.fit(g, ytr, n_classes=R)
                dt, cpu = time.perf_counter() - t0, time.process_time() - c0
                unl = role != LABELED
                recs.append({"split": s, "seconds": dt, "cpu_seconds": cpu, "purity": purity(y, est.labels_),
                             "purity_unlabeled": purity(y[unl], est.labels_[unl]),
                             "accuracy_unlabeled": clustering_accuracy(y[unl], est.labels_[unl]),
                             "discrete_energy": est.discrete_energy_, "n_iter": est.n_iter_,
                             "n_labeled": int((role == LABELED).sum()),
                             "stop_reason": est.stop_reason_})
                print(f"  {pid} split {s}: purity {recs[-1]['purity']:.2f} "
                      f"time {dt:.2f} s (cpu {cpu:.2f} s) iters {est.n_iter_}", flush=True)
            pur = np.array([r["purity"] for r in recs])
            best = min(recs, key=lambda r: r["discrete_energy"])
            secs = np.array([r["seconds"] for r in recs])
            cpus = np.array([r["cpu_seconds"] for r in recs])
            paper = PAPER_TRANS.get(name, {}).get(pid)
            row = {"dataset": name, "protocol": pid, "purity_mean": pur.mean(),
                   "purity_std": pur.std(), "purity_lowest_energy": best["purity"],
                   "seconds_mean": secs.mean(), "cpu_seconds_mean": cpus.mean(), "n_iter_mean": float(np.mean(
                       [r["n_iter"] for r in recs])), "peak_rss_mib": peak_rss_mib(),
                   "paper": paper, "splits": recs}
            out["results"].append(row)
            lines.append(f"| {name} | {pid} | {pur.mean():.2f} ± {pur.std():.2f} | "
                         f"{best['purity']:.2f} | {paper[0] if paper else '–'} | "
                         f"{secs.mean():.2f} | {cpus.mean():.2f} | {paper[1] if paper else '–'} | "
                         f"{row['n_iter_mean']:.0f} | {row['peak_rss_mib']:.0f} |")
        if args.unsupervised:
            params = dict(cfg["methods"]["mtv"]["params"], random_state=0)
            if args.trials is not None:
                params["n_trials"] = args.trials
            params["deterministic_trial"] = True   # both selections below come from one run
            est = make_solver("mtv", params)
            t0, c0 = time.perf_counter(), time.process_time()
            est.fit(g, np.full(y.size, -1), n_classes=R)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            ran = [t for t in est.trials_ if "discrete_energy" in t]
            for t, lab in zip(ran, est.trial_labels_):
                t["purity"] = purity(y, lab)
                t["accuracy"] = clustering_accuracy(y, lab)
            rand = [t for t in ran if t["trial"] != "ncut"]
            b_all = min(ran, key=lambda t: t["discrete_energy"])
            b_rand = min(rand, key=lambda t: t["discrete_energy"]) if rand else None
            ncut_p = purity(y, est.ncut_labels_)
            row = {"dataset": name, "graph": graph_for(name, args.graph), "protocol": "unsupervised",
                   "n_trials": params["n_trials"],
                   "max_iter": params["max_iter"], "rel_tol": params["rel_tol"],
                   "purity_random_only": b_rand["purity"] if b_rand else None,
                   "accuracy_random_only": b_rand["accuracy"] if b_rand else None,
                   "purity_with_ncut_trial": b_all["purity"],
                   "accuracy_with_ncut_trial": b_all["accuracy"],
                   "best_trial_with_ncut": b_all["trial"], "ncut_purity": ncut_p,
                   "trial_purity_range": [min(t["purity"] for t in ran),
                                          max(t["purity"] for t in ran)],
                   "seconds": dt, "cpu_seconds": cpu,
                   "seconds_per_trial": float(np.mean([t["seconds"] for t in ran])),
                   "trials": ran, "peak_rss_mib": peak_rss_mib(),
                   "paper": PAPER_UNSUP.get(name)}
            out["results"].append(row)
            pr = f"{b_rand['purity']:.2f}" if b_rand else "–"
            print(f"  unsupervised: purity {pr} (random trials only) / {b_all['purity']:.2f} "
                  f"(with the NCut trial, {b_all['trial']} selected); NCut alone {ncut_p:.2f}; "
                  f"{dt:.1f} s ({cpu:.1f} s CPU) for {params['n_trials']} + 1 trials", flush=True)
            for t in ran:
                print(f"    {t['trial']:9s} E(P) {t['discrete_energy']:.5f} "
                      f"purity {t['purity']:.2f}"
                      f" iters {t['n_iter']} {t['seconds']:.1f} s", flush=True)
            unsup_lines.append(
                f"| {name} | {params['n_trials']} + 1 | {pr} | {b_all['purity']:.2f} | "
                f"{ncut_p:.2f} | {row['trial_purity_range'][0]:.2f}–"
                f"{row['trial_purity_range'][1]:.2f} | {PAPER_UNSUP.get(name, '–')} | {dt:.1f} | "
                f"{row['seconds_per_trial']:.1f} | {row['peak_rss_mib']:.0f} |")
    out["load_average_end"] = os.getloadavg()
    out["table"] = "\n".join(lines)
    if unsup_lines:
        out["table"] += "\n\n" + "\n".join(
            ["| data set | trials | MTV purity, lowest E(P) of the random trials | lowest E(P) "
             "incl. the NCut trial | NCut alone | purity range over trials | paper | total s | "
             "s per trial | peak RSS (MiB) |", "|---|---|---|---|---|---|---|---|---|---|"]
            + unsup_lines)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, default=float) + "\n")
    print("\n" + out["table"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
