"""A reproduction page's content, built from the runs: its cells table by table (fresh from a
results folder, or kept from the page's sidecar while the config vouches for them), each table's
counts (:func:`table_counts`) and wall times."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..tables import NOT_CONVERGED, reference_blocks
from .cells import Cell, experiment_cells, judge, paper_and_table, table_decimals
from .criterion import OUTSIDE, TOO_NOISY, WITHIN, expected_by_chance
from .runs import command, read_table, wall_seconds


@dataclass
class TableSummary:
    """One of the paper's tables on a page: an index row."""

    paper: str
    table: str
    cells: int = 0        # compared cells, honest and †
    tuned: int = 0        # of which marked † (tuned on the scored points)
    within: int = 0       # honest cells within noise
    within_tuned: int = 0  # † cells within noise
    outside: int = 0      # cells outside noise, honest and †
    unexplained: int = 0  # of which without a reason
    too_noisy: int = 0    # cells too noisy to judge, honest and †
    warned: int = 0       # cells marked ⚠ (draws that stopped at their iteration limit)
    judged: int = 0       # honest cells with a verdict (within or outside noise)
    chance: float = 0.0   # outside-noise verdicts chance alone gives among the judged honest cells
    experiments: list = field(default_factory=list)
    not_run: list = field(default_factory=list)
    command: str = ""
    wall_s: float | None = None
    job_s: float | None = None
    kept: list = field(default_factory=list)  # experiments whose cells were kept from the sidecar


def table_counts(cells: list[Cell]) -> dict:
    """A table's counts (:class:`TableSummary`'s fields): honest and † cells apart."""
    honest = [c for c in cells if not c.tuned]
    judged = sum(c.verdict in (WITHIN, OUTSIDE) for c in honest)
    return {"cells": len(cells), "tuned": len(cells) - len(honest),
            "within": sum(c.verdict == WITHIN for c in honest),
            "within_tuned": sum(c.verdict == WITHIN and c.tuned for c in cells),
            "outside": sum(c.verdict == OUTSIDE for c in cells),
            "unexplained": sum(c.verdict == OUTSIDE and not c.reason for c in cells),
            "too_noisy": sum(c.verdict == TOO_NOISY for c in cells),
            "warned": sum(NOT_CONVERGED in c.flags for c in cells),
            "judged": judged, "chance": round(expected_by_chance(judged), 2)}


def config_digest(path) -> str:
    """The first 12 hex digits of the SHA-256 of a config file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def _without(entry: dict, block_key: str, key: str) -> dict:
    """The experiment entry with ``key`` left out of its ``block_key`` block(s)."""
    blocks = entry.get(block_key)
    if not blocks:
        return entry
    strip = lambda b: {k: v for k, v in b.items() if k != key}
    return {**entry, block_key: [strip(b) for b in blocks] if isinstance(blocks, list) else strip(blocks)}


def load_config(path, default="config/config.yaml") -> dict:
    """A paper config merged over the default config (as the workflow merges --configfile over it,
    when that file is there), validated."""
    from ...pipeline.config import load_yaml_files, validate_config

    return validate_config(load_yaml_files(([default] if default and Path(default).exists() else []) + [path]))


def reproduced_experiments(config: dict) -> list[str]:
    """The config's experiments that give a paper's values, in config order."""
    return [e for e, entry in config["experiments"].items() if reference_blocks(entry)]


DIGEST_VERSION = 2  # what experiment_digest covers; a sidecar of another version vouches by file


def experiment_digest(config: dict, experiment: str) -> str:
    """Digest of everything the config says about one experiment: its entry, the entries of its
    datasets, preprocessing, graphs, methods and protocols (the selection protocol too) and the
    workflow's seed. The code is not in it: kept cells are those of the run that made them. What
    only names or explains a cell (a method's ``label:``, a reference's ``reasons:``) is not in it
    either: a kept cell takes those from the config as it is (:func:`gssl.analysis.reproduction.
    cells.judge`)."""
    entry = _without(config["experiments"][experiment], "reference", "reasons")
    parts = {"experiment": entry, "seed": config.get("seed")}
    for section in ("datasets", "preprocessing", "graphs", "methods", "protocols"):
        ids = list(entry.get(section) or [])
        if section == "protocols" and (entry.get("selection") or {}).get("protocol"):
            ids.append(entry["selection"]["protocol"])
        parts[section] = {i: config.get(section, {}).get(i) for i in ids}
    parts["methods"] = {i: m if m is None else {k: v for k, v in m.items() if k != "label"}
                        for i, m in parts["methods"].items()}
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _kept_cells(previous: dict | None, config: dict, config_path, exp: str,
                decimals: dict) -> list[Cell] | None:
    """The cells of ``exp`` in the previous sidecar, when it vouches for the config's entries
    (its digest of them, or for a sidecar of another digest version the whole file's digest),
    judged anew (:func:`judge`): today's criterion, the config's names and reasons."""
    if not previous:
        return None
    if previous.get("digest_version") == DIGEST_VERSION:
        same = (previous.get("experiment_digests") or {}).get(exp) == experiment_digest(config, exp)
    else:
        same = previous.get("config_sha256") == config_digest(config_path)
    if not same:
        return None
    try:
        cells = [Cell(**c) for c in previous.get("cells", []) if c.get("experiment") == exp]
    except TypeError:          # a sidecar of an older Cell: not kept, the experiment is rerun
        return None
    return judge(cells, config, decimals) or None


def _kept_timing(previous: dict | None, table: str, kept: list) -> tuple[float, float] | None:
    """The previous generation's wall and job seconds of the ``kept`` experiments: from its
    per-experiment times, or from a table of it that ran exactly ``kept``."""
    times = (previous or {}).get("experiment_times") or {}
    if kept and all(times.get(e) for e in kept):
        return tuple(float(sum(x)) for x in zip(*(times[e] for e in kept)))
    for t in (previous or {}).get("tables", []):
        if t["table"] == table and sorted(t["experiments"]) == sorted(kept) and t["wall_s"]:
            return t["wall_s"], t["job_s"]
    return None


@dataclass
class Page:
    """What a paper's reproduction page shows, built from the runs (:func:`build_page`)."""

    paper: str
    cells: list            # Cell, table by table
    summaries: list        # TableSummary per table
    missing: list          # experiments neither a results folder nor the sidecar holds
    config: dict
    times: dict            # experiment -> (wall, job seconds), where known: for the sidecar


def build_page(config_path, results_dirs, default_config="config/config.yaml",
               previous=None) -> Page:
    """The Page of a paper config from the runs in ``results_dirs``; experiments no folder holds
    keep their cells from ``previous`` (the page's sidecar) where it vouches for them
    (:func:`_kept_cells`)."""
    config = load_config(config_path, default_config)
    decimals = table_decimals(config)
    cells, found, missing, kept, where = [], [], [], [], {}
    read: dict = {}  # benchmark file -> seconds, read once for the tables and the experiments
    for exp in reproduced_experiments(config):
        hit = read_table(results_dirs, exp)
        if hit is None:
            old = _kept_cells(previous, config, config_path, exp, decimals)
            if old is None:
                missing.append(exp)
            else:
                kept.append(exp)
                cells += old
            continue
        table, where[exp] = hit
        found.append(exp)
        cells += experiment_cells(table, config, exp, decimals)
    paper = _paper_name(config, Path(config_path).stem)
    summaries = []
    for name in _table_names(config):
        in_table = [c for c in cells if c.table == name]
        exps = [e for e in found if any(c.experiment == e for c in in_table)]
        kept_here = [e for e in kept if any(c.experiment == e for c in in_table)]
        absent = [e for e in missing if _experiment_tables(config, e) & {name}]
        timing = _timing(where, config, exps, read) if exps else None
        if kept_here:   # runs of different sessions: their walls add up
            old = _kept_timing(previous, name, kept_here)
            timing = (None if old is None or (exps and timing is None)
                      else tuple(a + b for a, b in zip(old, timing or (0.0, 0.0))))
        summaries.append(TableSummary(
            paper, name, experiments=exps + kept_here, not_run=absent,
            command=command(str(config_path), config, (exps + kept_here) or absent),
            wall_s=(timing or (None, None))[0], job_s=(timing or (None, None))[1], kept=kept_here,
            **table_counts(in_table)))
    times = {}
    for e in found + kept:
        t = (_timing(where, config, [e], read) if e in where else
             next(filter(None, (_kept_timing(previous, n, [e]) for n in _table_names(config))),
                  None))
        if t:
            times[e] = t
    return Page(paper, cells, summaries, missing, config, times)


def _timing(where: dict, config: dict, exps: list, read: dict) -> tuple[float, float] | None:
    """The wall and job seconds of these experiments, when one results folder holds them all."""
    folders = {where[e] for e in exps}
    if len(folders) != 1:
        return None
    datasets = {d for e in exps for d in config["experiments"][e]["datasets"]}
    return wall_seconds(folders.pop(), exps, datasets, read)


def _paper_name(config: dict, fallback: str) -> str:
    for exp in reproduced_experiments(config):
        for ref in reference_blocks(config["experiments"][exp]):
            return paper_and_table(ref["citation"], fallback)[0]
    return fallback


def _experiment_tables(config: dict, exp: str) -> set:
    return {paper_and_table(r["citation"], exp)[1] for r in reference_blocks(config["experiments"][exp])}


def _table_names(config: dict) -> list[str]:
    names = []
    for exp in reproduced_experiments(config):
        names += [t for t in sorted(_experiment_tables(config, exp)) if t not in names]
    return names
