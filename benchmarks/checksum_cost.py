"""What the content checksum of the cache files costs (issue #21: at most 5 % of a stage's build
time), measured side by side in one run on the largest graph of the project: Fashion-MNIST's
70,000 points, PCA-50 features, the low-label experiment's 10-NN graph (knn10_calder).

For the features and the graph stage it prints the stage's build time (the pipeline function the
workflow's rule calls, writing included), the time of ``gssl.store.h5io.content_hash`` over the same
arrays (once at write, once more at every read) and the time of a read with and without
verification, then the ratios.

    OMP_NUM_THREADS=1 python benchmarks/checksum_cost.py [--raw-dir resources/raw] [--repeats 5]

The raw files come from GSSL_DATA_MIRROR (or ../shared/data) when they are not in --raw-dir yet.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import h5py

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from gssl.store import h5io  # noqa: E402
from gssl.pipeline.stages import build_dataset, build_features, build_graph, fetch_dataset  # noqa: E402

GRAPH = {"kind": "knn", "k": 10, "weights": "gaussian_kth", "symmetrize": "mean", "laplacian": "unnormalized"}


def timed(fn, repeats: int) -> float:
    """Median wall time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def read_arrays(path) -> dict:
    with h5py.File(path, "r") as fh:
        return {name: h5io._read_array(fh[name]) for name in fh.keys()}


def stage(name: str, path: Path, kind: str, build_seconds: float, repeats: int) -> None:
    arrays, attrs = h5io.read_h5(path, kind)
    hash_s = timed(lambda: h5io.content_hash(arrays, attrs["params"]), repeats)
    verified = timed(lambda: h5io.read_h5(path, kind), repeats)
    unverified = timed(lambda: read_arrays(path), repeats)
    size = path.stat().st_size / 2**20
    print(f"{name:9s} build {build_seconds:7.2f} s | file {size:6.1f} MiB | hash {hash_s:6.3f} s "
          f"({100 * hash_s / build_seconds:4.1f} % of build) | read {unverified:6.3f} s, verified "
          f"{verified:6.3f} s (+{100 * (verified - unverified) / build_seconds:4.1f} % of build per read)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw-dir", default="resources/raw")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if not (Path(args.raw_dir) / "fashion_mnist").is_dir():
            folder = Path(args.raw_dir) / "fashion_mnist"
            fetch_dataset("fashion_mnist", folder, folder / "MANIFEST.json")
        build_dataset("fashion_mnist", {"source": "fashion_mnist"}, args.raw_dir, tmp / "data.h5")
        t0 = time.perf_counter()
        build_features(tmp / "data.h5", [{"pca": {"n_components": 50}}], tmp / "features.h5")
        features_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        build_graph(tmp / "features.h5", GRAPH, tmp / "graph.h5")
        graph_s = time.perf_counter() - t0
        print(f"Fashion-MNIST 70,000 x 784 -> PCA-50 -> {GRAPH}; medians of {args.repeats} runs; the "
              "hash is paid once when a file is written and once at each read")
        stage("features", tmp / "features.h5", "features", features_s, args.repeats)
        stage("graph", tmp / "graph.h5", "graph", graph_s, args.repeats)


if __name__ == "__main__":
    main()
