"""What a reproduction page reads of the runs: an experiment's table (the aggregate rule's CSV),
the wall and job seconds of its jobs (the run's benchmark files) and the command that reruns it."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..stats import KEYS

ENV = "GSSL_DATA_MIRROR=../shared/data OMP_NUM_THREADS=1"  # the commands' environment


def read_table(results_dirs, experiment: str) -> tuple[pd.DataFrame, Path] | None:
    """The aggregate rule's CSV of an experiment from the first results folder holding it."""
    for d in results_dirs:
        path = Path(d) / "tables" / f"{experiment}.csv"
        if path.exists():
            return pd.read_csv(path, dtype={k: str for k in KEYS}), Path(d)
    return None


def wall_seconds(results: Path, experiments, datasets,
                 read: dict | None = None) -> tuple[float, float] | None:
    """(wall, Σ job seconds) of the jobs of ``experiments`` and of their datasets' data, feature
    and graph jobs, read from the run's benchmark files: each file's modification time is its
    job's end and its ``s`` column its duration. The wall is the time during which at least one
    of them ran (the union of their intervals), so that a results folder filled over several
    sessions (a cached graph, a resumed run) does not count the hours between them, and runs of
    the folder that overlapped count once. Jobs without a benchmark (splits, selection choice) are
    left out; they take seconds. ``read``: benchmark file -> its seconds, filled and reused
    across calls (a page asks per table, then per experiment)."""
    read = {} if read is None else read
    spans = []
    for tsv in (Path(results) / "benchmarks").rglob("*.tsv"):
        rule, first = tsv.relative_to(Path(results) / "benchmarks").parts[:2]
        owner = first.removesuffix(".tsv")
        if owner in (experiments if rule not in ("dataset", "features", "graphs") else datasets):
            if tsv not in read:
                read[tsv] = float(pd.read_csv(tsv, sep="\t")["s"].iloc[0])
            seconds = read[tsv]
            end = tsv.stat().st_mtime
            spans.append((end - seconds, end, seconds))
    if not spans:
        return None
    wall, start, end = 0.0, None, None
    for s, e, _ in sorted(spans):
        if end is None or s > end:  # a gap: close the interval so far
            wall += 0.0 if end is None else end - start
            start, end = s, e
        else:
            end = max(end, e)
    return wall + (end - start), sum(s for _, _, s in spans)


def duration(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds):
        return "–"
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min" if h else (f"{m} min {s:02d} s" if m else f"{s} s")


def command(config_path: str, config: dict, experiments) -> str:
    """The snakemake command that runs these experiments of the paper config."""
    cmd = f"snakemake --cores 2 --configfile {config_path}"
    if list(experiments) != list(config.get("run") or []):
        cmd += f" --config 'run=[{', '.join(experiments)}]'"
    return cmd
