"""The reproduction pages (gssl.analysis.reproduction, issue 32) on constructed runs: the verdict's
criterion, the numbers against the aggregate rule's, the † and paper-statistic cells, the index counts.
The page generated from a real workflow run: test_workflow_e2e.py (it reuses that module's run)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from gssl.analysis.reproduction import (
    CHANCE_OUTSIDE,
    NO_SE,
    NOISE_SHARE,
    OUTSIDE,
    TOO_NOISY,
    WITHIN,
    build_page,
    criterion_text,
    expected_by_chance,
    paper_and_table,
    table_counts,
    tolerance,
    verdict,
    write_index,
    write_page,
)
from gssl.analysis.tables import aggregate, with_paper_statistic, with_reference
from gssl.cli import main

ERRORS = {"a": [10.0, 12.0, 11.0, 13.0], "b": [5.0, 6.0, 7.0, 6.0], "c": [20.0, 20.0, 22.0, 18.0]}
ENERGY = [3.0, 1.0, 2.0, 4.0]  # split 1 has the lowest: the paper's statistic is its value


def _config() -> dict:
    methods = {m: {"solver": "rls", "params": {"kernel": {"kind": "rbf", "sigma": 1.0}}} for m in ERRORS}
    exp = {"datasets": ["moons"], "preprocessing": ["std"], "graphs": ["knn"], "protocols": ["p4"]}
    return {
        "datasets": {"moons": {"source": "two_moons"}}, "preprocessing": {"std": ["standardize"]},
        "graphs": {"knn": {"kind": "knn", "k": 5}}, "methods": methods,
        "protocols": {"p4": {"kind": "labels_per_class", "n": 1, "repeats": 4}},
        "run": ["honest"],
        "experiments": {
            # a: paper's std and draws given; b: no spread (rounding + 2 SE); c: marked †
            "honest": {**exp, "methods": ["a", "b"],
                       "reference": {"citation": "Some et al. (2020), Table 2, error", "draws": 10,
                                     "values": {"a": {"p4": 12.0}, "b": {"p4": 9.05}},
                                     "std": {"a": {"p4": 1.5}}}},
            "tuned": {**exp, "methods": ["c"], "tuned_on_scored_points": ["c"],
                      "paper_statistic": {"lowest": "solver_discrete_energy", "label": "lowest-energy draw"},
                      "reference": {"citation": "Some et al. (2020), Table 2, error",
                                    "values": {"c": {"p4": 20.0}}}},
            "other": {**exp, "methods": ["a"],
                      "reference": {"citation": "Some et al. (2020), Table 3 (never run)",
                                    "values": {"a": {"p4": 1.0}}}},
        }}


def _table(config: dict, experiment: str) -> pd.DataFrame:
    """What the aggregate rule writes for the constructed runs (report.py's functions, its CSV format)."""
    rows = [{"dataset": "moons", "prep": "std", "graph": "knn", "method": m, "protocol": "p4", "split": s,
             "error_unlabeled": e, "solver_discrete_energy": ENERGY[s]}
            for m in config["experiments"][experiment]["methods"] for s, e in enumerate(ERRORS[m])]
    runs = pd.DataFrame(rows)
    entry = config["experiments"][experiment]
    return with_reference(with_paper_statistic(aggregate(runs), runs, entry), entry)


@pytest.fixture()
def run(tmp_path):
    """A paper config and a results folder holding the tables of two of its three experiments."""
    config = _config()
    cfg = tmp_path / "config" / "experiments" / "some.yaml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(yaml.safe_dump(config, sort_keys=False))
    (tmp_path / "config" / "experiments" / "later.yaml").write_text(cfg.read_text())  # no page yet
    tables = tmp_path / "results" / "tables"
    tables.mkdir(parents=True)
    for exp in ("honest", "tuned"):
        _table(config, exp).to_csv(tables / f"{exp}.csv", index=False, float_format="%.6g")
    bench = tmp_path / "results" / "benchmarks" / "solve" / "honest" / "x.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\n12.5\t0:00:12\n")
    return tmp_path, cfg


def test_tolerance_is_the_stated_criterion():
    se, s, n = 0.3, 2.0, 12
    tol = tolerance(se, s, n)
    assert tol == pytest.approx(2 * math.sqrt(se ** 2 + s ** 2 / n))
    assert verdict(tol - 1e-6, tol) == WITHIN and verdict(-(tol + 1e-3), tol) == OUTSIDE
    # no spread from the paper: ours stands in for it, 2·√(SE² + SE²), plus half its last digit
    assert tolerance(0.3, decimals=2) == pytest.approx(0.005 + 2 * math.sqrt(2) * 0.3)
    assert tolerance(0.3, decimals=1) == pytest.approx(0.05 + 2 * math.sqrt(0.18))
    assert tolerance(0.3, ref_std=1.0, ref_draws=None, decimals=1) == pytest.approx(0.05 + 0.6 * math.sqrt(2))
    assert math.isnan(tolerance(math.nan, 1.0, 5)) and verdict(0.0, math.nan) == NO_SE


def test_a_cell_whose_se_is_a_large_share_of_its_value_gets_no_verdict():
    """TV Table 1's TV-RLS at 1 label: 9.35 ± 3.15 % against 3.18 % passed the old criterion
    (r + 2 SE = 6.31 ≥ 6.17); its SE is 34 % of the larger value: too noisy to judge."""
    assert NOISE_SHARE == 0.25
    tol = tolerance(3.15, decimals=2)
    assert verdict(9.35 - 3.18, tol) == WITHIN                    # without the two values: a verdict
    assert verdict(9.35 - 3.18, tol, 3.15, 9.35, 3.18) == TOO_NOISY
    # the scale is the larger value: 0.5 ± 0.2 against 3.0 is judged (0.2 ≤ 0.75), and outside
    assert verdict(0.5 - 3.0, tolerance(0.2), 0.2, 0.5, 3.0) == OUTSIDE
    # at the share exactly: judged
    assert verdict(0.0, tolerance(1.0), 1.0, 4.0, 4.0) == WITHIN
    assert verdict(0.0, tolerance(1.0001), 1.0001, 4.0, 4.0) == TOO_NOISY
    # chance: P(|Z| > 2) of the judged cells
    assert CHANCE_OUTSIDE == pytest.approx(0.0455, abs=1e-4)
    assert expected_by_chance(176) == pytest.approx(8.0, abs=0.01)
    text = criterion_text()
    assert "√2·SE" in text and "25 %" in text and "4.6 %" in text and "too noisy to judge" in text


def test_paper_and_table_from_the_citation():
    assert paper_and_table("Melacci & Belkin (2011), Table 4, T error", "x") == (
        "Melacci & Belkin (2011)", "Table 4")
    assert paper_and_table("Tran et al., Table 4 (best beta, chosen on the test error)", "x") == (
        "Tran et al.", "Table 4")
    assert paper_and_table("A paper", "exp") == ("A paper", "exp")


def test_cells_carry_the_tables_numbers_and_verdicts_follow_the_criterion(run):
    root, cfg = run
    page = build_page(cfg, [root / "results"], default_config=None)
    cells = page.cells
    assert page.paper == "Some et al. (2020)" and page.missing == ["other"]
    by = {c.method: c for c in cells}
    a, b, c = by["a"], by["b"], by["c"]
    for cell, errors in ((a, ERRORS["a"]), (b, ERRORS["b"]), (c, ERRORS["c"])):
        assert cell.mean == pytest.approx(np.mean(errors), abs=1e-4)
        assert cell.draws == 4
    assert a.se == pytest.approx(np.std(ERRORS["a"], ddof=1) / 2, abs=1e-4)
    # a: the paper's spread, 2 sqrt(SE^2 + s^2/n); Δ = 11.5 - 12 within it
    assert a.tol == pytest.approx(2 * math.sqrt(a.se ** 2 + 1.5 ** 2 / 10), abs=1e-6) and a.verdict == WITHIN
    # b: no spread: r (2 decimals in this table: 9.05) + 2·√2·SE; Δ = 6 - 9.05 beyond it
    assert b.tol == pytest.approx(0.005 + 2 * math.sqrt(2) * b.se, abs=1e-6) and b.verdict == OUTSIDE
    # c: compared through the paper's statistic (split 1's 20.0), its SE the std over the draws
    assert c.statistic == 20.0 and c.delta == 0.0 and c.tuned
    assert c.tol == pytest.approx(0.005 + 2 * math.sqrt(2) * np.std(ERRORS["c"], ddof=1), abs=1e-4)
    assert c.verdict == WITHIN
    table2, table3 = page.summaries
    # honest and † apart: a within, b outside (no reason: unexplained); c (†) within
    assert (table2.table, table2.cells, table2.tuned, table2.within, table2.within_tuned) == ("Table 2", 3, 1, 1, 1)
    assert (table2.outside, table2.unexplained, table2.too_noisy, table2.judged) == (1, 1, 0, 2)
    assert (table3.table, table3.cells, table3.not_run) == ("Table 3", 0, ["other"])
    assert table2.wall_s == pytest.approx(12.5, abs=1e-6) and table2.job_s == 12.5
    assert "--config 'run=[honest, tuned]'" in table2.command


def test_page_and_index_say_what_the_sidecar_counts(run, monkeypatch):
    root, cfg = run
    monkeypatch.chdir(root)
    assert main(["reproduction", "config/experiments/some.yaml", "--results", "results",
                 "--out", "pages", "--default-config", "none.yaml"]) == 0
    page = (root / "pages" / "some.md").read_text()
    assert "| moons | a | 1/class | 11.50 ± 0.65 | 4 | – | 12.00 ± 1.50 | -0.50 |" in page
    assert "| moons | c † | 1/class | 20.00 ± 0.82 | 4 | 20.00 | 20.00 | +0.00 | 4.62 |" in page  # 2·√2 std
    assert "lowest-energy draw" in page and "## Table 3" in page and "`other`" in page
    side = json.loads((root / "pages" / "some.json").read_text())
    index = (root / "pages" / "index.md").read_text()
    table2, table3 = side["tables"]
    assert f"| {table2['table']} | 3 | 1 | 1 of 2 | 1 of 1 | 0 | 0 | 1 | 1 |" in index
    assert "| Table 3 (not run: other) | – | – | – |" in index
    assert "| later | not yet regenerated | – | – | – |" in index
    # a sidecar from before the honest / † counts: its row says "?" rather than a wrong number
    old = json.loads((root / "pages" / "some.json").read_text())
    for t in old["tables"]:
        del t["within_tuned"]
    (root / "pages" / "old.json").write_text(json.dumps({**old, "page": "old.md"}))
    write_index(root / "pages", root / "config" / "experiments")
    assert "| [Some et al. (2020)](old.md) | Table 2 | ? | ? | ? |" in (root / "pages" / "index.md").read_text()
    (root / "pages" / "old.json").unlink()
    # the config edited after the page: the index says so when rebuilt
    cfg.write_text(cfg.read_text() + "\n# edited\n")
    write_index(root / "pages", root / "config" / "experiments")
    assert "Table 2 (config edited since)" in (root / "pages" / "index.md").read_text()


def test_a_page_of_a_config_without_any_run_lists_its_experiments(run):
    root, cfg = run
    page = write_page(cfg, [root / "nothing"], root / "pages", default_config=None,
                      configs_dir=root / "config" / "experiments")
    text = page.read_text()
    assert "Not in the runs (`honest`, `tuned`)" in text and "`honest`, `tuned`, `other`" in text


def test_a_table_run_over_two_sessions_keeps_the_earlier_cells_while_their_config_holds(run):
    """A page regenerated from a folder that holds one experiment of a table keeps the other's
    cells from its sidecar while the config's entries for it are unchanged, says so and adds
    the two sessions' wall times; once those entries are edited, the cells are dropped."""
    root, cfg = run
    pages, configs = root / "pages", root / "config" / "experiments"
    first = root / "first"
    (first / "tables").mkdir(parents=True)
    (first / "tables" / "honest.csv").write_text((root / "results/tables/honest.csv").read_text())
    (first / "benchmarks").symlink_to(root / "results" / "benchmarks")   # honest: 12.5 s
    write_page(cfg, [first], pages, default_config=None, configs_dir=configs)
    side = json.loads((pages / "some.json").read_text())
    earlier = side["cells"]
    assert {c["experiment"] for c in earlier} == {"honest"}
    del side["experiment_digests"], side["digest_version"]   # as older pages: the file's digest vouches
    (pages / "some.json").write_text(json.dumps(side))
    later = root / "later"
    (later / "tables").mkdir(parents=True)
    (later / "tables" / "tuned.csv").write_text((root / "results/tables/tuned.csv").read_text())
    bench = later / "benchmarks" / "solve" / "tuned" / "x.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\n7.5\t0:00:07\n")
    page = write_page(cfg, [later], pages, default_config=None, configs_dir=configs)
    side = json.loads((pages / "some.json").read_text())
    assert [c for c in side["cells"] if c["experiment"] == "honest"] == earlier
    table2 = side["tables"][0]
    assert table2["kept"] == ["honest"] and (table2["cells"], table2["tuned"]) == (3, 1)
    assert table2["wall_s"] == pytest.approx(12.5 + 7.5, abs=1e-6) and table2["not_run"] == []
    assert "Cells of `honest` are kept from this page's previous generation" in page.read_text()
    earlier_digest = side["experiment_digests"]["honest"]
    original = yaml.safe_load(cfg.read_text())
    config = yaml.safe_load(cfg.read_text())
    config["methods"]["a"]["params"]["kernel"]["sigma"] = 2.0     # honest's method edited
    cfg.write_text(yaml.safe_dump(config, sort_keys=False))
    write_page(cfg, [later], pages, default_config=None, configs_dir=configs)
    side = json.loads((pages / "some.json").read_text())
    assert {c["experiment"] for c in side["cells"]} == {"tuned"}
    assert side["tables"][0]["not_run"] == ["honest"] and side["tables"][0]["kept"] == []
    # a sidecar whose cells lack a field of today's Cell: not kept, no crash
    side["cells"] = [{k: v for k, v in c.items() if k != "key"} for c in earlier]
    side["experiment_digests"]["honest"] = earlier_digest
    (pages / "some.json").write_text(json.dumps(side))
    cfg.write_text(yaml.safe_dump(original, sort_keys=False))
    write_page(cfg, [later], pages, default_config=None, configs_dir=configs)
    assert json.loads((pages / "some.json").read_text())["tables"][0]["not_run"] == ["honest"]


def test_wall_time_counts_only_while_a_job_ran(tmp_path):
    """Jobs of one results folder run across two sessions (a cached graph, then the solves hours
    later): the wall is the union of the jobs' intervals, not first start to last end."""
    import os

    from gssl.analysis.reproduction import wall_seconds

    def job(rel, seconds, end):
        path = tmp_path / "benchmarks" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\n{seconds}\t0:00:00\n")
        os.utime(path, (end, end))

    t0 = 1_700_000_000
    job("graphs/d/p/g.tsv", 100, t0 + 100)                  # session 1: [0, 100]
    job("solve/exp/d/p/g/m/lpc1/splits0-4.tsv", 60, t0 + 8 * 3600 + 60)   # session 2: [8 h, 8 h + 60]
    job("solve/exp/d/p/g/m/lpc5/splits0-4.tsv", 50, t0 + 8 * 3600 + 90)   # overlaps it: [8 h + 40, 8 h + 90]
    job("solve/other/d/p/g/m/lpc1/splits0-4.tsv", 999, t0 + 9 * 3600)     # another experiment: left out
    wall, jobs = wall_seconds(tmp_path, ["exp"], ["d"])
    assert wall == pytest.approx(100 + 90) and jobs == pytest.approx(210)


def _with_names_and_reasons(cfg, reasons: dict) -> None:
    config = yaml.safe_load(cfg.read_text())
    config["methods"]["a"]["label"] = "Method A"
    config["experiments"]["honest"]["reference"]["reasons"] = reasons
    cfg.write_text(yaml.safe_dump(config, sort_keys=False))


def test_outside_cells_give_their_reason_from_the_notes_and_the_rest_count_as_unexplained(run):
    """A reference's reasons: (wildcards) give outside-noise cells a key the notes explain; the
    page prints it with the notes' text, the paper's names of the methods, and counts the cells
    without one; a key the notes lack stops the page with the fix."""
    from gssl.errors import ConfigError

    root, cfg = run
    pages, configs = root / "pages", root / "config" / "experiments"
    write_page(cfg, [root / "results"], pages, default_config=None, configs_dir=configs)
    before = json.loads((pages / "some.json").read_text())["experiment_digests"]
    _with_names_and_reasons(cfg, {"b/p*": "coarse-grid"})
    with pytest.raises(ConfigError, match=r"'coarse-grid'.*some.notes.md.*- \*\*coarse-grid\*\*: .*## Reasons"):
        write_page(cfg, [root / "results"], pages, default_config=None, configs_dir=configs)
    (pages / "some.notes.md").write_text("# Notes\n\n## Reasons\n\n- **coarse-grid**: the paper's grid\n"
                                         "  was finer.\n- **unused**: not on this page.\n\n## Other\n")
    text = write_page(cfg, [root / "results"], pages, default_config=None, configs_dir=configs).read_text()
    assert "| moons | Method A (`a`) | 1/class |" in text          # the paper's name, the id beside it
    assert "| moons | b | 1/class |" in text and "| moons | c † | 1/class |" in text
    assert "outside noise | [coarse-grid](some.notes.md#reasons) |" in text
    assert "- **coarse-grid** (1): the paper's grid was finer." in text and "unused" not in text
    side = json.loads((pages / "some.json").read_text())
    assert side["experiment_digests"] == before     # names and reasons rerun nothing
    assert side["tables"][0]["unexplained"] == 0 and "0 of them unexplained" in text
    # a pattern no cell of its reference matches is a config problem
    _with_names_and_reasons(cfg, {"z/*": "coarse-grid"})
    with pytest.raises(ConfigError, match="reasons pattern 'z/\\*' matches none of its cells"):
        build_page(cfg, [root / "results"], default_config=None)


def test_table_counts_are_the_cells_counted(run):
    """Each count of a table against a hand count of constructed cells, honest and † apart."""
    from gssl.analysis.reproduction import Cell

    def cell(verdict, tuned=False, reason="", flags=""):
        return Cell("T", "e", "d", "m", "1/class", 1.0, 0.1, 10, math.nan, 1.0, math.nan, None, 0.0,
                    0.3, verdict, tuned, flags, "c", "k", reason=reason)

    cells = ([cell(WITHIN)] * 3 + [cell(OUTSIDE, reason="r")] * 2 + [cell(OUTSIDE)] * 4
             + [cell(TOO_NOISY, flags="⚠ 2/10 not converged")] + [cell(NO_SE)]
             + [cell(WITHIN, tuned=True)] * 5 + [cell(OUTSIDE, tuned=True)] * 2)
    counts = table_counts(cells)
    assert counts == {"cells": 18, "tuned": 7, "within": 3, "within_tuned": 5, "outside": 8,
                      "unexplained": 6, "too_noisy": 1, "warned": 1, "judged": 9,
                      "chance": round(9 * CHANCE_OUTSIDE, 2)}


def test_the_committed_pages_counts_are_their_cells_counted():
    """docs/reproductions: every sidecar's table counts are its cells counted, and the index
    prints them (docs in sync with the cells they summarize)."""
    from pathlib import Path

    from gssl.analysis.reproduction import Cell
    from gssl.analysis.reproduction.index import count_cells

    pages = Path(__file__).resolve().parents[1] / "docs" / "reproductions"
    index = (pages / "index.md").read_text()
    for side in sorted(pages.glob("*.json")):
        data = json.loads(side.read_text())
        cells = [Cell(**c) for c in data["cells"]]
        for t in data["tables"]:
            mine = [c for c in cells if c.table == t["table"]]
            assert {k: t[k] for k in table_counts(mine)} == table_counts(mine), (side.name, t["table"])
            if mine:
                assert " | ".join(count_cells(t)) in index, (side.name, t["table"])
                assert all(c.reason or c.verdict != OUTSIDE for c in mine) or t["unexplained"] > 0
