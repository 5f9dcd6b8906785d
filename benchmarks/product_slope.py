"""The sparse product Wn P of Laplace's and Poisson's CG steps (``product_into``: scipy's
``csr_matvecs`` on an (n, 4) block), timed per nonzero at several sizes in the node order and in
reverse Cuthill-McKee order, in float64 (the code's) and in float32 (weights and block), with the
log-log slope between consecutive sizes (issue #34: a Laplace fit's slope from 10^5 to 10^6, goal
<= 1.2). A fit's slope cannot fall below its product's unless its iteration count shrinks with n.

The graphs are those of ``coupled_cg.py`` (four half-moons in 50-D, NN-descent 10-NN
``gaussian_kth``, mean-symmetrized; ``--graph-cache`` keeps them). Each variant runs ``--repeats``
times after one untimed call; the median is printed, with the bytes of W (indices and weights).

    OMP_NUM_THREADS=1 python benchmarks/product_slope.py [--sizes 100000,1000000] \\
        [--repeats 15] [--graph-cache DIR]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse import _sparsetools

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checksum_cost import timed  # noqa: E402  (median wall time of repeated calls)
from coupled_cg import graph_of  # noqa: E402  (puts src/ on the path)

from gssl.optim.graph_learning import _normalized_graph  # noqa: E402

K = 4  # the four moons' classes: the block's width in a fit


def product(A: sp.csr_matrix, P: np.ndarray, out: np.ndarray) -> None:
    """out = A P by the kernel ``product_into`` calls, in A's and P's precision."""
    out.fill(0)
    _sparsetools.csr_matvecs(A.shape[0], A.shape[1], P.shape[1], A.indptr, A.indices, A.data,
                             P.ravel(), out.ravel())


def variants(W: sp.csr_matrix):
    """(name, Wn) of each order and precision."""
    for order, threshold in (("node order", math.inf), ("RCM", 0)):
        Wn = _normalized_graph(W, threshold).Wn
        yield f"{order}, float64", Wn
        yield f"{order}, float32", Wn.astype(np.float32)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--graph-cache", type=Path, default=None, help="folder for the graphs (npz)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    seconds = {}  # (variant, n) -> seconds of one product
    print(f"{'variant':18s} {'n':>9s} {'W MB':>7s} {'ms':>8s} {'ns/nnz':>7s}", flush=True)
    for n in sizes:
        graph = graph_of(n, args.graph_cache)[0]
        for name, Wn in variants(graph.W):
            P = np.random.default_rng(0).standard_normal((n, K)).astype(Wn.dtype)
            out = np.empty_like(P)
            product(Wn, P, out)  # untimed: the first call's page faults
            s = timed(lambda: product(Wn, P, out), args.repeats)
            seconds[name, n] = s
            mb = (Wn.data.nbytes + Wn.indices.nbytes + Wn.indptr.nbytes) / 2**20
            print(f"{name:18s} {n:9d} {mb:7.1f} {s * 1e3:8.2f} {s / Wn.nnz * 1e9:7.2f}",
                  flush=True)
    print("\nlog-log slope of one product (time, not per nonzero) between sizes:")
    for name in dict.fromkeys(name for name, _ in seconds):
        print(f"{name:18s} " + "  ".join(
            f"{a}->{b}: {math.log(seconds[name, b] / seconds[name, a]) / math.log(b / a):.3f}"
            for a, b in zip(sizes, sizes[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
