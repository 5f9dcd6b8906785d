"""Why TV-SVM and TV-RLS coincide (issue 50): the two methods differ only in how the labels enter
(binary: the h-step, Bresson & Zhang (23) against (75)-(76); multiclass: the f-step, (107)
against (139)). This fits both on the same draws and reports where the labels act.

    OMP_NUM_THREADS=1 python benchmarks/tv_rls_vs_svm.py binary --draws 3 --gammas 0.03 0.1
    OMP_NUM_THREADS=1 python benchmarks/tv_rls_vs_svm.py binary --draws 2 --gammas 0.1 --radius n
    OMP_NUM_THREADS=1 python benchmarks/tv_rls_vs_svm.py multiclass --draws 4
    OMP_NUM_THREADS=1 python benchmarks/tv_rls_vs_svm.py multiclass --data usps --draws 1

binary: USPS 4 vs 9 (1,673 images, the mirror: $GSSL_DATA_MIRROR or ../shared/data),
tvsvm_usps.yaml's Table 1 settings (10-NN self-tuning graph, σ = 6, eigenmap start, up to 1,500
iterations), one label per class. Per (draw, γ): both errors, the nodes whose labels differ, and
the labels' pull in the h-step, max |h − e| over the labeled nodes in the last 50 iterations
(e = g − λ2/r2, where the label term starts from; the SVM's pull is 0 where its hinge is
inactive). ``--radius n`` is the paper's sphere radius N instead of our √N.

multiclass: scikit-learn's digits 0/1/4/9 (720 images, pixels / 16, σ = 2) or, with ``--data
usps``, USPS 0/1/4/9 (4,495 images, σ = 6; minutes per fit), Table 2's settings (diffusion_fiedler
start, γ = 2, λ = 0.01), one label per class. Per draw: the errors of TV-RLS after one iteration
and at its stop, of TV-SVM, and of both with the label weight (η, μ) 100 times larger, and how many
labels differ from the first iteration's. ``--unpinned`` runs the ADMM without pinning the labeled
rows of g (the solvers pin them): the label terms then act.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import numpy as np

import gssl
from gssl.optim import tv_admm


def usps49():
    from gssl.datasets import load, select

    mirror = os.environ.get("GSSL_DATA_MIRROR") or str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
    ds = select(load("usps", mirror=mirror), classes=[4, 9])
    return np.asarray(ds.X, dtype=float), np.asarray(ds.y)


def digits0149():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, [0, 1, 4, 9])
    return X[keep] / 16.0, np.unique(y[keep], return_inverse=True)[1]


def graph(X):
    return gssl.build_graph(X, kind="knn", k=10, weights="self_tuning", symmetrize="max",
                            laplacian="normalized")


def one_label_per_class(y, seed):
    rng = np.random.default_rng(seed)
    lab = np.array([rng.choice(np.flatnonzero(y == c)) for c in np.unique(y)])
    yt = np.full_like(y, -1)
    yt[lab] = y[lab]
    return yt


def error(pred, y, yt):
    return 100 * np.mean(pred[yt == -1] != y[yt == -1])


def record_pulls() -> dict:
    """Wrap the binary h-steps so that each call records max |h - e| over the labeled nodes."""
    pulls: dict = {}
    for cls, key in ((tv_admm.RLSLabelStep, "rls"), (tv_admm.HingeLabelStep, "svm")):
        def call(self, g, l2, _orig=cls.__call__, _key=key):
            h = _orig(self, g, l2)
            pulls.setdefault(_key, []).append(float(np.max(np.abs(h - (g - l2 / self.r2))[self.lab])))
            return h
        cls.__call__ = call
    return pulls


def binary(args):
    X, y = usps49()
    G, pulls = graph(X), record_pulls()
    common = dict(kernel={"kind": "rbf", "sigma": 6.0}, lam=0.01, r1=1.0, r2=1.0, radius=args.radius,
                  init="eigenmap", max_iter=1500)
    same = 0
    for d in range(args.draws):
        yt = one_label_per_class(y, 100 + d)
        for gamma in args.gammas:
            out = {}
            for name, extra in (("tv_rls", {"eta": 1.0}), ("tv_svm", {"mu": 1.0})):
                pulls[name[3:]] = []
                out[name[3:]] = gssl.make_solver(name, gamma=gamma, **common, **extra).fit(G, yt).predict()
            differ = int(np.sum(out["rls"] != out["svm"]))
            same += differ == 0
            last = {k: max(v[-50:]) for k, v in pulls.items()}
            print(f"draw {d} gamma {gamma}: error RLS {error(out['rls'], y, yt):.2f} SVM "
                  f"{error(out['svm'], y, yt):.2f}, labels differ on {differ} nodes; label pull in the "
                  f"last 50 h-steps RLS {last['rls']:.3g} SVM {last['svm']:.3g}", flush=True)
    print(f"identical labels on {same} of {args.draws * len(args.gammas)} (draw, gamma) pairs")


def usps0149():
    from gssl.datasets import load, select

    mirror = os.environ.get("GSSL_DATA_MIRROR") or str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
    ds = select(load("usps", mirror=mirror), classes=[0, 1, 4, 9])
    return np.asarray(ds.X, dtype=float), np.asarray(ds.y)


def unpin():
    """Make the TV solvers' multiclass ADMM leave the labeled rows of g free."""
    import gssl.solvers.tv as tv

    pinned = tv.simplex_admm

    def free(*a, **k):
        return pinned(*a, **{**k, "pinned": None})
    tv.simplex_admm = free


def multiclass(args):
    X, y = usps0149() if args.data == "usps" else digits0149()
    G = graph(X)
    if args.unpinned:
        unpin()
    common = dict(kernel={"kind": "rbf", "sigma": 6.0 if args.data == "usps" else 2.0}, lam=0.01,
                  gamma=2.0, r1=1.0, radius="sqrt_n", init="diffusion_fiedler", diffusion_dt=10.0)
    runs = (("RLS, 1 iteration", "tv_rls", {"eta": 1.0, "max_iter": 1}),
            ("RLS", "tv_rls", {"eta": 1.0, "max_iter": 300}), ("SVM", "tv_svm", {"mu": 1.0, "max_iter": 300}),
            ("RLS eta 100", "tv_rls", {"eta": 100.0, "max_iter": 300}),
            ("SVM mu 100", "tv_svm", {"mu": 100.0, "max_iter": 300}))
    for d in range(args.draws):
        yt = one_label_per_class(y, 200 + d)
        preds = {key: gssl.make_solver(name, **common, **extra).fit(G, yt).predict() for key, name, extra in runs}
        moved = {key: int(np.sum(p != preds["RLS, 1 iteration"])) for key, p in preds.items()}
        print(f"draw {d}: " + ", ".join(f"{k} {error(p, y, yt):.2f}" for k, p in preds.items())
              + f"; labels that differ from RLS after 1 iteration: {moved}", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("case", choices=["binary", "multiclass"])
    p.add_argument("--draws", type=int, default=3)
    p.add_argument("--gammas", type=float, nargs="+", default=[0.03, 0.1])
    p.add_argument("--radius", choices=["sqrt_n", "n"], default="sqrt_n")
    p.add_argument("--data", choices=["digits", "usps"], default="digits", help="multiclass: the data")
    p.add_argument("--unpinned", action="store_true", help="multiclass: labeled rows of g left free")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    (binary if args.case == "binary" else multiclass)(args)


if __name__ == "__main__":
    main()
