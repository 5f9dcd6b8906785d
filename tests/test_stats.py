"""gssl.analysis.stats against closed forms, hand-computed values and Demšar (2006, JMLR 7:1-30)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from gssl.analysis import compare as C
from gssl.analysis import ranks as R
from gssl.analysis import stats as S
from gssl.analysis import plots as P

# Demšar (2006), Table 6: AUC of C4.5 variants on 14 UCI data sets (higher is better)
C45 = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
DEMSAR_AUC = pd.DataFrame(
    [[0.763, 0.768, 0.771, 0.798], [0.599, 0.591, 0.590, 0.569], [0.954, 0.971, 0.968, 0.967],
     [0.628, 0.661, 0.654, 0.657], [0.882, 0.888, 0.886, 0.898], [0.936, 0.931, 0.916, 0.931],
     [0.661, 0.668, 0.609, 0.685], [0.583, 0.583, 0.563, 0.625], [0.775, 0.838, 0.866, 0.875],
     [1.000, 1.000, 1.000, 1.000], [0.940, 0.962, 0.965, 0.962], [0.619, 0.666, 0.614, 0.669],
     [0.972, 0.981, 0.975, 0.975], [0.957, 0.978, 0.946, 0.970]], columns=C45)


def make_runs(values: dict, setting=("ds", "raw", "knn", "5/class"), metric="error_unlabeled",
              splits=None) -> pd.DataFrame:
    """A runs table of one setting from {method: per-split values}."""
    dataset, prep, graph, protocol = setting
    rows = []
    for method, vals in values.items():
        for s, v in zip(splits or range(len(vals)), vals):
            rows.append({"dataset": dataset, "prep": prep, "graph": graph, "method": method,
                         "protocol": protocol, "split": s, metric: v})
    return pd.DataFrame(rows)


def by_method(table: pd.DataFrame) -> pd.DataFrame:
    return table.set_index("method")


# ---------------------------------------------------------------------------------------------
# single cells, Wilcoxon, Holm


def test_higher_is_better_follows_the_metric_prefixes():
    assert S.higher_is_better("purity") and S.higher_is_better("clustering_accuracy_test")
    assert not S.higher_is_better("error_unlabeled")
    assert not S.higher_is_better("macro_error_unlabeled")


def test_cell_summary_is_the_student_t_interval():
    runs = make_runs({"a": [1.0, 2.0, 3.0, 4.0], "b": [7.0]})
    out = by_method(S.cell_summary(runs, "error_unlabeled", confidence=0.95))
    a = out.loc["a"]
    std = np.sqrt(5.0 / 3.0)  # sum of squared deviations 5, ddof 1
    assert (a["n"], a["mean"]) == (4, 2.5)
    assert a["std"] == pytest.approx(std)
    assert a["sem"] == pytest.approx(std / 2)
    assert a["ci_high"] - a["mean"] == pytest.approx(3.182446305 * std / 2)  # t_{0.975, 3}
    assert a["mean"] - a["ci_low"] == pytest.approx(3.182446305 * std / 2)
    b = out.loc["b"]
    assert b["n"] == 1 and b["mean"] == 7.0
    assert np.isnan([b["std"], b["sem"], b["ci_low"], b["ci_high"]]).all()


def test_wilcoxon_p_is_exact_for_small_samples():
    # all n differences positive: the two-sided p-value is its minimum, 2 / 2**n
    assert S.wilcoxon_p([1, 2, 3, 4, 5]) == pytest.approx(2 / 2 ** 5)
    assert S.wilcoxon_p(-np.arange(1.0, 7.0)) == pytest.approx(2 / 2 ** 6)
    assert S.wilcoxon_p(np.zeros(8)) == 1.0


def test_wilcoxon_p_on_a_known_sample():
    d = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]
    # negative ranks 10 + 14 = 24; exact null: count the subsets of ranks 1..15 summing to <= 24
    counts = np.zeros(121, dtype=np.int64)
    counts[0] = 1
    for r in range(1, 16):
        counts[r:] = counts[r:] + counts[:-r].copy()
    exact = 2 * counts[:25].sum() / 2 ** 15
    assert exact == pytest.approx(0.041259765625)
    assert S.wilcoxon_p(d) == pytest.approx(exact)
    assert S.wilcoxon_p(d) == pytest.approx(st.wilcoxon(d).pvalue)


def test_holm_on_a_hand_computed_example():
    # sorted 0.005 0.01 0.03 0.04 times 4 3 2 1 = 0.02 0.03 0.06 0.04,
    # running max 0.02 0.03 0.06 0.06, back in input order:
    np.testing.assert_allclose(S.holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(S.holm([0.9, 0.8]), [1.0, 1.0])  # 2 * 0.8 capped at 1
    out = S.holm([0.5, np.nan, 0.4])  # NaN is no member of the family: m = 2
    np.testing.assert_allclose(out, [0.8, np.nan, 0.8])
    assert S.holm([]).size == 0


# ---------------------------------------------------------------------------------------------
# paired tests within a setting


def test_paired_tests_marks_the_best_and_its_ties():
    rng = np.random.default_rng(0)
    best = 20 + rng.normal(0, 1, 20)
    runs = make_runs({"best": best, "worse": best + 1 + rng.normal(0, 0.2, 20),
                      "copy": best.copy()})
    shuffled = runs.sample(frac=1.0, random_state=1)  # pairing is by split, not by row order
    out = by_method(S.paired_tests(shuffled, "error_unlabeled"))
    assert out.loc["worse", "p_value"] == pytest.approx(2 / 2 ** 20)
    out = by_method(S.paired_tests(runs, "error_unlabeled"))
    assert list(out["best"]) == [True, False, False]  # equal means: the first listed wins
    assert np.isnan(out.loc["best", "p_value"]) and out.loc["best", "tied_with_best"]
    assert out.loc["worse", "p_value"] == pytest.approx(2 / 2 ** 20)
    assert out.loc["worse", "p_holm"] < 0.05 and not out.loc["worse", "tied_with_best"]
    assert out.loc["copy", "p_value"] == 1.0 and out.loc["copy", "tied_with_best"]
    assert list(out["n_paired"]) == [20, 20, 20]


def test_paired_tests_pairs_on_shared_splits_and_applies_holm_per_setting():
    a = make_runs({"m1": np.arange(10.0), "m2": np.arange(10.0) + 5, "m3": np.arange(10.0) + 9})
    a = a.drop(a.index[(a["method"] == "m2") & (a["split"] == 3)])
    b = make_runs({"m1": [1.0] * 6, "m2": [2.0] * 6}, setting=("ds", "raw", "knn", "1/class"))
    out = S.paired_tests(pd.concat([a, b]), "error_unlabeled")
    first = by_method(out[out["protocol"] == "5/class"])
    assert first.loc["m2", "n_paired"] == 9 and first.loc["m2", "n"] == 9
    p = first.loc[["m2", "m3"], "p_value"].to_numpy()
    np.testing.assert_allclose(first.loc[["m2", "m3"], "p_holm"], S.holm(p))
    second = by_method(out[out["protocol"] == "1/class"])
    # 6 splits, all worse: p = 2/64 < 0.05, Holm over a family of one leaves it as is
    assert second.loc["m2", "p_holm"] == pytest.approx(2 / 64)
    assert not second.loc["m2", "tied_with_best"]


def test_paired_tests_cannot_separate_five_splits():
    runs = make_runs({"a": [1.0] * 5, "b": [50.0] * 5})
    out = by_method(S.paired_tests(runs, "error_unlabeled"))
    assert out.loc["b", "p_value"] == pytest.approx(0.0625)  # the smallest possible with n = 5
    assert out.loc["b", "tied_with_best"]


def test_paired_tests_higher_is_better():
    runs = make_runs({"low": np.arange(8.0), "high": np.arange(8.0) + 10}, metric="purity")
    out = by_method(S.paired_tests(runs, "purity"))
    assert out.loc["high", "best"] and not out.loc["low", "best"]
    assert not out.loc["low", "tied_with_best"]


def test_paired_tests_rejects_unpaired_methods_and_bad_tables():
    runs = pd.concat([make_runs({"a": [1.0, 2.0, 3.0]}),
                      make_runs({"b": [5.0, 6.0, 7.0]}, splits=[10, 11, 12])])
    with pytest.raises(ValueError, match="shares no split"):
        S.paired_tests(runs, "error_unlabeled")
    with pytest.raises(ValueError, match="lacks column.*'purity'"):
        S.paired_tests(runs, "purity")
    with pytest.raises(ValueError, match="rows sharing a \\(cell, split\\)"):
        S.paired_tests(pd.concat([runs, runs.head(1)]), "error_unlabeled")
    with pytest.raises(ValueError, match="alpha must lie"):
        S.paired_tests(runs, "error_unlabeled", alpha=5)
    with pytest.raises(ValueError, match="not numeric"):
        S.cell_summary(runs.assign(error_unlabeled="x"), "error_unlabeled")


# ---------------------------------------------------------------------------------------------
# across data sets (Demšar 2006)


def test_average_ranks_averages_ties_drops_incomplete_rows_and_flips_direction():
    scores = pd.DataFrame({"A": [1.0, 2.0, 5.0, np.nan], "B": [2.0, 2.0, 4.0, 1.0],
                           "C": [3.0, 1.0, 3.0, 2.0]})
    res = R.average_ranks(scores)
    assert res.n_dropped == 1 and (res.n, res.k) == (3, 3)
    np.testing.assert_allclose(res.ranks.loc[1], [2.5, 2.5, 1.0])
    # A: (1 + 2.5 + 3) / 3, B: (2 + 2.5 + 2) / 3, C: (3 + 1 + 1) / 3
    assert res.average.to_dict() == pytest.approx({"A": 6.5 / 3, "B": 6.5 / 3, "C": 5 / 3})
    assert list(res.average.index) == ["C", "A", "B"]  # best first, ties in column order
    flipped = R.average_ranks(scores, higher_is_better=True)
    np.testing.assert_allclose(flipped.ranks, 4 - res.ranks)


def test_average_ranks_of_demsar_table_6():
    res = R.average_ranks(DEMSAR_AUC, higher_is_better=True)
    # The paper prints 3.143 2.000 2.893 1.964: its AUCs as printed move half a rank from
    # C4.5+m+cf to C4.5+cf on one data set; rankdata of the printed values gives these.
    assert res.average[C45].to_numpy() == pytest.approx([44 / 14, 2.0, 41 / 14, 27 / 14])


def test_friedman_reproduces_demsars_statistics_from_his_ranks():
    # 14 rows of ranks whose column means are the paper's 3.143 2.000 2.893 1.964 exactly
    rows = ([[4, 2, 3, 1]] * 6 + [[3, 1, 4, 2]] * 4 + [[2, 3, 1, 4]] * 2
            + [[3, 4, 1.5, 1.5], [1, 2, 3, 4]])
    res = R.friedman_test(pd.DataFrame(rows, columns=C45, dtype=float))
    r = np.array([44, 28, 40.5, 27.5]) / 14
    assert res.ranks.average[C45].to_numpy() == pytest.approx(r)
    chi2 = 12 * 14 / (4 * 5) * (np.sum(r ** 2) - 4 * 5 ** 2 / 4)
    assert res.chi2 == pytest.approx(chi2) and round(res.chi2, 2) == 9.28
    assert res.f == pytest.approx(13 * chi2 / (14 * 3 - chi2)) and round(res.f, 2) == 3.69
    assert (res.df1, res.df2, res.n, res.k) == (3, 39, 14, 4)
    assert res.p_value == pytest.approx(st.f.sf(res.f, 3, 39))
    assert res.p_value < 0.05  # "we can proceed with a post-hoc test" (F(3, 39) at 5 % = 2.85)


def test_friedman_equals_scipy_without_ties():
    scores = pd.DataFrame(np.random.default_rng(42).normal(size=(12, 5)),
                          columns=list("ABCDE"))
    res = R.friedman_test(scores)
    ref = st.friedmanchisquare(*scores.to_numpy().T)
    assert res.chi2 == pytest.approx(ref.statistic)
    assert res.chi2_p_value == pytest.approx(ref.pvalue)


def test_friedman_of_identical_rankings_and_too_few_rows():
    res = R.friedman_test(pd.DataFrame([[1.0, 2.0, 3.0]] * 4, columns=list("ABC")))
    assert res.chi2 == pytest.approx(4 * 2) and res.f == np.inf and res.p_value == 0.0
    with pytest.raises(ValueError, match="at least 2 data sets"):
        R.friedman_test(pd.DataFrame([[1.0, 2.0], [np.nan, 1.0]], columns=list("AB")))


def test_nemenyi_q_matches_demsar_table_5a():
    q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]
    for k, a, b in zip(range(2, 11), q05, q10):
        # the table was derived from 3-decimal studentized-range tables: agree within 1e-3
        assert R.nemenyi_q(k, 0.05) == pytest.approx(a, abs=1e-3)
        assert R.nemenyi_q(k, 0.10) == pytest.approx(b, abs=1e-3)
    with pytest.raises(ValueError, match="k >= 2"):
        R.nemenyi_q(1)


def test_nemenyi_cd_and_groups_of_demsar_example():
    cd05 = R.nemenyi_cd(4, 14, 0.05)
    assert cd05 == pytest.approx(R.nemenyi_q(4) * np.sqrt(4 * 5 / (6 * 14)))
    assert cd05 == pytest.approx(1.25, abs=5e-3)
    avg = R.average_ranks(DEMSAR_AUC, higher_is_better=True).average
    assert R.cd_groups(avg, cd05) == [["C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"]]
    # alpha = 0.10 (CD = 1.12): C4.5 is worse than C4.5+m and C4.5+m+cf; C4.5+cf is in between
    cd10 = R.nemenyi_cd(4, 14, 0.10)
    assert cd10 == pytest.approx(1.12, abs=5e-3)
    assert R.cd_groups(avg, cd10) == [["C4.5+m+cf", "C4.5+m", "C4.5+cf"], ["C4.5+cf", "C4.5"]]


def test_cd_groups_on_a_hand_made_case():
    ranks = pd.Series({"C": 3.0, "A": 1.0, "D": 3.2, "B": 1.5})
    assert R.cd_groups(ranks, 1.0) == [["A", "B"], ["C", "D"]]
    # D - A = 2.2: under cd = 2.1 the groups overlap, under 2.5 all four are one group
    assert R.cd_groups(ranks, 2.1) == [["A", "B", "C"], ["B", "C", "D"]]
    assert R.cd_groups(ranks, 2.5) == [["A", "B", "C", "D"]]
    assert R.cd_groups(ranks, 0.1) == []
    assert R.cd_groups(ranks, 0.5) == [["C", "D"]]  # the difference must be < cd, not <=
    with pytest.raises(ValueError, match="non-negative"):
        R.cd_groups(ranks, -1.0)


# ---------------------------------------------------------------------------------------------
# compare two sets of runs


def two_settings(rng, n=10):
    base = {m: 20 + rng.normal(0, 1, n) for m in ("laplace", "poisson", "mbo")}
    runs = pd.concat([make_runs(base), make_runs(base, setting=("ds", "raw", "knn", "1/class"))])
    return runs.assign(purity=100 - runs["error_unlabeled"]).reset_index(drop=True)


def test_compare_flags_a_consistent_shift_only():
    rng = np.random.default_rng(3)
    a = two_settings(rng)
    b = a.copy()
    poisson, mbo = b["method"] == "poisson", b["method"] == "mbo"
    b.loc[poisson, "error_unlabeled"] += 0.5  # a real change
    b.loc[mbo, "error_unlabeled"] += 1e-12  # rounding, below atol
    b.loc[mbo, "purity"] += rng.normal(0, 1, mbo.sum())  # noise around zero
    res = C.compare(a, b, metrics=["error_unlabeled", "purity"])
    t = res.table.set_index(["method", "protocol", "metric"])
    assert len(t) == 12 and res.only_a.empty and res.only_b.empty
    changed = set(res.changed.set_index(["method", "protocol", "metric"]).index)
    assert changed == {("poisson", p, "error_unlabeled") for p in ("5/class", "1/class")}
    row = t.loc[("poisson", "5/class", "error_unlabeled")]
    assert row["delta"] == pytest.approx(0.5) and row["n"] == 10
    assert row["ci_low"] == pytest.approx(0.5) and row["ci_high"] == pytest.approx(0.5)
    assert row["mean_b"] - row["mean_a"] == pytest.approx(row["delta"])
    same = t.loc[("laplace", "5/class", "error_unlabeled")]
    assert same["delta"] == 0 and same["p_value"] == 1.0 and not same["changed"]
    assert (res.table["p_holm"] >= res.table["p_value"]).all()


def test_compare_counts_unpaired_splits_and_one_sided_cells():
    a = two_settings(np.random.default_rng(4))
    b = a[~((a["method"] == "mbo") & (a["split"] >= 7))].copy()  # 3 splits missing in b
    b = b[~((b["method"] == "laplace") & (b["protocol"] == "1/class"))]
    b = pd.concat([b, make_runs({"new": [1.0, 2.0]}).assign(purity=1.0)])
    res = C.compare(a, b)
    assert set(res.table["metric"]) == {"error_unlabeled", "purity"}  # default: shared numerics
    mbo = res.table[(res.table["method"] == "mbo") & (res.table["metric"] == "purity")]
    assert list(mbo["n"]) == [7, 7] and list(mbo["n_unpaired"]) == [3, 3]
    assert res.only_a[["method", "protocol"]].values.tolist() == [["laplace", "1/class"]]
    assert res.only_b["method"].tolist() == ["new"]
    text = C.format_comparison(res, max_rows=3)
    assert "0 changed" in text and "only in a: 1, only in b: 1" in text
    assert "more rows" in text and "laplace" in text


def test_compare_single_split_and_formatting():
    a = make_runs({"m": [10.0]})
    b = make_runs({"m": [11.0]})
    res = C.compare(a, b)
    row = res.table.iloc[0]
    assert row["n"] == 1 and row["changed"] and np.isnan(row["p_value"])
    text = C.format_comparison(res)
    header, rule, line = text.splitlines()[2:5]
    assert header.split()[:6] == S.KEYS + ["metric"]
    assert len(rule) >= len(line.rstrip()) - 1 and line.rstrip().endswith("yes")


def test_compare_rejects_unpairable_input():
    a = make_runs({"m": [1.0, 2.0]})
    with pytest.raises(ValueError, match="share no \\(cell, split\\)"):
        C.compare(a, make_runs({"m": [1.0, 2.0]}, splits=[5, 6]))
    with pytest.raises(ValueError, match="lacks column.*'purity'"):
        C.compare(a, a, metrics=["purity"])
    with pytest.raises(ValueError, match="atol"):
        C.compare(a, a, atol=-1)


# ---------------------------------------------------------------------------------------------
# plots


def assert_png(path, min_bytes=5000):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > min_bytes


def test_plots_write_png_files(tmp_path):
    runs = pd.concat([two_settings(np.random.default_rng(5)),
                      two_settings(np.random.default_rng(6)).assign(dataset="other")])
    ranks = R.average_ranks(R.score_table(runs, "error_unlabeled"))
    cd = R.nemenyi_cd(ranks.k, ranks.n)
    P.plot_cd_diagram(ranks.average, cd, tmp_path / "cd.png", title="error")
    P.plot_boxes(runs, "error_unlabeled", tmp_path / "sub" / "boxes.png")
    P.plot_rank_heatmap(ranks.ranks, tmp_path / "heat.png")
    for name in ("cd.png", "sub/boxes.png", "heat.png"):
        assert_png(tmp_path / name)


def test_cd_diagram_says_plainly_when_the_cd_exceeds_the_rank_range(monkeypatch):
    texts = []

    def keep(fig, out):  # the diagram's texts instead of a file
        texts.append(" ".join(" ".join(t.get_text().split()) for ax in fig.axes for t in ax.texts))
        P._pyplot().close(fig)

    monkeypatch.setattr(P, "_save", keep)
    four = pd.Series({"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0})
    P.plot_cd_diagram(four, 3.32, "wide.png")
    P.plot_cd_diagram(four, 1.5, "narrow.png")
    P.plot_cd_diagram(four.iloc[:2], 1.39, "two.png")  # narrow figure: the label wraps, still whole
    assert "critical difference 3.32: larger than the rank range of 3, so no pair differs" in texts[0]
    assert "critical difference 1.50" in texts[1] and "no pair" not in texts[1]
    assert "critical difference 1.39: larger than the rank range of 1, so no pair differs" in texts[2]
    assert not any("beyond" in t or "CD =" in t for t in texts)


def test_the_aggregate_jobs_across_settings_summary():
    """gssl.analysis.aggregate_job.across_settings: ranks and Friedman over three methods and two
    settings; one method: nothing ranked, and the reason said."""
    from gssl.analysis.aggregate_job import across_settings

    runs = two_settings(np.random.default_rng(5))
    ranks, across = across_settings(runs, "error_unlabeled")
    assert (across["settings"], across["methods"]) == (2, 3)
    assert across["average_ranks"] == ranks.average.to_dict()
    assert across["critical_difference"] == R.nemenyi_cd(3, 2)
    assert "friedman_p" in across
    ranks, across = across_settings(runs[runs["method"] == "mbo"], "error_unlabeled")
    assert ranks is None and across["metric"] == "error_unlabeled" and across["not_ranked"]
