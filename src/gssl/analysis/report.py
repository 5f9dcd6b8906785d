"""The report's pages: an experiment's paper-style tables (:func:`markdown`, :func:`html`) and its
statistics page (:func:`statistics_markdown`, :func:`statistics_html`), rendered from
:mod:`gssl.analysis.tables`."""

from __future__ import annotations

from html import escape as _escape

import pandas as pd

from ..metrics import HIGHER_IS_BETTER
from .ranks import cd_sentence
from .tables import (BELOW_CHANCE, NOT_CONVERGED, headline_metric, paper_tables, reference_blocks,
                     tuned_on_scored_points)

# the names workflow/scripts/aggregate.py imports from here, until it imports them from their homes
from .plots import plot  # noqa: F401
from .tables import aggregate, load_runs, with_paired_tests, with_paper_statistic, with_reference  # noqa: F401


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
