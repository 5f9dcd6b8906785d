"""SSDL-GA cost: seconds per outer iteration and per step (probabilities, sparse coding,
dictionary, classifier), out-of-sample coding, and peak memory (max RSS of the process).

Settings (each runs in its own process so the peak RSS is its own):
  usps    - Table 6 USPS setting: 110 random images per class (20 labeled / 40 unlabeled /
            50 test), l2-normalized x 5, section 5.2 hyper-parameters, whole-set sparse coding.
  fashion - 20,000 Fashion-MNIST training images (random, stratified by the draw), 20 labeled
            per class, the rest unlabeled; l2-normalized then PCA to 100 dimensions (DL needs a
            reduced dimension, section 6 of the paper) and x 5; batch sparse coding of the
            appendix (batches of --batch-size samples, one epoch per outer iteration).

    OMP_NUM_THREADS=1 python benchmarks/ssdl_time.py [--settings usps fashion] [--outer 3]
        [--batch-size 2000] [--raw resources/raw]

Prints one table per setting; numbers are measured on the machine that runs it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]


def _graph(X):
    from gssl.graphs import Graph

    n = X.shape[0]
    return Graph(W=sp.csr_matrix((n, n)), V=None, X=X, params={})


def _setting_usps(args):
    from gssl.datasets import load

    ds = load("usps", raw_dir=f"{args.raw}/usps")
    X, y = np.asarray(ds.X, dtype=np.float64), ds.y
    rng = np.random.default_rng(0)
    lab, unl, test = [], [], []
    for c in range(10):
        idx = rng.permutation(np.flatnonzero(y == c))[:110]
        lab += list(idx[:20])
        unl += list(idx[20:60])
        test += list(idx[60:])
    return X, y, lab, unl, test, dict(n_atoms=200, lam=0.3, alpha=1.0, beta=0.5, gamma=0.5,
                                      mu=1.0, k=8, r=1.7), 5.0, None


def _setting_fashion(args):
    from gssl.datasets import load

    ds = load("fashion_mnist", raw_dir=f"{args.raw}/fashion_mnist")
    n_train = int(ds.meta.get("n_train", 60000))
    rng = np.random.default_rng(0)
    sel = rng.choice(n_train, size=args.n_fashion, replace=False)
    X, y = np.asarray(ds.X[sel], dtype=np.float64), ds.y[sel]
    lab = []
    for c in range(10):
        lab += list(np.flatnonzero(y == c)[:20])
    unl = sorted(set(range(X.shape[0])) - set(lab))
    return X, y, lab, unl, [], dict(n_atoms=200, lam=0.3, alpha=1.0, beta=0.5, gamma=0.5, mu=1.0,
                                    k=8, r=1.7, batch_size=args.batch_size, n_epochs=1), 5.0, 100


def run_one(args):
    from sklearn.decomposition import PCA

    from gssl.solvers.ssdl import SSDLGA

    t0 = time.perf_counter()
    X, y, lab, unl, test, params, scale, pca = (_setting_usps if args.one == "usps"
                                                else _setting_fashion)(args)
    sel = np.asarray(lab + unl + test)
    X, y = X[sel], y[sel]
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    if pca:
        X = PCA(n_components=pca, random_state=0).fit_transform(X)
        X = X / np.linalg.norm(X, axis=1, keepdims=True)
    X *= scale
    n, nl, ntr = X.shape[0], len(lab), len(lab) + len(unl)
    y_fit = np.full(n, -1)
    y_fit[:nl] = y[:nl]
    train = np.zeros(n, bool)
    train[:ntr] = True
    t_load = time.perf_counter() - t0
    est = SSDLGA(max_iter=args.outer, tol=0, random_state=0, **params)
    t1 = time.perf_counter()
    est.fit(_graph(X), y_fit, n_classes=10, train_mask=train)
    fit = time.perf_counter() - t1
    pred = est.predict()
    out = {"setting": args.one, "n_train": ntr, "n_labeled": nl, "n_test": n - ntr,
           "dim": X.shape[1], "params": params, "load_seconds": t_load, "fit_seconds": fit,
           "timings": est.timings_, "history": est.history_,
           "acc_unlabeled": float(np.mean(pred[nl:ntr] == y[nl:ntr]) * 100),
           "acc_test": float(np.mean(pred[ntr:] == y[ntr:]) * 100) if n > ntr else None,
           "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    print(json.dumps(out, default=float))


def report(res):
    h = res["history"]
    keys = ["seconds_probabilities", "seconds_sparse_coding", "seconds_dictionary",
            "seconds_classifier"]
    print(f"\n## {res['setting']}: N_train={res['n_train']} (labeled {res['n_labeled']}), "
          f"test={res['n_test']}, d={res['dim']}, p={res['params']['n_atoms']}, "
          f"batch_size={res['params'].get('batch_size')}")
    print(f"load+preprocess {res['load_seconds']:.1f} s; fit {res['fit_seconds']:.1f} s; "
          f"LLE weights {res['timings'].get('lle', 0):.2f} s; init {res['timings'].get('init', 0):.2f} s; "
          f"out-of-sample coding {res['timings'].get('out_of_sample', 0):.2f} s; "
          f"peak RSS {res['peak_rss_mib']:.0f} MiB")
    print("| outer iter | probabilities s | sparse coding s | dictionary s | classifier s | total s | objective |")
    print("|---|---|---|---|---|---|---|")
    for r in h:
        tot = sum(r[k] for k in keys)
        print(f"| {r['iteration']} | " + " | ".join(f"{r[k]:.3f}" for k in keys)
              + f" | {tot:.2f} | {r['objective']:.1f} |")
    mean = {k: float(np.mean([r[k] for r in h])) for k in keys}
    print("| mean | " + " | ".join(f"{mean[k]:.3f}" for k in keys)
          + f" | {sum(mean.values()):.2f} | |")
    acc = f"unlabeled accuracy {res['acc_unlabeled']:.1f}%"
    if res["acc_test"] is not None:
        acc += f", test accuracy {res['acc_test']:.1f}%"
    print(acc + f" after {len(h)} outer iterations")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--settings", nargs="+", default=["usps", "fashion"], choices=["usps", "fashion"])
    ap.add_argument("--outer", type=int, default=3, help="outer iterations timed per setting")
    ap.add_argument("--batch-size", type=int, default=2000)
    ap.add_argument("--n-fashion", type=int, default=20000)
    ap.add_argument("--raw", default=str(REPO / "resources/raw"))
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        return run_one(args)
    for s in args.settings:
        cmd = [sys.executable, __file__, "--one", s, "--outer", str(args.outer), "--batch-size",
               str(args.batch_size), "--n-fashion", str(args.n_fashion), "--raw", args.raw]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        report(json.loads(out.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
