"""How much of the Table 4 gap of the supervised baselines comes from how L is drawn?

Our melacci_cv protocol allocates the labeled points to the classes in proportion to their sizes
(USPST: 5 per digit); the paper drew them at random from the training folds with only "at least
one example per class". This script keeps our folds, T sets and the SVM / RLSC parameters selected
by benchmarks/lapsvm_table4.py, and compares the T error with our stratified L against a uniformly
random L of the same size redrawn until every class has one point (the paper's rule).

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/lapsvm_label_balance.py \
        --datasets g50c pcmac uspst
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lapsvm_table4 import DATASETS  # noqa: E402

from gssl.datasets import load, select  # noqa: E402
from gssl.graphs import Graph  # noqa: E402
from gssl.metrics import error_rate  # noqa: E402
from gssl.solvers.registry import make_solver  # noqa: E402
from gssl.splits import LABELED, TEST, make_splits, validate_protocol  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["g50c", "pcmac", "uspst"],
                    choices=list(DATASETS))
    ap.add_argument("--raw-dir", default="resources/raw")
    ap.add_argument("--results", default="results/benchmarks/lapsvm_table4")
    ap.add_argument("--draws", type=int, default=1, help="random L draws per split")
    args = ap.parse_args()
    for name in args.datasets:
        cfg = DATASETS[name]
        ds = load(cfg["source"], raw_dir=args.raw_dir)
        if cfg.get("groups"):
            ds = select(ds, groups=cfg["groups"])
        X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=np.float64)
        y = np.asarray(ds.y)
        lab_n, _, val_n = cfg["counts"]
        spec = validate_protocol({"kind": "melacci_cv", "folds": 4, "randomizations": 3,
                                  "labeled": lab_n, "unlabeled": None, "validation": val_n})
        roles = make_splits(y, spec, name, "melacci")
        rows = json.loads(Path(args.results, f"{name}.json").read_text())["rows"]
        C = int(y.max()) + 1
        rng = np.random.default_rng(0)
        for label, solver in (("SVM", "svm"), ("RLSC", "rls")):
            params = rows[label]["params"]
            err = {"stratified": [], "random": []}
            minc = []
            for role in roles:
                test = np.flatnonzero(role == TEST)
                train = np.flatnonzero(role != TEST)
                draws = [("stratified", np.flatnonzero(role == LABELED))]
                for _ in range(args.draws):
                    while True:
                        L = rng.choice(train, lab_n, replace=False)
                        if np.unique(y[L]).size == C:
                            break
                    draws.append(("random", L))
                    minc.append(int(np.bincount(y[L], minlength=C).min()))
                for kind, L in draws:
                    idx = np.concatenate([L, test])
                    codes = np.full(idx.size, -1)
                    codes[:L.size] = y[L]
                    est = make_solver(solver, params)
                    est.fit(_graph(X[idx]), codes, n_classes=C)
                    pred = est.predict()
                    err[kind].append(error_rate(y[test], pred[L.size:]))
            print(f"[{name}] {label:5s} T error stratified L {np.mean(err['stratified']):6.2f} "
                  f"({np.std(err['stratified']):.2f})   random L (>= 1 per class) "
                  f"{np.mean(err['random']):6.2f} ({np.std(err['random']):.2f})   "
                  f"smallest class in random L: mean {np.mean(minc):.1f}, min {min(minc)}",
                  flush=True)


def _graph(X):
    """A features-only graph object for the supervised solvers (they ignore W)."""
    import scipy.sparse as sp

    return Graph(W=sp.csr_matrix((X.shape[0], X.shape[0])), X=X)


if __name__ == "__main__":
    main()
