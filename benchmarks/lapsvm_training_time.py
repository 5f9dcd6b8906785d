"""Table 3 of Melacci & Belkin (2011): LapSVM training time, dual vs primal Newton vs primal PCG with
early stopping, with the Gram matrix K and the Laplacian power M = L^p precomputed (as in the paper).

For each dataset: the graph (k, heat width sigma, Laplacian power p) and the melacci_cv splits of
the Table 4 protocol, built in-process; gamma_A, gamma_I and the PCG stopping criterion fixed per
dataset (TIMED_AT below: the Newton pair and the early stop selected on the validation points in
the round that produced Table 3, docs/reproductions/lapsvm_primal.notes.md), so timings compare at one setting. Times are
wall-clock seconds of the training only (one-vs-all over every class), mean (std) over the
first ``--splits`` splits; the ratios are dual / PCG and Newton / PCG. The process CPU time of the
same calls is printed below each row ("cpu"): on a shared machine it is the less noisy figure
(with OMP_NUM_THREADS=1 it equals the wall time of an idle machine). PCG is timed twice in the
same run: with the library's symmetric product (BLAS dsymv on one triangle of K) and with the
general ``K @ u`` ("pcg K@u"), the before/after of that change.

``--large`` adds the 14,000-point Fashion-MNIST T-shirt/top vs Shirt pair (in place of the paper's
MNIST3VS8, which the mirror cannot rebuild): pixels / 255, polynomial kernel (<x, y>/784 + 1)^9,
kNN graph k=10 heat weights, normalized Laplacian, p=1, 80 labeled / 80 validation / 1,984 test as
Table 2's MNIST3VS8 row (one split: the T points are a random 1,984 of the 14,000).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/lapsvm_training_time.py --splits 3
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path

import numpy as np

from gssl.datasets import load, select
from gssl.graphs import build_graph, matrix_power
from gssl.optim.kernels import kernel_matrix
from gssl.optim import manifold_primal
from gssl.optim.manifold_primal import LaplacianPower, lapsvm_newton_ova, manifold_pcg
from gssl.optim.pcg import default_check_every, make_criterion
from gssl.solvers.fit_checks import ova_targets
from gssl.optim.manifold_dual import lapsvm_dual
from gssl.splits import LABELED, TEST, UNLABELED, VALIDATION, make_splits, validate_protocol

DIGITS_B = [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
COIL_B = [list(range(10)), list(range(10, 20))]
# the Table 4 settings (config/experiments/lapsvm_primal.yaml): source, classes, k, sigma, p, L/V
DATASETS = {
    "g50c": {"source": "g50c_sindhwani", "k": 50, "sigma": 17.5, "p": 5, "counts": (50, 50)},
    "coil20b": {"source": "coil20", "groups": COIL_B, "k": 2, "sigma": 2.0, "p": 1, "counts": (40, 40)},
    "pcmac": {"source": "pcmac", "k": 50, "sigma": 2.7, "p": 5, "counts": (50, 50)},
    "uspstb": {"source": "uspst", "groups": DIGITS_B, "k": 10, "sigma": 9.4, "p": 2, "counts": (50, 50)},
    "coil20": {"source": "coil20", "k": 2, "sigma": 2.0, "p": 1, "counts": (40, 40)},
    "uspst": {"source": "uspst", "k": 10, "sigma": 9.4, "p": 2, "counts": (50, 50)},
}
# (gamma_A, gamma_I, PCG early stop) each dataset is timed at
TIMED_AT = {"g50c": (0.1, 100.0, "validation"), "coil20b": (0.01, 10.0, "validation"),
            "pcmac": (1e-6, 1e-4, "stability"), "uspstb": (1e-6, 0.01, "mixed"),
            "coil20": (1e-4, 1.0, "mixed"), "uspst": (1e-6, 10.0, "stability")}


def prepare(name, cfg, raw_dir):
    """Graph (with the features as graph.X), labels and melacci_cv roles of one dataset."""
    ds = load(cfg["source"], raw_dir=raw_dir)
    if cfg.get("groups"):
        ds = select(ds, groups=cfg["groups"])
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=np.float64)
    graph = build_graph(X, {"kind": "knn", "k": cfg["k"], "weights": "heat", "sigma": cfg["sigma"],
                            "symmetrize": "max", "laplacian": "normalized", "power": cfg["p"]})
    graph.X = X
    lab, val = cfg["counts"]
    spec = validate_protocol({"kind": "melacci_cv", "folds": 4, "randomizations": 3,
                              "labeled": lab, "unlabeled": None, "validation": val})
    return graph, ds.y, make_splits(ds.y, spec, name, "melacci")

# Table 3 of the paper: mean (std) seconds, MATLAB 7.6 on a 2.33 GHz machine (2010)
PAPER = {"g50c": (0.155, 0.134, 0.043), "coil20b": (0.311, 0.367, 0.097),
         "pcmac": (14.82, 15.756, 1.967), "uspstb": (1.196, 1.4727, 0.300),
         "coil20": (6.321, 7.26, 3.487), "uspst": (12.25, 17.74, 2.032),
         "fashion14k": (2064.18, 2824.174, 114.441)}   # the paper's row is MNIST3VS8
DEFAULT = {"gamma_A": 1e-2, "gamma_I": 1.0, "stopping": "stability"}


def chosen(name, stopping=None):
    gA, gI, stop = TIMED_AT[name]
    return {"gamma_A": gA, "gamma_I": gI, "stopping": stopping or stop, "source": "TIMED_AT"}


def fashion14k(raw_dir, seed=0):
    ds = select(load("fashion_mnist", raw_dir=raw_dir), classes=["T-shirt/top", "Shirt"])
    X = np.asarray(ds.X, dtype=np.float64) / 255.0
    graph = build_graph(X, {"kind": "knn", "k": 10, "weights": "heat", "sigma": "mean_knn_distance",
                            "symmetrize": "max", "laplacian": "normalized", "power": 1})
    graph.X = X
    rng = np.random.default_rng(seed)
    role = np.full(ds.y.size, UNLABELED, dtype=np.int8)
    perm = rng.permutation(ds.y.size)
    role[perm[:1984]] = TEST
    for c in (0, 1):  # 40 + 40 labeled, 40 + 40 validation, stratified
        idx = [i for i in perm[1984:] if ds.y[i] == c][:80]
        role[idx[:40]] = LABELED
        role[idx[40:]] = VALIDATION
    kernel = {"kind": "polynomial", "degree": 9, "gamma": 1.0 / X.shape[1], "coef0": 1.0}
    return graph, ds.y, role[None, :], kernel, 1


def _err(F, y, idx, n_classes):
    """Error (%) of one-vs-all scores F (n, C') on the nodes idx."""
    F = np.asarray(F).reshape(F.shape[0], -1)
    pred = (F[:, 0] >= 0).astype(int) if n_classes == 2 else np.argmax(F, axis=1)
    return float(100.0 * np.mean(pred[idx] != y[idx]))


def time_split(K, Mp, y, role, g, stopping, newton=True):
    lab = np.flatnonzero(role == LABELED)
    n_classes = int(y.max()) + 1
    codes = y[lab]
    Y = ova_targets(codes, n_classes)
    M = LaplacianPower(Mp, 1)            # L^p precomputed (sparse)
    out = {}
    t0, c0 = time.perf_counter(), time.process_time()
    alpha, b, _, _ = lapsvm_dual(K, M, lab, Y, g["gamma_A"], g["gamma_I"])
    out["dual"], out["dual_cpu"] = time.perf_counter() - t0, time.process_time() - c0
    test = np.flatnonzero(role == TEST)
    out["dual_err_T"] = _err(K[test] @ alpha + b, y[test], np.arange(test.size), n_classes)
    if not newton:
        out["newton"] = out["newton_cpu"] = out["newton_steps"] = out["newton_err_T"] = np.nan
    t0, c0 = time.perf_counter(), time.process_time()
    if newton:
        MK = M.dense_times(K)
        M1 = M @ np.ones(K.shape[0])
        res = lapsvm_newton_ova(K, M, lab, Y, g["gamma_A"], g["gamma_I"], MK=MK, M1=M1)
        out["newton"], out["newton_cpu"] = time.perf_counter() - t0, time.process_time() - c0
        del MK
        out["newton_steps"] = float(np.mean([r.n_iter for r in res]))
        out["newton_err_T"] = _err(np.column_stack([r.f for r in res]), y, test, n_classes)
    val = np.flatnonzero(role == VALIDATION)
    unl = np.flatnonzero((role != LABELED) & (role != VALIDATION))  # as LapSVMPCG: U and T nodes
    every = default_check_every(K.shape[0])
    for key, general in (("pcg", False), ("pcg_gemv", True)):
        with general_product(general):
            t0, c0 = time.perf_counter(), time.process_time()
            iters, fs = [], []
            for c in range(Y.shape[1]):
                pos = 1 if n_classes == 2 else c
                res = manifold_pcg(K, M, lab, Y[:, c], g["gamma_A"], g["gamma_I"],
                                   criterion=make_criterion(stopping, every), unlabeled=unl,
                                   validation=(val, np.where(y[val] == pos, 1.0, -1.0)),
                                   record_history=False)
                iters.append(res.n_iter)
                fs.append(res.f)
            out[key], out[f"{key}_cpu"] = time.perf_counter() - t0, time.process_time() - c0
            out[f"{key}_iters"] = float(np.mean(iters))
            out[f"{key}_err_T"] = _err(np.column_stack(fs), y, test, n_classes)
    return out


@contextlib.contextmanager
def general_product(active):
    """With ``active``, PCG's product K u is the general ``K @ u`` (BLAS gemv, all of K) instead
    of the library's dsymv on one triangle: the before/after of that change in the same run."""
    saved = manifold_primal.symmetric_matvec
    if active:
        manifold_primal.symmetric_matvec = lambda K: K.__matmul__
    try:
        yield
    finally:
        manifold_primal.symmetric_matvec = saved


def markdown(table):
    """Table 3 (ours beside the paper's) and the speed-up ratios, from the JSON result."""
    f = lambda v: "-" if v is None or v != v else f"{v:.3f}"  # noqa: E731
    x = lambda v: "-" if v != v else f"{v:.1f}x"  # noqa: E731
    e = lambda v: "-" if v != v else f"{v:.2f}"  # noqa: E731
    lines = ["| dataset | n | dual (s) | Newton (s) | PCG (s) | PCG stop | dual/PCG | Newton/PCG "
             "| paper dual | paper Newton | paper PCG | paper dual/PCG | paper Newton/PCG "
             "| CPU s dual / Newton / PCG (ratios) | T err % dual / Newton / PCG "
             "| CPU s PCG with K @ u (dsymv gain) |",
             "|" + "---|" * 16]
    for name, r in table.items():
        pd, pn, pp = r["paper"]
        cell = lambda k: f"{f(r[k][0])} ({f(r[k][1])})"  # noqa: E731
        lines.append(
            f"| {name} | {r['n']} | {cell('dual')} | {cell('newton')} | {cell('pcg')} | "
            f"{r['params']['stopping']}, {r['pcg_iters'][0]:.0f} it | "
            f"{x(r['ratio_dual_pcg'])} | {x(r['ratio_newton_pcg'])} | {pd} | {pn} | {pp} | "
            f"{pd / pp:.1f}x | {pn / pp:.1f}x | {f(r['dual_cpu'][0])} / {f(r['newton_cpu'][0])} / "
            f"{f(r['pcg_cpu'][0])} ({x(r['ratio_dual_pcg_cpu'])}, "
            f"{x(r['ratio_newton_pcg_cpu'])}) | {e(r['dual_err_T'][0])} / "
            f"{e(r['newton_err_T'][0])} / {e(r['pcg_err_T'][0])} | "
            f"{f(r.get('pcg_gemv_cpu', [np.nan])[0])} "
            f"({x(r.get('ratio_pcg_gemv_pcg_cpu', np.nan))}) |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=[d for d in PAPER if d in DATASETS],
                    choices=[d for d in PAPER if d in DATASETS])
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--large", action="store_true", help="add Fashion-MNIST 14,000 points")
    ap.add_argument("--skip-newton", nargs="*", default=[], metavar="DATASET",
                    help="do not time Newton on these datasets (e.g. fashion14k: 5+ dense "
                         "(n+1)-systems of 14,001 unknowns)")
    ap.add_argument("--stopping", nargs="*", default=[], metavar="DATASET=CRITERION",
                    help="override the PCG early stop of TIMED_AT for some datasets")
    ap.add_argument("--raw-dir", default="resources/raw")
    ap.add_argument("--out", default="results/benchmarks/lapsvm_training_time.json")
    ap.add_argument("--markdown", action="store_true", help="only print the table from --out")
    args = ap.parse_args()
    if args.markdown:  # --out and its siblings <stem>_*.json (e.g. the --large run)
        out = Path(args.out)
        table = {}
        for path in [out, *sorted(out.parent.glob(f"{out.stem}_*.json"))]:
            if path.exists():
                table.update(json.loads(path.read_text()))
        print(markdown(table))
        return
    names = list(args.datasets) + (["fashion14k"] if args.large else [])
    stopping = dict(item.split("=", 1) for item in args.stopping)
    table = {}
    print(f"{'dataset':10s} {'n':>6s} {'dual':>16s} {'newton':>16s} {'pcg':>16s}  stop       "
          f"dual/pcg (paper)  newton/pcg (paper)  newton steps  pcg iters  T error (%)")
    for name in names:
        if name == "fashion14k":
            graph, y, roles, kernel, p = fashion14k(args.raw_dir)
            g = dict(DEFAULT, stopping="stability", source="defaults (not selected)")
        else:
            cfg = DATASETS[name]
            graph, y, roles = prepare(name, cfg, args.raw_dir)
            kernel, p = {"kind": "rbf", "sigma": cfg["sigma"]}, cfg["p"]
            g = chosen(name, stopping.get(name))
        K = kernel_matrix(graph.X, None, kernel)
        Mp = matrix_power(graph.laplacian("normalized", 1), p)
        runs = [time_split(K, Mp, y, roles[s], g, g["stopping"],
                           newton=name not in args.skip_newton)
                for s in range(min(args.splits, roles.shape[0]))]
        agg = {k: (float(np.mean([r[k] for r in runs])), float(np.std([r[k] for r in runs])))
               for k in runs[0]}
        ratio = (agg["dual"][0] / agg["pcg"][0], agg["newton"][0] / agg["pcg"][0])
        ratio_cpu = (agg["dual_cpu"][0] / agg["pcg_cpu"][0],
                     agg["newton_cpu"][0] / agg["pcg_cpu"][0])
        pd, pn, pp = PAPER[name]
        table[name] = {**agg, "ratio_dual_pcg": ratio[0], "ratio_newton_pcg": ratio[1],
                       "ratio_dual_pcg_cpu": ratio_cpu[0], "ratio_newton_pcg_cpu": ratio_cpu[1],
                       "paper": PAPER[name], "paper_ratio_dual_pcg": pd / pp,
                       "paper_ratio_newton_pcg": pn / pp, "n": int(K.shape[0]),
                       "params": g, "splits": len(runs)}
        fmt = lambda k: f"{agg[k][0]:8.3f} ({agg[k][1]:.3f})"  # noqa: E731
        print(f"{name:10s} {K.shape[0]:6d} {fmt('dual')} {fmt('newton')} {fmt('pcg')}  "
              f"{g['stopping']:10s} {ratio[0]:6.1f}x ({pd / pp:5.1f}x)   {ratio[1]:6.1f}x "
              f"({pn / pp:5.1f}x)       {agg['newton_steps'][0]:5.2f}       "
              f"{agg['pcg_iters'][0]:6.1f}   err_T dual {agg['dual_err_T'][0]:.2f} newton "
              f"{agg['newton_err_T'][0]:.2f} pcg {agg['pcg_err_T'][0]:.2f}", flush=True)
        print(f"{'  cpu':10s} {'':6s} {fmt('dual_cpu')} {fmt('newton_cpu')} {fmt('pcg_cpu')}  "
              f"{'':10s} {ratio_cpu[0]:6.1f}x          {ratio_cpu[1]:6.1f}x", flush=True)
        table[name]["ratio_pcg_gemv_pcg_cpu"] = agg["pcg_gemv_cpu"][0] / agg["pcg_cpu"][0]
        print(f"{'  pcg K@u':10s} {'':6s} {fmt('pcg_gemv_cpu')} CPU s with the general product "
              f"(same iterations: {agg['pcg_gemv_iters'][0]:.1f}); dsymv is "
              f"{table[name]['ratio_pcg_gemv_pcg_cpu']:.2f}x faster", flush=True)
        del K
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
