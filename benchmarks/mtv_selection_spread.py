"""How much does the paper's transductive statistic vary with the label draws?

The MTV paper reports, per data set and label rate, the purity of the lowest-energy run among ten
random label draws. Given a ``mtv_time.py`` result with many draws (``--repeats 50``), this script
resamples ten-draw sets without replacement and reports the spread of that statistic: its median
and 10-90 % range, and the share of ten-draw sets whose value lies within ``--tol`` points of the
paper's figure. It reads the JSON only (no solver runs).

    python benchmarks/mtv_selection_spread.py results/benchmarks/mtv_time_pendigits_frac_r50.json
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def lowest_energy_purity(splits: list[dict], idx: np.ndarray) -> float:
    chosen = min(idx, key=lambda i: splits[i]["discrete_energy"])
    return splits[chosen]["purity"]


def spread(splits: list[dict], k: int, n_sets: int, rng: np.random.Generator) -> np.ndarray:
    n = len(splits)
    if n < k:
        raise ValueError(f"need at least {k} draws, the file has {n}")
    return np.array([lowest_energy_purity(splits, rng.choice(n, k, replace=False))
                     for _ in range(n_sets)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("result", help="JSON written by benchmarks/mtv_time.py")
    ap.add_argument("--k", type=int, default=10, help="draws per reported figure (paper: 10)")
    ap.add_argument("--sets", type=int, default=10000, help="resampled k-draw sets")
    ap.add_argument("--tol", type=float, default=1.5, help="points from the paper's figure")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    data = json.loads(open(args.result).read())
    rng = np.random.default_rng(args.seed)
    print(f"| data set | labels | draws | purity of the lowest-energy draw, first {args.k} | "
          f"over resampled {args.k}-draw sets: median (10-90 %) | paper | share within "
          f"{args.tol:g} | mean purity over all draws |\n|---|---|---|---|---|---|---|---|")
    for row in data["results"]:
        splits = row.get("splits")
        if not splits:
            continue
        values = spread(splits, args.k, args.sets, rng)
        paper = row["paper"][0] if row.get("paper") else None
        first = lowest_energy_purity(splits, np.arange(args.k))
        within = f"{np.mean(np.abs(values - paper) <= args.tol):.0%}" if paper else "–"
        lo, med, hi = np.percentile(values, [10, 50, 90])
        print(f"| {row['dataset']} | {row['protocol']} | {len(splits)} | {first:.2f} | "
              f"{med:.2f} ({lo:.2f}–{hi:.2f}) | {paper if paper else '–'} | {within} | "
              f"{np.mean([s['purity'] for s in splits]):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
