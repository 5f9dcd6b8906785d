"""gssl's acquisition functions (gssl.active) beside GraphLearning 1.7.5's
(graphlearning.active_learning; ``pip install -e '.[peers]'``): the same weight matrix, the same
eigenpairs (GraphLearning's normalized-Laplacian eigen_decomp, given to both), the same class
scores (GraphLearning's Laplace learning on the start set) and the same labeled set, one thread.

For each acquisition function it prints the CPU seconds of one evaluation on every unlabeled
candidate (``values`` / ``compute``; the median over ``--repeats`` interleaved pairs) and of one
label's update of the covariance (``update``: the rank-one update, the median over ``--updates``
successive labels), on each side, and the CPU-time ratio gssl / GraphLearning (< 1: gssl
faster; the median of the per-pair ratios). Uncertainty sampling has no state to update; random
sampling has no GraphLearning counterpart (its ``rand`` candidate sets are not an acquisition).

    python benchmarks/active_peers.py                         # digits: seconds
    GSSL_DATA_MIRROR=../shared/data python benchmarks/active_peers.py --datasets digits mnist_test
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"  # one thread on both sides: before numpy, scipy or numba load

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import yaml  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lowlabel_speed import REPO, graph_of  # noqa: E402  (puts src/ on the path)

import graphlearning as gl  # noqa: E402
import graphlearning.active_learning as gal  # noqa: E402

from gssl.active import make_acquisition  # noqa: E402
from gssl.optim.active import UNCERTAINTY_MEASURES  # noqa: E402
from gssl.splits import LABELED, make_splits  # noqa: E402

# gssl name, params -> GraphLearning class, kwargs (None: no covariance)
PAIRS = [*((("uncertainty", {"measure": m}), (gal.unc_sampling, {"unc_method": m}, False))
           for m in UNCERTAINTY_MEASURES),
         (("vopt", {}), (gal.var_opt, {}, True)),
         (("sigma_opt", {}), (gal.sigma_opt, {}, True)),
         (("model_change", {}), (gal.model_change, {}, True)),
         (("model_change_vopt", {}), (gal.model_change_var_opt, {}, True))]


def cpu(fn):
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["digits"])
    ap.add_argument("--n-eig", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=15, help="timed evaluations per side (median)")
    ap.add_argument("--updates", type=int, default=30, help="timed one-label updates per side (median)")
    ap.add_argument("--raw-dir", default=str(REPO / "resources" / "raw"))
    ap.add_argument("--graph-cache", default=None)
    args = ap.parse_args(argv)
    cfg = yaml.safe_load((REPO / "config" / "experiments" / "lowlabel.yaml").read_text())
    cfg["datasets"]["digits"] = {"source": "digits"}
    print(f"{'dataset':<11} {'acquisition':<30} {'values gssl':>11} {'GL':>9} {'ratio':>6}"
          f" {'update gssl':>12} {'GL':>9} {'ratio':>6}")
    for name in args.datasets:
        ds, g, _ = graph_of(cfg, name, args.raw_dir, args.graph_cache)
        W, y = g.W, np.asarray(ds.y)
        lam, V = gl.graph(W).eigen_decomp(normalization="normalized", k=args.n_eig)
        start = np.flatnonzero(make_splits(y, {"kind": "labels_per_class", "n": 1, "repeats": 1},
                                           name, "active_peers")[0] == LABELED)
        u = gl.ssl.laplace(W).fit(start, y[start])
        cand = np.setdiff1d(np.arange(y.size), start)
        queries = cand[np.random.default_rng(0).choice(cand.size, args.updates, replace=False)]
        for (acq_name, params), (gl_cls, gl_kw, cov) in PAIRS:
            ours = make_acquisition(acq_name, {**params, **({"n_eig": args.n_eig} if cov else {})})
            ours.start(W, start, random_state=0, eigenpairs=(lam, V))
            theirs = gl_cls(**({"C": np.diag(1.0 / (lam + 1e-11)), "V": V.copy()} if cov else {}), **gl_kw)
            if cov:
                theirs.update(start, y[start])
            pairs = [(cpu(lambda: ours.values(u, cand)), cpu(lambda: theirs.compute(u, cand)))
                     for _ in range(args.repeats)]
            line = (f"{name:<11} {acq_name + (' ' + params['measure'] if params else ''):<30} "
                    f"{statistics.median(a for a, _ in pairs) * 1e3:>9.2f}ms "
                    f"{statistics.median(b for _, b in pairs) * 1e3:>7.2f}ms "
                    f"{statistics.median(a / b for a, b in pairs if b > 0):>6.2f}")
            if cov:
                ups = [(cpu(lambda: ours.update([k])), cpu(lambda: theirs.update([k], y[[k]])))
                       for k in queries]
                line += (f" {statistics.median(a for a, _ in ups) * 1e6:>10.1f}us "
                         f"{statistics.median(b for _, b in ups) * 1e6:>7.1f}us "
                         f"{statistics.median(a / b for a, b in ups if b > 0):>6.2f}")
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
