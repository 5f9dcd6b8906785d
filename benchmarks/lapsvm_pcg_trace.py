"""Error of primal LapSVM by PCG as a function of the iteration (the paper's Figures 5-12), and where
each early-stopping criterion fires, against the Newton optimum.

For each binary dataset of benchmarks/lapsvm_table4.py (same graph, kernel, splits, and the
gamma_A / gamma_I that script selected for Newton): PCG is run without early stopping (up to
``--max-iter`` iterations or convergence) while a recorder looks at every iterate; the stability,
validation and mixed criteria are evaluated on the same iterates (each with its own state, exactly
as in a stopped run) and the iteration at which each would have fired is reported, together with
the T error there, Newton's T error, and the first iteration from which PCG's T error stays within
0.5 points of Newton's.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/lapsvm_pcg_trace.py \
        --datasets g50c coil20b pcmac uspstb --splits 2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lapsvm_table4 import DATASETS, prepare  # noqa: E402

from gssl.graphs import matrix_power  # noqa: E402
from gssl.kernels import kernel_matrix  # noqa: E402
from gssl.optim.manifold_primal import LaplacianPower, lapsvm_newton, manifold_pcg  # noqa: E402
from gssl.optim.pcg import StoppingCriterion, default_check_every, make_criterion  # noqa: E402
from gssl.splits import LABELED, TEST, VALIDATION  # noqa: E402

CRITERIA = ("stability", "validation", "mixed")


class Recorder(StoppingCriterion):
    """Never stops; records the T error of every iterate and when each criterion would fire."""

    name = "recorder"

    def __init__(self, every, unl_pos, test_pos, y_test):
        self.crits = {c: make_criterion(c, every) for c in CRITERIA}
        self.unl_pos, self.test_pos, self.y_test = unl_pos, test_pos, y_test
        self.reset()

    def reset(self):
        for c in self.crits.values():
            c.reset()
        self.fired = {}
        self.err_T = []

    def __call__(self, state):
        dec = state.decisions()                      # signs on every node (unlabeled = all)
        self.err_T.append(100.0 * float(np.mean(dec[self.test_pos] != self.y_test)))
        sub = type(state)(iteration=state.iteration, objective=state.objective,
                          grad_norm=state.grad_norm, decisions=lambda: dec[self.unl_pos],
                          validation_errors=state.validation_errors)
        for name, c in self.crits.items():
            if name not in self.fired and c(sub):
                self.fired[name] = state.iteration
        return False


def trace_split(K, M, MK, M1, y, role, g, max_iter):
    lab = np.flatnonzero(role == LABELED)
    val = np.flatnonzero(role == VALIDATION)
    test = np.flatnonzero(role == TEST)
    unl = np.flatnonzero((role != LABELED) & (role != VALIDATION))
    t = lambda idx: np.where(y[idx] == 1, 1.0, -1.0)  # noqa: E731
    newton = lapsvm_newton(K, M, lab, t(lab), g["gamma_A"], g["gamma_I"], MK=MK, M1=M1)
    err_newton = 100.0 * float(np.mean(np.where(newton.f[test] >= 0, 1.0, -1.0) != t(test)))
    rec = Recorder(default_check_every(K.shape[0]), unl, test, t(test))
    res = manifold_pcg(K, M, lab, t(lab), g["gamma_A"], g["gamma_I"], criterion=rec,
                       max_iter=max_iter, unlabeled=np.arange(K.shape[0]),
                       validation=(val, t(val)), record_history=False)
    err = np.asarray(rec.err_T)
    within = np.flatnonzero(np.abs(err - err_newton) > 0.5)
    reach = int(within[-1] + 2) if within.size else 1      # first iteration that stays within
    if within.size and within[-1] == err.size - 1:
        reach = None
    return {"newton_err_T": err_newton, "newton_steps": newton.n_iter,
            "pcg_iters_run": res.n_iter, "pcg_stop": res.stop_reason,
            "pcg_final_err_T": float(err[-1]), "reach_newton_within_0.5": reach,
            "fired": {c: (rec.fired.get(c), float(err[rec.fired[c] - 1]) if c in rec.fired
                          else None) for c in CRITERIA},
            "err_T_every_10": err[9::10].round(2).tolist()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["g50c", "coil20b", "pcmac", "uspstb"],
                    choices=[d for d in DATASETS if "groups" in DATASETS[d] or d in
                             ("g50c", "pcmac")])
    ap.add_argument("--splits", type=int, default=2)
    ap.add_argument("--max-iter", type=int, default=2000)
    ap.add_argument("--raw-dir", default="resources/raw")
    ap.add_argument("--results", default="results/benchmarks/lapsvm_table4")
    ap.add_argument("--gamma-A", type=float, default=None,
                    help="override the selected gamma_A (conditioning experiment)")
    ap.add_argument("--out", default="results/benchmarks/lapsvm_pcg_trace.json")
    args = ap.parse_args()
    out = {}
    for name in args.datasets:
        cfg = DATASETS[name]
        rows = json.loads(Path(args.results, f"{name}.json").read_text())["rows"]
        g = dict(rows["LapSVM Newton"]["params"])
        if args.gamma_A is not None:
            g["gamma_A"] = args.gamma_A
        graph, y, roles = prepare(name, cfg, args.raw_dir)
        K = kernel_matrix(graph.X, None, {"kind": "rbf", "sigma": cfg["sigma"]})
        M = LaplacianPower(matrix_power(graph.laplacian("normalized", 1), cfg["p"]), 1)
        MK = M.dense_times(K)
        M1 = M @ np.ones(K.shape[0])
        out[name] = []
        for s in range(min(args.splits, roles.shape[0])):
            r = trace_split(K, M, MK, M1, y, roles[s], g, args.max_iter)
            out[name].append(r)
            fired = "  ".join(f"{c} @{it} ({e:.2f})" if it else f"{c} never"
                              for c, (it, e) in r["fired"].items())
            print(f"[{name} split {s}] gA={g['gamma_A']:g} gI={g['gamma_I']:g}  Newton T "
                  f"{r['newton_err_T']:.2f} ({r['newton_steps']} steps)  PCG {r['pcg_iters_run']} "
                  f"iters ({r['pcg_stop']}) final T {r['pcg_final_err_T']:.2f}, within 0.5 of "
                  f"Newton from iter {r['reach_newton_within_0.5']}  |  {fired}", flush=True)
        del K, MK
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
