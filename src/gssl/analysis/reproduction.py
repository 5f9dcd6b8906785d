"""Reproduction pages (issue 32): ``docs/reproductions/<paper>.md`` generated from a workflow run's
tables and the paper config's ``reference:`` entries, and ``docs/reproductions/index.md`` over them.

A page is one paper config (``config/experiments/<paper>.yaml``); its sections are the paper's
tables, named by the references' citations ("<paper>, <table>, ..."). Every cell the config gives
a paper's value for is compared with our number by one criterion (:func:`tolerance`). The numbers
come from the ``aggregate`` rule's CSV (``<results>/tables/<experiment>.csv``) laid out by
:func:`gssl.analysis.tables.paper_tables`: nothing here recomputes a statistic of the splits.

Each page writes a sidecar ``<paper>.json`` (its cells, counts, commands and wall times) from which
the index is rebuilt, so a page regenerated from one run leaves the other pages' rows as they were.
Within a page, an experiment whose table no results folder holds keeps its cells from the
sidecar when the config's entries for it are unchanged (:func:`experiment_digest`; a sidecar
without digests vouches through the digest of the whole config file): a paper's long tables
can be run in different sessions, and the page says which cells were kept.
Hand-written deviation notes live beside the page in ``<paper>.notes.md``; the page links them.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .tables import (BELOW_CHANCE, NOT_CONVERGED, paper_tables, protocol_label, reference_blocks,
                     with_reference)
from .stats import KEYS

ENV = "GSSL_DATA_MIRROR=../shared/data OMP_NUM_THREADS=1"
WITHIN, OUTSIDE, NO_SE = "within noise", "outside noise", "no SE (one draw)"
TUNED_NOTE = ("† tuned on the scored points: hyper-parameters chosen with labels of points these "
              "numbers are scored on (the paper's protocol where it did so). Headline rows use the "
              "honest protocol; † rows stand beside them.")


def criterion_text() -> str:
    """The verdict's one criterion, as each page states it."""
    return ("Δ = ours − paper. A cell is **within noise** when |Δ| ≤ 2·√(SE² + s²/n), s and n "
            "being the paper's standard deviation and number of draws; where the paper gives no "
            "spread, when |Δ| ≤ r + 2·SE, r being half a unit of the paper's last printed digit. "
            "SE is the standard error of our number: of a mean over d draws, std/√d; of the "
            "paper's one-draw statistic (e.g. the lowest-energy draw), the std over our draws. "
            "With one draw there is no SE and no verdict.")


def tolerance(se: float, ref_std: float = math.nan, ref_draws: int | None = None,
              decimals: int = 2) -> float:
    """The largest |Δ| a cell may show and be within noise.

    Parameters
    ----------
    se : float
        Standard error of our number (NaN with a single draw).
    ref_std, ref_draws : float, int or None
        The paper's standard deviation and its number of draws, where it gives them.
    decimals : int
        Decimals the paper prints: its rounding, r = 0.5·10^-decimals, stands in for its noise
        where it gives no spread.

    Returns
    -------
    float
        2·√(SE² + s²/n) with the paper's spread, else r + 2·SE; NaN where SE is NaN.
    """
    if se is None or math.isnan(se):
        return math.nan
    if ref_std is not None and not math.isnan(ref_std) and ref_draws:
        return 2.0 * math.sqrt(se ** 2 + ref_std ** 2 / ref_draws)
    return 0.5 * 10.0 ** -decimals + 2.0 * se


def verdict(delta: float, tol: float) -> str:
    """``within noise`` when |Δ| ≤ tol (a tiny slack for the floats), else ``outside noise``."""
    if math.isnan(tol):
        return NO_SE
    return WITHIN if abs(delta) <= tol + 1e-9 else OUTSIDE


@dataclass
class Cell:
    """One compared cell: our number, the paper's, and the verdict."""

    table: str  # the paper's table (from the citation)
    experiment: str
    dataset: str
    method: str
    protocol: str  # its label, e.g. "1/class"
    mean: float  # mean over the draws
    se: float  # standard error of the mean
    draws: int
    statistic: float  # the paper's one-draw statistic where the experiment has one (else NaN)
    ref: float
    ref_std: float
    ref_draws: int | None
    delta: float
    tol: float
    verdict: str
    tuned: bool
    flags: str  # below chance, splits not converged (tables.py's marks)
    citation: str
    key: str  # what pairs a † cell with its honest counterpart (dataset, solver, labels)


def paper_and_table(citation: str, fallback: str) -> tuple[str, str]:
    """("Melacci & Belkin (2011)", "Table 4") from "Melacci & Belkin (2011), Table 4, T error": the
    citation's first two comma-separated parts, the second without a parenthesis."""
    parts = [p.strip() for p in citation.split(", ")]
    if len(parts) < 2:
        return citation.strip() or fallback, fallback
    return parts[0], parts[1].split(" (")[0].strip()


def _decimals(value: float) -> int:
    text = repr(float(value))
    return 0 if "e" in text else len(text.split(".")[1].rstrip("0"))


def _reference_lookup(entry: dict) -> dict:
    """(dataset or None, method, protocol) -> the block's citation, std, draws: as with_reference,
    a block without a dataset applies to every dataset, and a later block wins."""
    out = {}
    for ref in reference_blocks(entry):
        for method, row in ref["values"].items():
            for protocol in row:
                std = (ref.get("std") or {}).get(method, {}).get(protocol, math.nan)
                out[(ref.get("dataset"), method, protocol)] = (ref["citation"], float(std), ref.get("draws"))
    return out


def table_decimals(config: dict) -> dict:
    """Table name -> the most decimals the paper prints in it, over every reference of the config
    (YAML drops trailing zeros: 97.60 reads as 97.6, so one value alone would undercount)."""
    out: dict[str, int] = {}
    for exp, entry in config["experiments"].items():
        for ref in reference_blocks(entry):
            table = paper_and_table(ref["citation"], exp)[1]
            for row in ref["values"].values():
                for v in row.values():
                    out[table] = max(out.get(table, 0), _decimals(v))
    return out


def experiment_cells(table: pd.DataFrame, config: dict, experiment: str,
                     decimals: dict | None = None) -> list[Cell]:
    """The compared cells of one experiment from its table (the aggregate rule's CSV), in the paper
    tables' order (:func:`gssl.analysis.tables.paper_tables`)."""
    from ..pipeline.config import table_entry

    entry = table_entry(config, experiment)
    table = with_reference(table, entry)  # the config's reference now, not the one the run saw
    lookup = _reference_lookup(entry)
    decimals = decimals if decimals is not None else table_decimals(config)
    labels = {p: protocol_label(config["protocols"][p]) for p in entry["protocols"]}
    cells = []
    for t in paper_tables(table, entry):
        for m in t.methods:
            for p in t.protocols:
                ref = t.ref.at[m, p] if t.ref is not None else math.nan
                if pd.isna(ref) or pd.isna(t.mean.at[m, p]):
                    continue
                cells.append(_cell(t, m, p, float(ref), experiment, config, labels, lookup, decimals))
    return cells


def _compared_se(se: float, statistic: float, draws: int) -> float:
    """SE of the number compared with the paper's: the mean's, or for the paper's one-draw
    statistic (``statistic`` not NaN) one draw's spread, the std over the draws."""
    return se if math.isnan(statistic) else se * math.sqrt(draws)


def _cell(t, m, p, ref, experiment, config, labels, lookup, decimals) -> Cell:
    citation, ref_std, ref_draws = lookup.get((t.dataset, m, p)) or lookup[(None, m, p)]
    table_name = paper_and_table(citation, experiment)[1]
    n = int(t.n.at[m, p])
    sem = float(t.sem.at[m, p]) if t.sem is not None else math.nan
    stat = float(t.stat.at[m, p]) if t.stat is not None and not pd.isna(t.stat.at[m, p]) else math.nan
    ours = t.mean.at[m, p] if math.isnan(stat) else stat
    tol = tolerance(_compared_se(sem, stat, n), ref_std, ref_draws, decimals.get(table_name, 2))
    flags = ([BELOW_CHANCE] if t.below_chance(m, p) else []) + (
        [f"{NOT_CONVERGED} {t.n_not_converged(m, p)}/{n} not converged"] if t.n_not_converged(m, p) else [])
    method = config["methods"][m]
    key = json.dumps([config["datasets"][t.dataset], method["solver"],
                      (method.get("params") or {}).get("stopping"), labels.get(p, p)], sort_keys=True)
    return Cell(table_name, experiment, t.dataset, m, labels.get(p, p), float(t.mean.at[m, p]), sem, n,
                stat, ref, ref_std, ref_draws, float(ours - ref), tol, verdict(ours - ref, tol),
                m in t.tuned, "; ".join(flags), citation, key)


# ----------------------------------------------------------------------------- runs and timings
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


def _duration(seconds: float | None) -> str:
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


# ----------------------------------------------------------------------------- the page
@dataclass
class TableSummary:
    """One of the paper's tables on a page: an index row."""

    paper: str
    table: str
    cells: int
    within: int
    tuned: int
    experiments: list
    not_run: list
    command: str
    wall_s: float | None
    job_s: float | None
    kept: list = ()       # experiments whose cells were kept from the page's previous generation


def load_config(path, default="config/config.yaml") -> dict:
    """A paper config merged over the default config (as the workflow merges --configfile over it,
    when that file is there), validated."""
    from ..pipeline.config import load_yaml_files, validate_config

    return validate_config(load_yaml_files(([default] if default and Path(default).exists() else []) + [path]))


def reproduced_experiments(config: dict) -> list[str]:
    """The config's experiments that give a paper's values, in config order."""
    return [e for e, entry in config["experiments"].items() if reference_blocks(entry)]


DIGEST_VERSION = 2  # what experiment_digest covers; a sidecar of another version vouches by file


def experiment_digest(config: dict, experiment: str) -> str:
    """Digest of everything the config says about one experiment: its entry, the entries of its
    datasets, preprocessing, graphs, methods and protocols (the selection protocol too) and the
    workflow's seed. The code is not in it: kept cells are those of the run that made them."""
    entry = config["experiments"][experiment]
    parts = {"experiment": entry, "seed": config.get("seed")}
    for section in ("datasets", "preprocessing", "graphs", "methods", "protocols"):
        ids = list(entry.get(section) or [])
        if section == "protocols" and (entry.get("selection") or {}).get("protocol"):
            ids.append(entry["selection"]["protocol"])
        parts[section] = {i: config.get(section, {}).get(i) for i in ids}
    blob = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _kept_cells(previous: dict | None, config: dict, config_path, exp: str,
                decimals: dict) -> list[Cell] | None:
    """The cells of ``exp`` in the previous sidecar, when it vouches for the config's entries
    (its digest of them, or for a sidecar of another digest version the whole file's digest),
    their noise and verdict recomputed by today's criterion."""
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
    for c in cells:
        c.tol = tolerance(_compared_se(c.se, c.statistic, c.draws), c.ref_std, c.ref_draws,
                          decimals.get(c.table, 2))
        c.verdict = verdict(c.delta, c.tol)
    return cells or None


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
            paper, name, len(in_table), sum(c.verdict == WITHIN for c in in_table),
            sum(c.tuned for c in in_table), exps + kept_here, absent,
            command(str(config_path), config, (exps + kept_here) or absent),
            *(timing or (None, None)), kept_here))
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


def _num(x: float, spec: str = ".2f") -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _ordered(cells: list[Cell]) -> list[Cell]:
    """Rows in the tables' order, each † cell right after the honest cell it pairs with."""
    first: dict[str, int] = {}
    for i, c in enumerate(cells):
        first.setdefault(c.key, i)
    return sorted(cells, key=lambda c: (first[c.key], c.tuned))


def _row(c: Cell, with_stat: bool) -> str:
    paper = _num(c.ref) + (f" ± {_num(c.ref_std)}" if not math.isnan(c.ref_std) else "")
    method = f"{c.method} †" if c.tuned else c.method
    cols = [c.dataset, method, c.protocol, f"{_num(c.mean)} ± {_num(c.se)}", str(c.draws)]
    if with_stat:
        cols.append(_num(c.statistic))
    cols += [paper, f"{c.delta:+.2f}", _num(c.tol), c.verdict + (f" · {c.flags}" if c.flags else "")]
    return "| " + " | ".join(cols) + " |"


def page_markdown(paper: str, config_path: str, cells: list[Cell], summaries: list[TableSummary],
                  missing: list[str], config: dict, generator: str, notes: str | None = None) -> str:
    """The page: the criterion, then per table of the paper its compared cells."""
    lines = [f"# Reproduction: {paper}", "",
             f"<!-- Generated by `{generator}`; do not edit by hand. -->", "",
             f"Config: [`{config_path}`](../../{config_path}). Every number below comes from the "
             "workflow's tables (`results/tables/<experiment>.csv`) and the config's `reference:` "
             "entries.", ""]
    if notes:
        lines += [f"Deviations from the paper (hand-written): [{Path(notes).name}]({Path(notes).name}).", ""]
    lines += [criterion_text(), ""]
    if any(c.tuned for c in cells):
        lines += [TUNED_NOTE, ""]
    stat_labels = {(config["experiments"][c.experiment].get("paper_statistic") or {}).get("label")
                   for c in cells if not math.isnan(c.statistic)}
    for s in summaries:
        lines += _section(s, [c for c in cells if c.table == s.table], stat_labels)
    if missing:
        lines += ["## Not in the runs", "",
                  "No `tables/<experiment>.csv` for: " + ", ".join(f"`{e}`" for e in missing) + ".", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _section(s: TableSummary, cells: list[Cell], stat_labels: set) -> list[str]:
    if not cells:
        return [f"## {s.table}", "", f"Not in the runs ({', '.join(f'`{e}`' for e in s.not_run)}); "
                f"command (with `{ENV}`): `{s.command}`.", ""]
    lines = [f"## {s.table}", "",
             f"{s.cells} cells, {s.within} within noise, {s.tuned} marked †. Command "
             f"(with `{ENV}`): `{s.command}`; wall time {_duration(s.wall_s)} "
             f"({_duration(s.job_s)} of jobs).", ""]
    if s.kept:
        lines += ["Cells of " + ", ".join(f"`{e}`" for e in s.kept) + " are kept from this page's "
                  "previous generation: no results folder given held their tables, and the config's "
                  "entries for them are unchanged; they are the numbers of the code that ran then.",
                  ""]
    lines += ["Paper's values: " + "; ".join(dict.fromkeys(c.citation for c in cells)) + ".", ""]
    with_stat = any(not math.isnan(c.statistic) for c in cells)
    header = ["dataset", "method", "protocol", "mean ± SE", "draws"]
    if with_stat:
        label = " / ".join(sorted(x for x in stat_labels if x)) or "paper's statistic"
        header.append(label)
    header += ["paper", "Δ", "noise", "verdict"]
    lines += ["| " + " | ".join(header) + " |",
              "|" + "|".join("---" if h in ("dataset", "method", "protocol", "verdict") else "---:"
                             for h in header) + "|"]
    lines += [_row(c, with_stat) for c in _ordered(cells)] + [""]
    if with_stat:
        lines += [f"{label}: the paper's statistic, the value of one draw chosen by a label-free "
                  "criterion; Δ and the verdict compare it, with the std over our draws as its SE.", ""]
    return lines


# ----------------------------------------------------------------------------- sidecar and index
def config_digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def write_page(config_path, results_dirs, out_dir="docs/reproductions",
               default_config="config/config.yaml", configs_dir="config/experiments") -> Path:
    """Write ``<out_dir>/<paper config stem>.md`` and its sidecar ``.json``, then the index."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = Path(config_path).stem
    side = out_dir / f"{stem}.json"
    previous = json.loads(side.read_text()) if side.exists() else None
    built = build_page(config_path, results_dirs, default_config, previous)
    cells = built.cells
    notes = out_dir / f"{stem}.notes.md"
    generator = f"gssl reproduction {config_path}"
    text = page_markdown(built.paper, str(config_path), cells, built.summaries, built.missing,
                         built.config, generator, str(notes) if notes.exists() else None)
    page = out_dir / f"{stem}.md"
    page.write_text(text)
    side.write_text(json.dumps(
        {"paper": built.paper, "config": str(config_path),
         "config_sha256": config_digest(config_path), "digest_version": DIGEST_VERSION,
         "experiment_times": built.times,
         "experiment_digests": {e: experiment_digest(built.config, e)
                                for e in dict.fromkeys(c.experiment for c in cells)},
         "page": page.name, "tables": [asdict(s) for s in built.summaries],
         "cells": [asdict(c) for c in cells]}, indent=1, default=_json_default) + "\n")
    write_index(out_dir, configs_dir)
    return page


def _json_default(x):
    if isinstance(x, (np.integer, np.floating)):
        return x.item()
    raise TypeError(type(x))


def index_rows(out_dir, configs_dir="config/experiments") -> list[dict]:
    """One row per paper table from the pages' sidecars, and one per paper config that gives
    reference values but has no page yet."""
    out_dir, rows = Path(out_dir), []
    done = set()
    for side in sorted(out_dir.glob("*.json")):
        data = json.loads(side.read_text())
        done.add(Path(data["config"]).stem)
        stale = Path(data["config"]).exists() and config_digest(data["config"]) != data["config_sha256"]
        for t in data["tables"]:
            rows.append({**t, "page": data["page"], "state": "config edited since" if stale else ""})
    for cfg in sorted(Path(configs_dir).glob("*.yaml")) if Path(configs_dir).is_dir() else []:
        if cfg.stem in done or "reference:" not in cfg.read_text():
            continue
        rows.append({"paper": cfg.stem, "table": "–", "cells": None, "within": None, "tuned": None,
                     "command": f"snakemake --cores 2 --configfile {cfg.as_posix()}", "wall_s": None,
                     "job_s": None, "page": None, "state": "not yet regenerated", "not_run": [],
                     "experiments": []})
    return rows


def write_index(out_dir, configs_dir="config/experiments") -> Path:
    """``<out_dir>/index.md``: paper, table, cells, within noise, marked †, command, wall time."""
    rows = index_rows(out_dir, configs_dir)
    lines = ["# Reproductions", "",
             "<!-- Generated by `gssl reproduction`; do not edit by hand. -->", "",
             "One row per table of a paper: how many of its cells our runs put within noise of the "
             "paper's value (the criterion is stated on each page), how many are marked † (tuned on "
             f"the scored points), the command that reruns them (with `{ENV}`, from the "
             "repository root) and the wall time of its jobs in the runs the page was generated from "
             "(the time during which at least one of its jobs ran, on the project's 2-core machine; "
             "other runs sharing the cores lengthen it, runs of the same folder that overlapped "
             "shorten it: the page gives the jobs' own total too). "
             "`gssl reproduction CONFIG --results RESULTS` regenerates a page and this index.",
             "", "| paper | table | cells | within noise | marked † | command | wall time |",
             "|---|---|---:|---:|---:|---|---:|"]
    for r in rows:
        paper = f"[{r['paper']}]({r['page']})" if r["page"] else r["paper"]
        table = r["table"] + (f" ({r['state']})" if r["state"] and r["page"] else "")
        ran = r["page"] and r["experiments"]
        counts = [str(r[k]) if ran else "–" for k in ("cells", "within", "tuned")]
        if not r["page"]:
            table = r["state"]
        elif r.get("not_run"):
            table += f" (not run: {', '.join(r['not_run'])})"
        lines.append(f"| {paper} | {table} | " + " | ".join(counts)
                     + f" | `{r['command']}` | {_duration(r['wall_s'])} |")
    path = Path(out_dir) / "index.md"
    path.write_text("\n".join(lines) + "\n")
    return path
