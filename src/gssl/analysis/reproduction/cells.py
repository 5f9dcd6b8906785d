"""The compared cells of a reproduction page: one per value a paper config's ``reference:`` gives,
our number from the aggregate rule's CSV (:func:`gssl.analysis.tables.paper_tables`; nothing here
recomputes a statistic of the splits) beside the paper's, judged by the one criterion
(:mod:`.criterion`), named as the paper names the method (the method entry's ``label:``) and,
where the config gives one, with the reason it differs (the reference's ``reasons:``)."""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass

import pandas as pd

from ...splits import protocol_label
from ..tables import (
    BELOW_CHANCE,
    NOT_CONVERGED,
    paper_tables,
    reference_blocks,
    with_reference,
)
from .criterion import tolerance, verdict


@dataclass
class Cell:
    """One compared cell: our number, the paper's, and the verdict."""

    table: str  # the paper's table (from the citation)
    experiment: str
    dataset: str
    method: str  # the config's method id
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
    # from the config as it is now (recomputed for cells kept from an earlier generation)
    label: str = ""  # the paper's name of the method (the method entry's label:), else its id
    protocol_id: str = ""  # the config's protocol id
    reason: str = ""  # the reason key the reference's reasons: give the cell ("" = none)


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
    """(dataset or None, method, protocol) -> the block: as with_reference, a block without a
    dataset applies to every dataset, and a later block wins."""
    out = {}
    for ref in reference_blocks(entry):
        for method, row in ref["values"].items():
            for protocol in row:
                out[(ref.get("dataset"), method, protocol)] = ref
    return out


def _block(lookup: dict, dataset: str, method: str, protocol: str) -> dict:
    return lookup.get((dataset, method, protocol)) or lookup[(None, method, protocol)]


def reason_for(block: dict, method: str, protocol: str) -> str:
    """The reason key of the first pattern of the block's ``reasons:`` that ``method/protocol``
    (config ids) matches (shell wildcards: ``*``, ``?``, ``[...]``), else ""."""
    for pattern, key in (block.get("reasons") or {}).items():
        if fnmatch.fnmatchcase(f"{method}/{protocol}", pattern):
            return key
    return ""


def method_label(config: dict, method: str) -> str:
    """The paper's name of a method: its entry's ``label:``, else its id."""
    return (config["methods"].get(method) or {}).get("label") or method


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
    tables' order (:func:`gssl.analysis.tables.paper_tables`), judged (:func:`judge`)."""
    from ...pipeline.config import table_entry

    entry = table_entry(config, experiment)
    table = with_reference(table, entry)  # the config's reference now, not the one the run saw
    lookup = _reference_lookup(entry)
    labels = {p: protocol_label(config["protocols"][p]) for p in entry["protocols"]}
    cells = []
    for t in paper_tables(table, entry):
        for m in t.methods:
            for p in t.protocols:
                ref = t.ref.at[m, p] if t.ref is not None else math.nan
                if pd.isna(ref) or pd.isna(t.mean.at[m, p]):
                    continue
                cells.append(_cell(t, m, p, float(ref), experiment, config, labels, lookup))
    return judge(cells, config, decimals)


def compared_se(se: float, statistic: float, draws: int) -> float:
    """SE of the number compared with the paper's: the mean's, or for the paper's one-draw
    statistic (``statistic`` not NaN) one draw's spread, the std over the draws."""
    return se if math.isnan(statistic) else se * math.sqrt(draws)


def _cell(t, m, p, ref, experiment, config, labels, lookup) -> Cell:
    block = _block(lookup, t.dataset, m, p)
    std = (block.get("std") or {}).get(m, {}).get(p, math.nan)
    n = int(t.n.at[m, p])
    sem = float(t.sem.at[m, p]) if t.sem is not None else math.nan
    stat = float(t.stat.at[m, p]) if t.stat is not None and not pd.isna(t.stat.at[m, p]) else math.nan
    ours = t.mean.at[m, p] if math.isnan(stat) else stat
    flags = ([BELOW_CHANCE] if t.below_chance(m, p) else []) + (
        [f"{NOT_CONVERGED} {t.n_not_converged(m, p)}/{n} not converged"] if t.n_not_converged(m, p) else [])
    method = config["methods"][m]
    key = json.dumps([config["datasets"][t.dataset], method["solver"],
                      (method.get("params") or {}).get("stopping"), labels.get(p, p)], sort_keys=True)
    return Cell(paper_and_table(block["citation"], experiment)[1], experiment, t.dataset, m,
                labels.get(p, p), float(t.mean.at[m, p]), sem, n, stat, ref, float(std),
                block.get("draws"), float(ours - ref), math.nan, "", m in t.tuned, "; ".join(flags),
                block["citation"], key, protocol_id=p)


def judge(cells: list[Cell], config: dict, decimals: dict | None = None) -> list[Cell]:
    """Set each cell's noise, verdict, method label and reason from the config as it is now (in
    place; returned for chaining): fresh cells and cells kept from a page's earlier generation
    alike, so that one criterion and one set of names and reasons serve a whole page."""
    decimals = decimals if decimals is not None else table_decimals(config)
    for c in cells:
        entry = config["experiments"][c.experiment]
        if not c.protocol_id:  # a cell of an older sidecar: its protocol id from its label
            ids = [p for p in entry["protocols"] if protocol_label(config["protocols"][p]) == c.protocol]
            c.protocol_id = ids[0] if len(ids) == 1 else c.protocol
        ours = c.mean if math.isnan(c.statistic) else c.statistic
        se = compared_se(c.se, c.statistic, c.draws)
        c.tol = tolerance(se, c.ref_std, c.ref_draws, decimals.get(c.table, 2))
        c.verdict = verdict(c.delta, c.tol, se, ours, c.ref)
        c.label = method_label(config, c.method)
        lookup = _reference_lookup(entry)
        block = lookup.get((c.dataset, c.method, c.protocol_id)) or lookup.get((None, c.method, c.protocol_id))
        c.reason = reason_for(block, c.method, c.protocol_id) if block else ""
    return cells
