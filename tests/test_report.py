"""The paper-style tables: html() (the Snakemake report's table entry) and markdown(), which share
paper_tables()."""
import re

import numpy as np
import pandas as pd
import pytest

from gssl.analysis.report import HIGHER_IS_BETTER, html, markdown, paper_tables


def _row(method, protocol, mean, std, n, dataset="digits", prep="l2", graph="knn10"):
    return {"dataset": dataset, "prep": prep, "graph": graph, "method": method,
            "protocol": protocol, "error_unlabeled_mean": mean, "error_unlabeled_std": std,
            "n_splits": n}


@pytest.fixture
def table():
    # long format as aggregate() writes it; rows deliberately not in the experiment's order
    return pd.DataFrame([
        _row("svm", "lpc5", 10.494, 0.551, 3),
        _row("laprls", "lpc1", 13.5, 3.906, 3),
        _row("svm", "lpc1", 38.781, 3.393, 3),
        _row("laprls", "lpc5", 4.456, 0.871, 3),
        _row("rls", "lpc1", 39.19, 3.82, 2),          # rls has no lpc5 result
        _row("extra", "lpc1", 50.0, 1.0, 1),          # a method the entry does not list
        _row("<b>&x", "lpc1", 60.0, 0.0, 1, graph='g"1'),  # names to escape, second setting
    ])


ENTRY = {"description": "Error vs labels <per> class & more.", "methods": ["rls", "svm", "laprls"],
         "protocols": ["lpc1", "lpc5"]}
LABELS = {"lpc1": "1/class", "lpc5": "5/class"}


def _section(page, graph):
    """The <table> of one dataset setting, by its graph id (as escaped in the heading)."""
    m = re.search(rf"graph <code>{re.escape(graph)}</code></h2>\s*<table>(.*?)</table>", page, re.S)
    assert m, f"no table for graph {graph}"
    return m.group(1)


def _cells(section):
    """[[row header, cell, cell, ...], ...] of a table body, in order."""
    body = section.split("<tbody>")[1]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    return [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r) for r in rows]


def test_html_rows_are_methods_columns_protocols_in_the_entrys_order(table):
    page = html(table, "demo_digits", ENTRY, protocol_labels=LABELS)
    sec = _section(page, "knn10")
    head = re.findall(r'<th scope="col"[^>]*>(.*?)</th>', sec)
    assert head == ["method", 'lpc1<span class="label">1/class</span>',
                    'lpc5<span class="label">5/class</span>']
    rows = _cells(sec)
    assert [r[0] for r in rows] == ["rls", "svm", "laprls", "extra"]  # entry order, then others
    assert rows[0] == ["rls", "39.19 &#177; 3.82 (n=2)", "&#8211;"]      # missing cell: a dash
    assert rows[1] == ["svm", "38.78 &#177; 3.39 (n=3)", "10.49 &#177; 0.55 (n=3)"]
    assert rows[2] == ["laprls", "13.50 &#177; 3.91 (n=3)", "4.46 &#177; 0.87 (n=3)"]
    assert rows[3] == ["extra", "50.00 &#177; 1.00 (n=1)", "&#8211;"]


def test_html_marks_the_best_mean_of_each_column_and_missing_cells(table):
    sec = _section(html(table, "demo_digits", ENTRY), "knn10")
    assert re.findall(r'<td class="best">(.*?)</td>', sec) == [
        "13.50 &#177; 3.91 (n=3)", "4.46 &#177; 0.87 (n=3)"]  # laprls: lowest error in both columns
    assert sec.count('<td class="missing">') == 2
    # without labels the headers are the bare protocol ids
    assert re.findall(r'<th scope="col"[^>]*>(.*?)</th>', sec) == ["method", "lpc1", "lpc5"]


def test_html_best_is_the_highest_for_purity():
    t = pd.DataFrame([{"dataset": "d", "prep": "p", "graph": "g", "method": m, "protocol": "all",
                       "purity_mean": v, "purity_std": 0.0, "n_splits": 1}
                      for m, v in [("a", 80.0), ("b", 91.25), ("c", 91.254)]])
    page = html(t, "clu", {"methods": ["a", "b", "c"], "protocols": ["all"]})
    assert "Cells: purity (%)" in page and "the highest mean" in page
    # 91.25 and 91.254 are equal at the two decimals shown: both bold
    assert re.findall(r'<tr><th scope="row">(\w)</th><td class="best">', page) == ["b", "c"]


def test_html_escapes_every_name_and_is_self_contained_ascii(table):
    page = html(table, "exp<1>", ENTRY, protocol_labels={"lpc1": "<1>/class"})
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert page.isascii() and '<meta charset="utf-8">' in page and "<style>" in page
    assert "<title>Experiment exp&lt;1&gt;</title>" in page
    assert "<p>Error vs labels &lt;per&gt; class &amp; more.</p>" in page
    assert 'lpc1<span class="label">&lt;1&gt;/class</span>' in page
    sec = _section(page, "g&quot;1")
    assert _cells(sec) == [["&lt;b&gt;&amp;x", "60.00 &#177; 0.00 (n=1)"]]
    assert "<b>&x" not in page and 'g"1' not in page
    assert "http" not in page and "<script" not in page and "<link" not in page


def test_html_and_markdown_share_the_pivot(table):
    tables = paper_tables(table, ENTRY)
    assert [(t.dataset, t.prep, t.graph) for t in tables] == [("digits", "l2", "knn10"),
                                                               ("digits", "l2", 'g"1')]
    t = tables[0]
    assert t.metric == "error_unlabeled"
    assert t.methods == ["rls", "svm", "laprls", "extra"] and t.protocols == ["lpc1", "lpc5"]
    assert t.cell("rls", "lpc5") is None and t.best("lpc1") == {"laprls"}
    md = markdown(table, "demo_digits", ENTRY)
    page = html(table, "demo_digits", ENTRY)
    for m in t.methods:
        for p in t.protocols:
            text = t.cell(m, p)
            if text is not None:  # the best of a column in bold in markdown, class "best" in HTML
                assert (f" **{text}** |" if m in t.best(p) else f" {text} |") in md
                assert text.replace("±", "&#177;") in page
    assert "| rls | 39.19 ± 3.82 (n=2) | – |" in md
    assert "| laprls | **13.50 ± 3.91 (n=3)** |" in md


def test_the_papers_one_split_statistic_is_shown_and_compared_with_the_reference():
    from gssl.analysis.report import aggregate, with_paper_statistic, with_reference

    keys = {"dataset": "opt", "prep": "raw", "graph": "knn10", "method": "mtv_t"}
    runs = pd.DataFrame([  # purity of the draw of lowest energy: split 2 (80.0); ties -> first
        {**keys, "protocol": "lpc1", "split": 0, "purity": 90.0, "solver_discrete_energy": 0.5},
        {**keys, "protocol": "lpc1", "split": 1, "purity": 96.0, "solver_discrete_energy": 0.4},
        {**keys, "protocol": "lpc1", "split": 2, "purity": 80.0, "solver_discrete_energy": 0.3},
        {**keys, "protocol": "frac1", "split": 0, "purity": 97.0, "solver_discrete_energy": 0.2},
        {**keys, "protocol": "frac1", "split": 1, "purity": 99.0, "solver_discrete_energy": 0.2},
    ])
    entry = {"methods": ["mtv_t"], "protocols": ["lpc1", "frac1"],
             "paper_statistic": {"lowest": "solver_discrete_energy", "label": "lowest-energy draw"},
             "reference": {"citation": "Paper", "values": {"mtv_t": {"lpc1": 89.0}}}}
    table = with_reference(with_paper_statistic(aggregate(runs), runs, entry), entry)
    stat = table.set_index("protocol")["paper_statistic"]
    assert stat["lpc1"] == 80.0 and stat["frac1"] == 97.0
    assert table.set_index("protocol").at["lpc1", "reference_diff"] == pytest.approx(80.0 - 89.0)
    md = markdown(table, "e", entry)
    assert "lowest-energy draw 80.00; mean 88.67 ± " in md and "paper 89.00 (Δ -9.00)" in md
    assert "the split with the lowest solver discrete energy" in md
    with pytest.raises(ValueError, match="paper_statistic.lowest 'energy' is not a metric"):
        with_paper_statistic(aggregate(runs), runs, {"paper_statistic": {"lowest": "energy"}})
    plain = with_paper_statistic(aggregate(runs), runs, {})  # no statistic: the mean is compared
    assert plain["paper_statistic"].isna().all()
    other = runs.assign(method="spectral").drop(columns="solver_discrete_energy")  # no energy: NaN
    both = pd.concat([runs, other], ignore_index=True)
    mixed = with_paper_statistic(aggregate(both), both, entry).set_index(["method", "protocol"])
    assert mixed.at[("mtv_t", "lpc1"), "paper_statistic"] == 80.0
    assert mixed.loc["spectral", "paper_statistic"].isna().all()


def test_tables_mark_the_methods_not_significantly_worse_than_the_best():
    from gssl.analysis.report import aggregate, markdown, with_paired_tests

    rng = np.random.default_rng(0)
    base = 20 + rng.normal(0, 2, 12)
    keys = {"dataset": "d", "prep": "p", "graph": "g", "protocol": "lpc1"}
    runs = pd.DataFrame([{**keys, "method": m, "split": i, "error_unlabeled": v}
                         for m, values in (("best", base), ("close", base + 0.2 + np.tile([1.5, -1.5], 6)),
                                           ("worse", base + 5 + rng.normal(0, 0.5, 12)))
                         for i, v in enumerate(values)])
    table = with_paired_tests(aggregate(runs), runs)
    tied = dict(zip(table["method"], table["tied_with_best"]))
    assert tied == {"best": True, "close": True, "worse": False}
    md = markdown(table, "x", {"methods": ["best", "close", "worse"]})
    rows = {line.split("|")[1].strip(): line for line in md.splitlines() if line.startswith("| ")}
    assert "**" in rows["best"] and rows["close"].rstrip(" |").endswith("≈")
    assert "≈" not in rows["worse"] and "not significantly worse" in md
