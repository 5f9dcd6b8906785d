"""The results tables built from the solve jobs' JSON outputs (never from MLflow searches):
the runs loaded one row per split, aggregated per cell, completed with the paired tests, the
paper's statistic and reference, and laid out per dataset setting as in the papers (:class:`PaperTable`,
which :mod:`gssl.analysis.report` renders)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..metrics import HIGHER_IS_BETTER, headline_score, summary
from .stats import KEYS

BELOW_CHANCE = "▽ below chance"
NOT_CONVERGED = "⚠"


def _read_block(path) -> dict:
    """One solve job's output; a damaged one is named, with the command that rebuilds it."""
    from ..errors import CacheError

    try:
        rec = json.loads(Path(path).read_text())
        rec["splits"]
    except (ValueError, KeyError, TypeError) as exc:
        raise CacheError(f"{path} is not a complete solve-job output ({type(exc).__name__}: {exc}); "
                         f"delete it and rerun: snakemake --cores N {path}") from None
    return rec


def load_runs(paths) -> pd.DataFrame:
    """One row per split from the solve jobs' JSON outputs (each holds a block of splits)."""
    rows = []
    for p in paths:
        rec = _read_block(p)
        for split in rec["splits"]:
            row = {k: rec[k] for k in KEYS}
            row["split"] = split["split"]
            row.update(split["metrics"])
            rows.append(row)
    if not rows:
        raise ValueError("no run outputs given")
    return pd.DataFrame(rows)


def aggregate(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean, std and standard error (:func:`gssl.metrics.summary`) of every metric, and the count
    of splits, per (dataset, prep, graph, method, protocol)."""
    metrics = [c for c in runs.columns if c not in KEYS + ["split"]
               and pd.api.types.is_numeric_dtype(runs[c])]
    groups = runs.groupby(KEYS, sort=False)
    stats = {key: {m: summary(sub[m].dropna()) for m in metrics} for key, sub in groups}
    out = pd.DataFrame({f"{m}_{stat}": [stats[key][m][stat] for key in stats]
                        for stat in ("mean", "std", "sem") for m in metrics},
                       index=pd.MultiIndex.from_tuples(list(stats), names=KEYS))
    out["n_splits"] = groups.size()
    return out.reset_index()


def with_paired_tests(table: pd.DataFrame, runs: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """Add ``tied_with_best`` and ``p_holm_vs_best``: per cell, whether the headline metric is not
    significantly worse than its setting's best method on the same splits (paired Wilcoxon,
    Holm-corrected within the setting; :func:`gssl.analysis.stats.paired_tests`)."""
    from .stats import paired_tests

    metric = metric or headline_metric(table)
    tests = paired_tests(runs, metric)[KEYS + ["tied_with_best", "p_holm"]]
    return table.merge(tests.rename(columns={"p_holm": "p_holm_vs_best"}), on=KEYS, how="left")


def with_paper_statistic(table: pd.DataFrame, runs: pd.DataFrame, entry: dict,
                         metric: str | None = None) -> pd.DataFrame:
    """Add column ``paper_statistic``: per cell, the headline of the split with the lowest value of
    the experiment's ``paper_statistic.lowest`` metric (the first such split on ties); NaN without
    one. A statistic of one split, so it moves with the draws: the tables show the mean beside it."""
    out = table.copy()
    spec = entry.get("paper_statistic")
    if not spec:
        out["paper_statistic"] = np.nan
        return out
    metric = metric or headline_metric(table)
    by = spec["lowest"]
    if by not in runs:
        raise ValueError(f"paper_statistic.lowest {by!r} is not a metric of the runs (they have: "
                         f"{', '.join(c for c in runs.columns if c not in KEYS)})")
    ordered = runs.dropna(subset=[by]).sort_values(KEYS + ["split"], kind="stable")
    picked = ordered.loc[ordered.groupby(KEYS, sort=False)[by].idxmin(), KEYS + [metric]]  # NaN by: none
    out = out.merge(picked.rename(columns={metric: "paper_statistic"}), on=KEYS, how="left")
    return out


def headline_metric(table: pd.DataFrame) -> str:
    """The error the papers report: on test points where a protocol has them, else on unlabeled;
    purity when every row is a clustering method (the clustering papers' headline)."""
    clustering = "purity_mean" in table and table["purity_mean"].notna().all()
    metric = headline_score(clustering, _has_values(table, "error_test"))
    if metric != "purity" and not _has_values(table, metric):
        raise ValueError("no error metric in the run outputs")
    return metric


def _has_values(table: pd.DataFrame, metric: str) -> bool:
    return f"{metric}_mean" in table and table[f"{metric}_mean"].notna().any()


def _order(values, preferred):
    seen = [v for v in preferred if v in set(values)]
    return seen + [v for v in dict.fromkeys(values) if v not in seen]


@dataclass(frozen=True)
class PaperTable:
    """One dataset setting (dataset, prep, graph) of an experiment laid out as in the papers:
    rows = methods, columns = protocols, each cell the metric's mean, std and number of splits
    (NaN where the setting has no result for that method and protocol)."""

    dataset: str
    prep: str
    graph: str
    metric: str
    methods: list
    protocols: list
    mean: pd.DataFrame
    std: pd.DataFrame
    n: pd.DataFrame
    sem: pd.DataFrame | None = None
    ref: pd.DataFrame | None = None  # the paper's values (NaN where it gives none)
    tuned: frozenset = frozenset()  # methods tuned on the scored points
    stat: pd.DataFrame | None = None  # the paper's one-split statistic (paper_statistic)
    stat_label: str = ""
    tied: pd.DataFrame | None = None  # not significantly worse than the setting's best (paired test)
    chance: pd.DataFrame | None = None  # each cell's error at chance (chance_error_<set>_mean)
    not_converged: pd.DataFrame | None = None  # each cell's splits stopped on their iteration limit

    def cell(self, method: str, protocol: str) -> str | None:
        """``"mean ± std (n=N, SE s)"`` in the metric's unit (%), followed by the paper's value and
        our difference where the experiment gives a reference; None where there is no value."""
        parts = self.cell_parts(method, protocol)
        return None if parts is None else " · ".join(p for p in parts if p)

    def cell_parts(self, method: str, protocol: str) -> tuple[str, str] | None:
        """(ours, the paper's value with our difference or ""), None where there is no value."""
        mean = self.mean.at[method, protocol]
        if pd.isna(mean):
            return None
        se = self.sem.at[method, protocol] if self.sem is not None else np.nan
        ours = (f"{mean:.2f} ± {self.std.at[method, protocol]:.2f} "
                f"(n={int(self.n.at[method, protocol])}"
                + (f", SE {se:.2f})" if not pd.isna(se) else ")"))
        stat = self.stat.at[method, protocol] if self.stat is not None else np.nan
        if not pd.isna(stat):  # the paper's statistic first: the reference is compared with it
            ours = f"{self.stat_label} {stat:.2f}; mean {ours}"
            mean = stat
        tied = self.tied.at[method, protocol] if self.tied is not None else np.nan
        if not pd.isna(tied) and bool(tied) and method not in self.best(protocol):
            ours += " ≈"
        if self.below_chance(method, protocol):
            ours += f" {BELOW_CHANCE}"
        if self.n_not_converged(method, protocol):
            ours += (f" {NOT_CONVERGED} {self.n_not_converged(method, protocol)}/"
                     f"{int(self.n.at[method, protocol])} not converged")
        ref = self.ref.at[method, protocol] if self.ref is not None else np.nan
        return ours, ("" if pd.isna(ref) else f"paper {ref:.2f} (Δ {mean - ref:+.2f})")

    def chance_level(self, method: str, protocol: str) -> float:
        """The metric's value at chance, always answering the largest class of the scored
        points: the error 100 (1 - its share) %, or the share itself for purity / clustering
        accuracy; NaN where unknown."""
        chance = self.chance.at[method, protocol] if self.chance is not None else np.nan
        return 100.0 - chance if self.metric.startswith(HIGHER_IS_BETTER) else chance

    def below_chance(self, method: str, protocol: str) -> bool:
        """Whether the cell's mean is no better than chance (:meth:`chance_level`)."""
        mean, level = self.mean.at[method, protocol], self.chance_level(method, protocol)
        if pd.isna(mean) or pd.isna(level):
            return False
        if self.metric.startswith(HIGHER_IS_BETTER):
            return bool(mean <= level + 1e-9)
        return bool(mean >= level - 1e-9)

    def n_not_converged(self, method: str, protocol: str) -> int:
        """How many of the cell's splits stopped on their iteration limit (0 where unknown)."""
        k = self.not_converged.at[method, protocol] if self.not_converged is not None else np.nan
        return 0 if pd.isna(k) else int(k)

    def label(self, method: str) -> str:
        """The method's row label: marked † when it was tuned on the scored points."""
        return f"{method} †" if method in self.tuned else method

    def best(self, protocol: str) -> set:
        """The methods with the best mean in a column, as displayed (2 decimals; ties all count):
        the lowest error, or the highest purity / clustering accuracy."""
        col = self.mean[protocol].dropna().round(2)
        if col.empty:
            return set()
        target = col.max() if self.metric.startswith(HIGHER_IS_BETTER) else col.min()
        return set(col.index[col == target])


def paper_tables(table: pd.DataFrame, entry: dict, metric: str | None = None) -> list[PaperTable]:
    """The layout markdown() and html() share: one PaperTable per (dataset, prep, graph) in the
    table's order; methods and protocols in the experiment entry's order, then any others in the
    order they appear. ``metric`` defaults to :func:`headline_metric`."""
    metric = metric or headline_metric(table)
    out = []
    for (ds, prep, graph), sub in table.groupby(["dataset", "prep", "graph"], sort=False):
        protocols = _order(sub["protocol"], entry.get("protocols", []))
        methods = _order(sub["method"], entry.get("methods", []))
        first = sub.drop_duplicates(["method", "protocol"])

        def grid(column):
            return (first.pivot(index="method", columns="protocol", values=column)
                    .reindex(index=methods, columns=protocols))

        sem = grid(f"{metric}_sem") if f"{metric}_sem" in sub else None
        ref = grid("reference") if "reference" in sub and sub["reference"].notna().any() else None
        stat = (grid("paper_statistic") if "paper_statistic" in sub
                and sub["paper_statistic"].notna().any() else None)
        tied = grid("tied_with_best").astype(object) if "tied_with_best" in sub else None
        chance = _chance_column(metric)
        chance = grid(chance) if chance in sub and sub[chance].notna().any() else None
        # converged_mean: the share of converged splits (fit_split's converged, 1 or 0)
        not_converged = (((1.0 - grid("converged_mean")) * grid("n_splits")).round()
                         if "converged_mean" in sub else None)
        out.append(PaperTable(ds, prep, graph, metric, methods, protocols,
                              grid(f"{metric}_mean"), grid(f"{metric}_std"), grid("n_splits"),
                              sem, ref, frozenset(tuned_on_scored_points(entry)), stat,
                              (entry.get("paper_statistic") or {}).get("label", "paper's statistic"),
                              tied, chance, not_converged))
    return out


def _chance_column(metric: str) -> str | None:
    """The column holding the error at chance of the points ``metric`` scores: error_<set> ->
    chance_error_<set>_mean; purity and clustering accuracy score the unlabeled points. None for
    the other metrics (a macro error's chance level is not the largest class's)."""
    if metric.startswith("error_"):
        return f"chance_{metric}_mean"
    return "chance_error_unlabeled_mean" if metric.startswith(HIGHER_IS_BETTER) else None


def tuned_on_scored_points(entry: dict) -> list[str]:
    """Methods whose reported numbers were tuned on the points they are scored on: those the
    experiment lists in ``tuned_on_scored_points``, and every method chosen by a selection with
    ``scored_points: true`` (the papers' protocol, reproduced; the tables mark them): the
    methods with a grid, which the aggregate rule lists as ``gridded_methods`` (all methods when the
    entry does not say)."""
    out = list(entry.get("tuned_on_scored_points") or [])
    if (entry.get("selection") or {}).get("scored_points"):
        chosen = entry.get("gridded_methods", entry.get("methods", []))  # set by the aggregate rule
        out += [m for m in chosen if m not in out]
    return out


def with_reference(table: pd.DataFrame, entry: dict, metric: str | None = None) -> pd.DataFrame:
    """Add the experiment's ``reference`` (the paper's value of the headline metric per method and
    protocol) and our difference to it, as columns ``reference`` and ``reference_diff``."""
    metric = metric or headline_metric(table)
    out = table.copy()
    out["reference"] = np.nan
    for ref in reference_blocks(entry):
        for method, row in ref["values"].items():
            for protocol, value in row.items():
                hit = (out["method"] == method) & (out["protocol"] == protocol)
                if ref.get("dataset"):
                    hit &= out["dataset"] == ref["dataset"]
                out.loc[hit, "reference"] = float(value)
    ours = out[f"{metric}_mean"]
    if "paper_statistic" in out and out["paper_statistic"].notna().any():
        ours = out["paper_statistic"].fillna(ours)  # the paper reports its statistic, not the mean
    out["reference_diff"] = ours - out["reference"]
    out["tuned_on_scored_points"] = out["method"].isin(tuned_on_scored_points(entry))
    return out


def reference_blocks(entry: dict) -> list[dict]:
    ref = entry.get("reference")
    if not ref:
        return []
    return ref if isinstance(ref, list) else [ref]


