"""Tables and plots built from the solve jobs' JSON outputs (never from MLflow searches)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape as _escape
from pathlib import Path

import numpy as np
import pandas as pd

from ..metrics import HIGHER_IS_BETTER, SCORE_PREFIXES, split_statistics  # noqa: F401 - re-exported
from .stats import KEYS

ERROR_METRICS = ["error_unlabeled", "error_validation", "error_test", "macro_error_unlabeled"]


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
    """Mean, std and count of every metric per (dataset, prep, graph, method, protocol)."""
    metrics = [c for c in runs.columns if c not in KEYS + ["split"]
               and pd.api.types.is_numeric_dtype(runs[c])]
    g = runs.groupby(KEYS, sort=False)[metrics]
    out = (g.mean().add_suffix("_mean").join(g.std(ddof=0).add_suffix("_std"))
           .join(g.sem().add_suffix("_sem")))
    out["n_splits"] = runs.groupby(KEYS, sort=False).size()
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
    if "purity_mean" in table and table["purity_mean"].notna().all():
        return "purity"
    for m in ("error_test", "error_unlabeled"):
        if f"{m}_mean" in table and table[f"{m}_mean"].notna().any():
            return m
    raise ValueError("no error metric in the run outputs")


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


def _legend_notes(entry: dict) -> list[str]:
    cited: dict[str, list] = {}  # one note per citation, naming the datasets it covers
    for r in reference_blocks(entry):
        if r.get("citation"):
            cited.setdefault(r["citation"], []).extend([r["dataset"]] if r.get("dataset") else [])
    notes = [f"Paper's values: {c}" + (f" ({', '.join(ds)})" if ds else "") for c, ds in cited.items()]
    if entry.get("paper_statistic"):
        spec = entry["paper_statistic"]
        label = spec.get("label", "paper's statistic")
        notes.append(f"{label}: the value of the split with "
                     f"the lowest {spec['lowest'].replace('_', ' ')} (the paper's statistic, compared "
                     f"with its value); the mean over the splits follows.")
    if tuned_on_scored_points(entry):
        notes.append("† tuned on the scored points (the paper's protocol): its hyper-parameters "
                     "were chosen with the labels of points these numbers are scored on.")
    return notes


BELOW_CHANCE = "▽ below chance"
NOT_CONVERGED = "⚠"


def _flagged(tables) -> list[tuple]:
    """(table, method, protocol, below chance, splits not converged) of every flagged cell."""
    return [(t, m, p, t.below_chance(m, p), t.n_not_converged(m, p))
            for t in tables for m in t.methods for p in t.protocols
            if t.below_chance(m, p) or t.n_not_converged(m, p)]


def _flag_notes(tables) -> list[str]:
    """The legend's one line per flag that some cell carries."""
    flagged = _flagged(tables)
    notes = []
    if any(f[3] for f in flagged):
        notes.append(f"{BELOW_CHANCE}: no better than chance -- the mean error is at or above that "
                     "of always answering the largest class among the scored points, 100 (1 - its "
                     "share) % (a purity or clustering accuracy at or below that share); no result "
                     "to rank (docs/benchmarks.md, low label rates, explains multiclass MBO's).")
    if any(f[4] for f in flagged):
        notes.append(f"{NOT_CONVERGED} k/n not converged: k of the cell's n splits stopped on their "
                     "solver's iteration limit without meeting its criterion (a ConvergenceWarning; "
                     "MLflow split runs tagged gssl.converged = false); the mean includes their last "
                     "iterates.")
    return notes


def _flag_list(tables) -> list[str]:
    """The flagged cells, one line each (the list at the end of markdown() and html())."""
    lines = []
    for t, m, p, below, k in _flagged(tables):
        what = ([f"below chance (mean {t.mean.at[m, p]:.2f} %, chance "
                 f"{t.chance_level(m, p):.2f} %)"] if below else []) + (
            [f"{k} of {int(t.n.at[m, p])} splits not converged"] if k else [])
        lines.append(f"{t.dataset} · {t.prep} · {t.graph} · {m} · {p}: {'; '.join(what)}")
    return lines


TIED_NOTE = ("≈: not significantly worse than the best on the same splits (two-sided Wilcoxon "
             "signed-rank, Holm-corrected within the setting, p ≥ 0.05; n splits allow p ≥ 2/2ⁿ "
             "before Holm's factor, so with few splits every method is ≈).")


def _tied_note(experiment: str) -> str:
    """What ≈ marks, and where the tests are (the bold rule is in the cells' legend: said once)."""
    return (f"{TIED_NOTE} The tests: tables/{experiment}.stats.md (or .html; in the report under "
            f"Tables, statistics).")


def _cells_legend(metric: str, bold: str) -> str:
    """The cells' legend of markdown() and html(), with the one statement of the bold rule."""
    best = "highest" if metric.startswith(HIGHER_IS_BETTER) else "lowest"
    return (f"Cells: {_metric_name(metric)} (%), mean ± std over random splits (n = number of "
            f"splits, SE = standard error of the mean); {bold}: the {best} mean in its column "
            "at the two decimals shown (each of a tie); a dash (–) marks a missing result.")


def _bold(text: str | None, bold: bool) -> str | None:
    return f"**{text}**" if text and bold else text


def _metric_name(metric: str) -> str:
    return metric.replace("_", " ")


def markdown(table: pd.DataFrame, experiment: str, entry: dict, metric: str | None = None) -> str:
    """Paper-style tables: rows methods, columns protocols, cells mean ± std, one per dataset setting."""
    metric = metric or headline_metric(table)
    lines = [f"# Experiment `{experiment}`", ""]
    if entry.get("description"):
        lines += [entry["description"], ""]
    lines += [_cells_legend(metric, "**bold**"), ""]
    lines += [f"{note}\n" for note in _legend_notes(entry)]
    if "tied_with_best" in table:
        lines += [f"{_tied_note(experiment)}\n"]
    tables = paper_tables(table, entry, metric)
    lines += [f"{note}\n" for note in _flag_notes(tables)]
    for t in tables:
        lines += [f"## {t.dataset} · prep `{t.prep}` · graph `{t.graph}`", "",
                  "| method | " + " | ".join(t.protocols) + " |",
                  "|---|" + "---|" * len(t.protocols)]
        for m in t.methods:
            cells = [_bold(t.cell(m, p), m in t.best(p)) or "–" for p in t.protocols]
            lines.append(f"| {t.label(m)} | " + " | ".join(cells) + " |")
        lines.append("")
    flagged = _flag_list(tables)
    if flagged:
        lines += [f"## {FLAGGED_HEADING}", ""] + [f"- {line}" for line in flagged] + [""]
    return "\n".join(lines)


FLAGGED_HEADING = "Flagged cells"


def _num(x, spec=".2f") -> str:
    return "–" if x is None or x != x else format(x, spec)


def cd_sentence(cd: float, k: int) -> str:
    """The critical difference in words: with k methods average ranks lie in [1, k], so a CD above
    their range k - 1 means no pair can differ (the diagram then stops its bar at the axis end)."""
    if cd > k - 1:
        return (f"critical difference {cd:.2f}: larger than the rank range of {k - 1}, "
                "so no pair differs")
    return f"critical difference {cd:.2f}: pairs whose average ranks differ by at least this differ"


STATS_HEADER = ["method", "n", "mean", "SE", "95 % CI", "p", "p_Holm", ""]
STATS_RIGHT = [False, True, True, True, False, True, True, False]  # numbers right-aligned


def _statistics_blocks(cells: pd.DataFrame, across: dict) -> list[tuple]:
    """The statistics page as blocks that statistics_markdown() and statistics_html() render:
    ("p", text), ("h2", text) or ("table", header, right-aligned flags, rows, bold flags)."""
    from .stats import higher_is_better

    metric = across["metric"]
    lower = not higher_is_better(metric)
    blocks = [("p", f"{_metric_name(metric)} (%) per cell: mean, standard error (SE) and 95 % "
                    "Student-t interval over the splits. In each setting every method is compared with "
                    "the best one (in bold, marked best) on the same splits (two-sided Wilcoxon "
                    "signed-rank, Holm-corrected within the setting); ≈ marks those not significantly "
                    "worse than the best (p_Holm ≥ 0.05). With n paired splits the smallest p is 2/2ⁿ "
                    "(0.031 at 6 splits, 0.0078 at 8) and Holm multiplies it by up to the number of "
                    "methods compared, so with few splits every method is ≈.")]
    for setting, sub in cells.groupby(["dataset", "prep", "graph", "protocol"], sort=False):
        rows, bold = [], []
        for _, r in sub.sort_values("mean", ascending=lower, kind="stable").iterrows():
            rows.append([r["method"], str(int(r["n"])), _num(r["mean"]), _num(r["sem"]),
                         f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}]", _num(r["p_value"], ".3g"),
                         _num(r["p_holm"], ".3g"),
                         "best" if r["best"] else ("≈" if r["tied_with_best"] else "")])
            bold.append(bool(r["best"]))
        blocks += [("h2", " · ".join(setting)), ("table", STATS_HEADER, STATS_RIGHT, rows, bold)]
    blocks.append(("h2", "Across settings"))
    if "not_ranked" in across:
        return blocks + [("p", f"No ranking: {across['not_ranked']}.")]
    ranks = across["average_ranks"]
    blocks += [("p", f"Average rank of each method over {across['settings']} settings (1 = best; "
                     f"settings missing a method dropped: {across['settings_dropped']}). Settings that "
                     "share a dataset are not independent draws, so read the tests below as "
                     "descriptive when they do."),
               ("table", ["method", "average rank"], [False, True],
                [[m, f"{r:.2f}"] for m, r in ranks.items()], [False] * len(ranks))]
    text = f"Nemenyi {cd_sentence(across['critical_difference'], len(ranks))} (α = 0.05)."
    if "friedman_chi2" in across:
        line = f"Friedman χ²_F = {across['friedman_chi2']:.2f} (p = {across['friedman_p']:.3g})"
        if "iman_davenport_f" in across:
            line += (f"; Iman–Davenport F_F = {across['iman_davenport_f']:.2f} "
                     f"(p = {across['iman_davenport_p']:.3g})")
        else:
            line += "; every setting ranks the methods alike, so Iman–Davenport's F_F is unbounded"
        text += f" {line}."
    else:
        text += " Friedman test: needs at least 3 methods and 2 settings."
    return blocks + [("p", text)]


def statistics_markdown(cells: pd.DataFrame, across: dict, experiment: str) -> str:
    """The statistics page of an experiment (rule ``aggregate``): per setting, each method's mean,
    standard error and 95 % interval with its paired test against the best method; across settings
    the average ranks, Friedman test and critical difference (Demšar 2006)."""
    lines = [f"# Statistics of experiment `{experiment}`", ""]
    for kind, *rest in _statistics_blocks(cells, across):
        if kind == "p":
            lines += [rest[0], ""]
        elif kind == "h2":
            lines += [f"## {rest[0]}", ""]
        else:
            header, right, rows, bold = rest
            lines += ["| " + " | ".join(header) + " |",
                      "|" + "".join("---:|" if r else "---|" for r in right)]
            lines += ["| " + " | ".join([f"**{row[0]}**" if b else row[0], *row[1:]]) + " |"
                      for row, b in zip(rows, bold)]
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def statistics_html(cells: pd.DataFrame, across: dict, experiment: str) -> str:
    """statistics_markdown() as one self-contained, styled HTML page (the report's entry), in the
    style of html(): every name escaped, pure ASCII."""
    e = _escape
    out = _html_head(f"Statistics of experiment {experiment}") + [
        f"<h1>Statistics of experiment <code>{e(experiment)}</code></h1>"]
    for kind, *rest in _statistics_blocks(cells, across):
        if kind == "p":
            out.append(f'<p class="legend">{e(rest[0])}</p>')
        elif kind == "h2":
            out.append(f"<h2>{e(rest[0])}</h2>")
        else:
            header, right, rows, bold = rest
            left = ' class="text"'  # a text column of a numbers table
            out += ['<table class="stats">', "<thead><tr>" + "".join(
                f'<th scope="col"{"" if r else left}>{e(h)}</th>' for h, r in zip(header, right))
                + "</tr></thead>", "<tbody>"]
            for row, b in zip(rows, bold):
                tds = "".join(f'<td{"" if r else left}>{e(v)}</td>' for v, r in zip(row[1:], right[1:]))
                best = ' class="best"' if b else ""
                out.append(f'<tr{best}><th scope="row">{e(row[0])}</th>{tds}</tr>')
            out += ["</tbody>", "</table>"]
    return _html_page(out)


HTML_STYLE = """
body { margin: 0; padding: 24px 32px; background: #fff; color: #1b1f24;
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif; }
h1 { font-size: 20px; margin: 0 0 6px; }
h2 { font-size: 15px; margin: 26px 0 6px; }
code { font: 0.95em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
       background: #f1f3f5; padding: 0 3px; border-radius: 3px; }
p { margin: 4px 0; max-width: 60em; }
p.legend { color: #4a525c; }
table { border-collapse: collapse; border-top: 2px solid #1b1f24; border-bottom: 2px solid #1b1f24;
        font-variant-numeric: tabular-nums; margin: 4px 0; }
thead th { border-bottom: 1px solid #1b1f24; vertical-align: bottom; }
th, td { padding: 5px 16px; white-space: nowrap; }
table.stats th, table.stats td { padding: 5px 10px; }
th { font-weight: 600; text-align: right; }
th.method { text-align: left; }
tbody th { font-weight: normal; text-align: left; }
td { text-align: right; }
td.best, tr.best th, tr.best td { font-weight: 700; }
th.text, td.text { text-align: left; }
td.missing { color: #8a9099; text-align: center; }
tbody tr:nth-child(even) { background: #f5f6f8; }
.label { display: block; font-weight: normal; color: #4a525c; font-size: 12px; }
.ref { display: block; font-weight: normal; color: #4a525c; font-size: 12px; }
"""


def html(table: pd.DataFrame, experiment: str, entry: dict, metric: str | None = None,
         protocol_labels: dict | None = None) -> str:
    """The markdown() tables as one self-contained, styled HTML page (for the Snakemake report):
    per dataset setting rows = methods, columns = protocols (with their labels, e.g. "5/class",
    where ``protocol_labels`` has them), cells "mean ± std (n=N)" in %, the best mean per column
    in bold, "–" where there is no result. Every name from the config or runs is escaped; the page
    is pure ASCII (non-ASCII characters as numeric character references)."""
    metric = metric or headline_metric(table)
    labels = protocol_labels or {}
    e = _escape
    out = _html_head(f"Experiment {experiment}") + [f"<h1>Experiment <code>{e(experiment)}</code></h1>"]
    if entry.get("description"):
        out.append(f"<p>{e(entry['description'])}</p>")
    out.append(f'<p class="legend">{e(_cells_legend(metric, "bold"))}</p>')
    out += [f'<p class="legend">{e(note)}</p>' for note in _legend_notes(entry)]
    if "tied_with_best" in table:
        stats = e(f"{experiment}.stats.html")  # beside this page in tables/
        out.append(f'<p class="legend">{e(TIED_NOTE)} The tests: <a href="{stats}">{stats}</a> '
                   f'(in the report under Tables, statistics).</p>')
    tables = paper_tables(table, entry, metric)
    out += [f'<p class="legend">{e(note)}</p>' for note in _flag_notes(tables)]
    for t in tables:
        out += ["<section>",
                f"<h2>{e(t.dataset)} · prep <code>{e(t.prep)}</code> · graph "
                f"<code>{e(t.graph)}</code></h2>",
                "<table>", '<thead><tr><th scope="col" class="method">method</th>']
        for p in t.protocols:
            label = f'<span class="label">{e(labels[p])}</span>' if labels.get(p) else ""
            out.append(f'<th scope="col">{e(p)}{label}</th>')
        out += ["</tr></thead>", "<tbody>"]
        winners = {p: t.best(p) for p in t.protocols}
        for m in t.methods:
            row = [f'<tr><th scope="row">{e(t.label(m))}</th>']
            for p in t.protocols:
                parts = t.cell_parts(m, p)
                if parts is None:
                    row.append('<td class="missing">–</td>')
                else:
                    cls = ' class="best"' if m in winners[p] else ""
                    ref = f'<span class="ref">{e(parts[1])}</span>' if parts[1] else ""
                    row.append(f"<td{cls}>{e(parts[0])}{ref}</td>")
            out.append("".join(row) + "</tr>")
        out += ["</tbody>", "</table>", "</section>"]
    flagged = _flag_list(tables)
    if flagged:
        out += ["<section>", f"<h2>{FLAGGED_HEADING}</h2>", "<ul>"]
        out += [f"<li>{e(line)}</li>" for line in flagged] + ["</ul>", "</section>"]
    return _html_page(out)


def _html_head(title: str) -> list[str]:
    return ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
            f"<title>{_escape(title)}</title>", f"<style>{HTML_STYLE}</style>", "</head>", "<body>"]


def _html_page(lines: list[str]) -> str:
    # ASCII with character references (± -> &#177;): renders the same whatever encoding the file
    # is written or served with (the report embeds it as a data: URI)
    return "\n".join(lines + ["</body>", "</html>", ""]).encode("ascii", "xmlcharrefreplace").decode("ascii")


def confidence_band(mean, sem, n) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % Student-t band of a mean over n splits, clipped to [0, 100]: the metrics are
    percentages, and a symmetric interval around an error near 0 would otherwise reach below it."""
    from .stats import t_quantile

    mean = np.asarray(mean, float)
    half = t_quantile(0.95, np.asarray(n, float)) * np.asarray(sem, float)
    return np.clip(mean - half, 0, 100), np.clip(mean + half, 0, 100)


def plot(table: pd.DataFrame, out, experiment: str, protocol_labels: dict | None = None,
         metric: str | None = None, fmt: str = "png") -> None:
    """Error vs protocol (labels per class), one panel per dataset setting: the mean over the splits
    and its 95 % confidence band (Student t, from the standard error; none for a single split;
    clipped to [0, 100] %)."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = metric or headline_metric(table)
    groups = list(table.groupby(["dataset", "prep", "graph"], sort=False))
    methods = list(dict.fromkeys(table["method"]))
    ncol = min(len(methods), 6)
    width = 5.5 * len(groups)
    # constrained layout keeps the title and the one legend under the panels inside the figure
    fig, axes = plt.subplots(1, len(groups), figsize=(width, 4.5), squeeze=False, layout="constrained")
    colors = {m: f"C{i % 10}" for i, m in enumerate(methods)}  # a method's colour in every panel
    for ax, ((ds, prep, graph), sub) in zip(axes[0], groups):
        protocols = list(dict.fromkeys(sub["protocol"]))
        x = np.arange(len(protocols))
        for method, msub in sub.groupby("method", sort=False):
            msub = msub.set_index("protocol").reindex(protocols)
            mean = msub[f"{metric}_mean"].to_numpy(float)
            line, = ax.plot(x, mean, marker="o", label=method, color=colors[method],
                            linestyle="-" if methods.index(method) < 10 else "--")
            if f"{metric}_sem" in msub:
                low, high = confidence_band(mean, msub[f"{metric}_sem"], msub["n_splits"])
                ax.fill_between(x, low, high, color=line.get_color(), alpha=0.15, linewidth=0)
        ax.set_xticks(x, [(protocol_labels or {}).get(p, p) for p in protocols])
        ax.set_xlabel("protocol (labels per class)")
        ax.set_ylabel(f"{metric.replace('_', ' ')} (%)")
        ax.set_title(f"{ds} · {prep} · {graph}")
        ax.grid(alpha=0.3)
    handles = {h.get_label(): h for ax in axes[0] for h in ax.get_lines()}
    fig.legend([handles[m] for m in methods if m in handles], [m for m in methods if m in handles],
               loc="outside lower center", ncol=ncol, fontsize=9, frameon=False)
    # wrapped to the figure (about 11 characters per inch at the title's 12 pt; 10 leaves a
    # margin): constrained layout does not wrap a title wider than a one-panel figure, it crops it
    title = [f"Experiment {experiment}", "mean over the splits, shaded: 95 % confidence band"]
    fig.suptitle("\n".join(textwrap.fill(t, int(width * 10), break_long_words=False) for t in title))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, format=fmt)
    plt.close(fig)


def protocol_label(spec: dict) -> str:
    kind = spec.get("kind")
    if kind == "labels_per_class":
        return f"{spec['n']}/class"
    if kind == "label_fraction":
        return f"{spec['fraction']:.1%}" if "fraction" in spec else f"{spec['per_class']}/class"
    if kind == "per_class_counts":
        return f"{spec['labeled']}/class"
    return kind or "?"
