"""The paper-style tables: html() (the Snakemake report's table entry) and markdown(), which share
paper_tables()."""
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from gssl.analysis.plots import plot
from gssl.analysis.report import html, markdown, statistics_html, statistics_markdown
from gssl.analysis.tables import paper_tables
from gssl.metrics import HIGHER_IS_BETTER

REPO = Path(__file__).resolve().parents[1]


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
    from gssl.analysis.tables import aggregate, with_paper_statistic, with_reference

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
    from gssl.analysis.report import markdown
    from gssl.analysis.tables import aggregate, with_paired_tests

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


def test_the_legend_states_the_bold_rule_once_and_names_the_experiments_statistics(table):
    table = table.assign(tied_with_best=False)
    for text in (html(table, "demo_digits", ENTRY), markdown(table, "demo_digits", ENTRY)):
        assert len(re.findall(r"\bbold\b", text, re.I)) == 1, text
        assert "<experiment>" not in text and "&lt;experiment&gt;" not in text
    assert "tables/demo_digits.stats.md" in markdown(table, "demo_digits", ENTRY)
    # the HTML page links the statistics page beside it in tables/
    assert '<a href="demo_digits.stats.html">demo_digits.stats.html</a>' in html(table, "demo_digits", ENTRY)


# -- the statistics page ------------------------------------------------------------------------
def _stats_cells():
    base = {"dataset": "d", "prep": "p", "graph": "g<1>", "protocol": "lpc1", "n": 3, "n_paired": 3}
    return pd.DataFrame([
        {**base, "method": "a&b", "mean": 10.0, "sem": 1.0, "ci_low": 5.7, "ci_high": 14.3, "best": True,
         "p_value": np.nan, "p_holm": np.nan, "tied_with_best": True},
        {**base, "method": "c", "mean": 20.0, "sem": 2.0, "ci_low": 11.4, "ci_high": 28.6, "best": False,
         "p_value": 0.25, "p_holm": 0.25, "tied_with_best": True},
    ])


ACROSS = {"metric": "error_unlabeled", "settings": 2, "methods": 2, "settings_dropped": 0,
          "average_ranks": {"a&b": 1.0, "c": 2.0}, "critical_difference": 1.39}


def test_statistics_html_shows_the_markdowns_tables_escaped():
    page = statistics_html(_stats_cells(), ACROSS, "exp<1>")
    md = statistics_markdown(_stats_cells(), ACROSS, "exp<1>")
    assert page.isascii() and "<title>Statistics of experiment exp&lt;1&gt;</title>" in page
    assert "<h2>d &#183; p &#183; g&lt;1&gt; &#183; lpc1</h2>" in page and "## d · p · g<1> · lpc1" in md
    rows = re.findall(r"<tr( class=\"best\")?><th scope=\"row\">(.*?)</th>(.*?)</tr>", page)
    assert [(bool(best), name) for best, name, _ in rows] == [  # the setting, then the ranks
        (True, "a&amp;b"), (False, "c"), (False, "a&amp;b"), (False, "c")]
    assert re.findall(r"<td[^>]*>(.*?)</td>", rows[1][2]) == ["3", "20.00", "2.00", "[11.40, 28.60]", "0.25",
                                                               "0.25", "&#8776;"]
    assert "| **a&b** | 3 | 10.00 | 1.00 | [5.70, 14.30] | – | – | best |" in md
    # a CD wider than the rank range, said plainly on both pages
    plain = "critical difference 1.39: larger than the rank range of 1, so no pair differs"
    assert plain in md and plain in page
    narrow = statistics_markdown(_stats_cells(), {**ACROSS, "critical_difference": 0.5}, "e")
    assert "critical difference 0.50: pairs whose average ranks differ by at least this differ" in narrow


def test_statistics_pages_without_a_ranking_say_why():
    across = {"metric": "error_unlabeled", "not_ranked": "only one method"}
    assert "No ranking: only one method." in statistics_markdown(_stats_cells(), across, "e")
    assert "No ranking: only one method." in statistics_html(_stats_cells(), across, "e")


# -- the error plot -----------------------------------------------------------------------------
def test_error_plot_keeps_its_title_in_the_figure_and_its_bands_in_0_100(tmp_path, monkeypatch):
    import matplotlib.figure

    drawn, savefig = [], matplotlib.figure.Figure.savefig

    def keep(fig, *args, **kwargs):  # the figure as saved (laid out) and its title's extent
        savefig(fig, *args, **kwargs)
        drawn.append((fig, fig._suptitle.get_window_extent(fig.canvas.get_renderer())))

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", keep)
    rows = [_row(m, p, mean, 1.0, 3) for m, p, mean in [("rls", "lpc1", 2.0), ("rls", "lpc5", 1.0),
                                                          ("laprls", "lpc1", 97.0), ("laprls", "lpc5", 99.0)]]
    t = pd.DataFrame(rows).assign(error_unlabeled_sem=5.0)  # t(0.975, 2) * 5 > 14: bands cross 0 and 100
    plot(t, tmp_path / "error.png", "an_experiment_with_a_long_name", LABELS)  # one panel: narrow
    assert (tmp_path / "error.png").read_bytes()[:4] == b"\x89PNG"
    (fig, title), = drawn
    assert 0 <= title.x0 and title.x1 <= fig.bbox.width and title.y1 <= fig.bbox.height
    ys = np.concatenate([p.vertices[:, 1] for c in fig.axes[0].collections for p in c.get_paths()])
    assert ys.min() == 0 and ys.max() == 100


# -- the report's texts: rendered as snakemake --report does, without a docutils message --------
class _Files(list):
    """A job's input or output as a caption sees it: by position and by name."""

    def __init__(self, *paths, **named):
        super().__init__([*paths, *named.values()])
        self.__dict__.update(named)


def _job(config):
    """The aggregate job of the default experiment, as its captions see it."""
    from types import SimpleNamespace

    exp = "demo_digits"
    t, p = f"results/tables/{exp}", f"results/plots/{exp}"
    output = _Files(csv=f"{t}.csv", md=f"{t}.md", html=f"{t}.html", plot=f"{p}/error.png",
                    stats_csv=f"{t}.stats.csv", stats_md=f"{t}.stats.md", stats_html=f"{t}.stats.html",
                    ranks=f"{t}.ranks.json", boxes=f"{p}/boxes.png", cd=f"{p}/cd.png", heatmap=f"{p}/ranks.png")
    params = SimpleNamespace(experiment=config["experiments"][exp], labels=LABELS, code="0")
    return SimpleNamespace(wildcards=SimpleNamespace(experiment=exp), input=_Files("results/runs/x.json"),
                           output=output, params=params, config=config, rule="aggregate")


# the captions of the aggregate rule's outputs
CAPTIONS = ("table.rst", "plot.rst", "stats.rst", "boxes.rst", "cd.rst", "ranks.rst")
LOSS_CAPTION = "loss.rst"  # the loss_curve job's (a chain that trains a network)
CONFUSION_CAPTION = "confusion.rst"  # the predictions job's
ACTIVE_CAPTION = "active.rst"  # the active_curves job's (an active-learning protocol)


def _render(name, snakemake):
    from docutils.core import publish_parts
    from jinja2 import Environment, StrictUndefined

    env = Environment(trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined)  # Snakemake's, strict
    text = env.from_string((REPO / "workflow" / "report" / name).read_text()).render(snakemake=snakemake)
    body = publish_parts(text, writer="html",
                         settings_overrides={"report_level": 1, "warning_stream": False})["html_body"]
    assert "system-message" not in body, (name, text)
    return text


def _configs():
    from gssl.pipeline.config_files import deep_update as _deep_update

    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    yield "config.yaml", {**default, "results": "results"}
    for path in sorted((REPO / "config" / "experiments").glob("*.yaml")):
        config = {**yaml.safe_load((REPO / "config" / "config.yaml").read_text()), "results": "results"}
        _deep_update(config, yaml.safe_load(path.read_text()))
        yield path.name, config


def test_every_report_text_renders_without_a_docutils_message():
    from gssl.pipeline.plan import experiments_to_run

    assert {p.name for p in (REPO / "workflow" / "report").glob("*.rst")} == {*CAPTIONS, LOSS_CAPTION,
                                                                               CONFUSION_CAPTION, ACTIVE_CAPTION,
                                                                               "workflow.rst"}
    for name, config in _configs():
        text = _render("workflow.rst", type("Snakemake", (), {"config": config}))
        items = re.findall(r"^- ``(\w+)``: (.*)\n  \((.*)\)$", text, re.M)
        assert [i[0] for i in items] == [e for e in config["experiments"]  # one list item each run
                                         if e in experiments_to_run(config)], name
        assert all(" × " in i[2] for i in items)
    config = dict(_configs())["config.yaml"]
    for caption in CAPTIONS:
        text = _render(caption, _job(config))
        assert "demo_digits" in text and "{{" not in text
    assert len(re.findall(r"\bbold\b", _render("table.rst", _job(config)), re.I)) == 1
    from types import SimpleNamespace

    loss = _render(LOSS_CAPTION, SimpleNamespace(wildcards=SimpleNamespace(dataset="fashion_mnist", prep="vae30")))
    assert "fashion_mnist" in loss and "``vae30``" in loss and "{{" not in loss
    confusion = _render(CONFUSION_CAPTION, SimpleNamespace(
        wildcards=SimpleNamespace(experiment="demo_digits"),
        output=_Files(folder="results/predictions/demo_digits", csv="results/tables/demo_digits.confusion.csv",
                      html="results/tables/demo_digits.confusion.html")))
    assert "``demo_digits``" in confusion and "results/predictions/demo_digits" in confusion and "{{" not in confusion
    active = _render(ACTIVE_CAPTION, SimpleNamespace(wildcards=SimpleNamespace(experiment="active_digits")))
    assert "tables/active_digits.active_budgets.md" in active and "{{" not in active



def test_a_truncated_job_output_is_named_with_the_fix(tmp_path):
    """Issue 33: `truncate -s 100` of a solve job's JSON made the statistics job (now aggregate) fail with
    "Unterminated string ..." and no path."""
    from gssl.analysis.tables import load_runs
    from gssl.errors import CacheError

    path = tmp_path / "splits0-2.json"
    path.write_text(json.dumps({"dataset": "d", "splits": [{"split": 0, "metrics": {}}]})[:30])
    with pytest.raises(CacheError, match=f"{path} is not a complete solve-job output.*delete it and rerun"):
        load_runs([path])


def test_a_cell_no_better_than_chance_is_marked_listed_and_explained_once():
    """Issue 32: a mean error at or above the error at chance of the scored points (always the
    largest class: chance_error_<set>_mean, fit_split's per-split metric averaged) is marked ▽
    in markdown and HTML, listed under "Flagged cells", and the legend explains the mark once;
    other cells, and tables without the column, are left as they were."""
    rows = [dict(_row("mbo", "lpc1", 93.9, 1.0, 3), chance_error_unlabeled_mean=90.0),
            dict(_row("mbo", "lpc5", 60.0, 1.0, 3), chance_error_unlabeled_mean=60.0),   # exactly
            dict(_row("laplace", "lpc1", 89.9, 1.0, 3), chance_error_unlabeled_mean=90.0),
            dict(_row("laplace", "lpc5", 20.0, 1.0, 3), chance_error_unlabeled_mean=60.0),
            # an unbalanced two-class cell: 1/C would say 50 %, the largest class says 30 %
            dict(_row("svm", "lpc1", 35.0, 1.0, 3, graph="two"), chance_error_unlabeled_mean=30.0)]
    table = pd.DataFrame(rows)
    entry = {"methods": ["mbo", "laplace", "svm"], "protocols": ["lpc1", "lpc5"]}
    md = markdown(table, "demo", entry)
    marked = [line for line in md.splitlines() if line.startswith("| ")]
    assert "93.90 ± 1.00 (n=3) ▽ below chance" in md and "60.00 ± 1.00 (n=3) ▽ below chance" in md
    assert "35.00 ± 1.00 (n=3) ▽ below chance" in md
    assert sum(line.count("▽") for line in marked) == 3              # 89.9 and 20.0 are not marked
    legend = [line for line in md.splitlines() if line.startswith("▽ below chance:")]
    assert len(legend) == 1 and "largest class among the scored points" in legend[0]
    listed = md.split("## Flagged cells")[1]
    assert "digits · l2 · knn10 · mbo · lpc1: below chance (mean 93.90 %, chance 90.00 %)" in listed
    assert listed.count("below chance") == 3
    page = html(table, "demo", entry)
    assert page.count("&#9661; below chance") == 4                   # three cells, one legend
    assert "<h2>Flagged cells</h2>" in page and page.count("<li>") == 3
    assert "▽" not in markdown(table.drop(columns="chance_error_unlabeled_mean"), "demo", entry)
    ok = table[table["error_unlabeled_mean"] < 30]
    assert "▽" not in markdown(ok, "demo", entry) and "Flagged" not in markdown(ok, "demo", entry)


def test_a_purity_at_the_largest_class_share_is_below_chance():
    rows = [{"dataset": "d", "prep": "p", "graph": "g", "method": m, "protocol": "all",
             "purity_mean": v, "purity_std": 0.0, "n_splits": 2, "chance_error_unlabeled_mean": 70.0}
            for m, v in (("one_cluster", 30.0), ("mtv", 80.0))]
    md = markdown(pd.DataFrame(rows), "demo", {"methods": ["one_cluster", "mtv"]})
    assert "30.00 ± 0.00 (n=2) ▽" in md and "80.00 ± 0.00 (n=2)** |" in md
    assert "one_cluster · all: below chance (mean 30.00 %, chance 30.00 %)" in md


def test_cells_with_splits_that_did_not_converge_are_marked_and_listed():
    """converged_mean (the share of converged splits) -> "⚠ k/n not converged" in the cell, one
    legend line, the list at the end; all converged (or no column): nothing."""
    rows = [dict(_row("tv", "lpc1", 5.0, 1.0, 20), converged_mean=0.85),       # 3 of 20
            dict(_row("tv", "lpc5", 4.0, 1.0, 10), converged_mean=1.0),
            dict(_row("rls", "lpc1", 9.0, 1.0, 20), converged_mean=1.0)]
    table = pd.DataFrame(rows)
    entry = {"methods": ["tv", "rls"], "protocols": ["lpc1", "lpc5"]}
    md = markdown(table, "demo", entry)
    assert "5.00 ± 1.00 (n=20) ⚠ 3/20 not converged" in md
    assert sum(line.count("⚠") for line in md.splitlines() if line.startswith("| ")) == 1
    assert len([line for line in md.splitlines() if line.startswith("⚠ k/n not converged:")]) == 1
    assert "- digits · l2 · knn10 · tv · lpc1: 3 of 20 splits not converged" in md
    page = html(table, "demo", entry)
    assert "&#9888; 3/20 not converged" in page and "gssl.converged = false" in page
    assert "<li>digits &#183; l2 &#183; knn10 &#183; tv &#183; lpc1: 3 of 20 splits not converged</li>" in page
    assert "⚠" not in markdown(table.assign(converged_mean=1.0), "demo", entry)
    assert "⚠" not in markdown(table.drop(columns="converged_mean"), "demo", entry)


def test_fit_split_records_chance_error_and_converged(tmp_path):
    """The solve job's metrics carry chance_error_<set> (the error of always answering the
    largest class of the scored points: the tables' below-chance mark) and converged (0 where
    the solver stopped on its iteration limit and warned)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from gssl.graphs import build_graph
    from gssl.metrics import split_statistics
    from gssl.pipeline import stages
    from gssl.splits import LABELED, UNLABELED

    X, y = np.random.default_rng(0).normal(size=(40, 2)), np.repeat([0, 1, 2], [20, 10, 10])
    X[y == 1] += 6
    X[y == 2] -= 6

    class FakeCell:
        pass

    cell = FakeCell()
    cell.protocol = None
    cell.y, cell.n_classes, cell.graph = y, 3, build_graph(X, k=5)
    cell.roles = np.full((1, 40), UNLABELED)
    cell.roles[0, [0, 20, 30]] = LABELED
    cell.splits_path = tmp_path / "splits"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)          # a converged fit: no warning
        done = stages.fit_split(cell, 0, {"solver": "laplace", "params": {}})
    # scored: 19 of class 0, 9 and 9 of the others -> 100 (1 - 19/37) %
    assert done["metrics"]["chance_error_unlabeled"] == pytest.approx(100 * 18 / 37)
    assert done["metrics"]["converged"] == 1.0 and "n_classes" not in done["metrics"]
    with pytest.warns(ConvergenceWarning, match="LabelSpreadingBaseline did not converge"):
        short = stages.fit_split(cell, 0, {"solver": "label_spreading",
                                           "params": {"n_neighbors": 5, "max_iter": 1}})
    assert short["metrics"]["converged"] == 0.0 and short["converged"] is False
    stats = split_statistics([done["metrics"], short["metrics"]])
    assert stats["n_not_converged"] == 1 and stats["not_converged_share"] == 0.5
    assert stats["chance_error_unlabeled_mean"] == pytest.approx(100 * 18 / 37)
