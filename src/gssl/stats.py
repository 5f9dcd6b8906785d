"""Statistics for benchmark results a researcher can trust at a glance.

Input is a ``runs`` table with one row per (cell, split): the key columns :data:`KEYS`, an integer
``split`` and numeric metric columns (errors in percent, lower is better; see
:func:`higher_is_better`). Splits are seeded and shared by every method of a setting
(:data:`SETTING`), so methods of one setting are compared *paired by split*.

Three levels of evidence:

* within a cell -- :func:`cell_summary`: mean, std, standard error and a Student-t interval;
* within a setting -- :func:`paired_tests`: Wilcoxon signed-rank tests of every method against
  the best one, Holm-corrected (:func:`holm`), which says which methods are "tied with the best";
* across settings -- :func:`average_ranks`, :func:`friedman_test`, :func:`nemenyi_cd` and
  :func:`cd_groups` (Demšar 2006, JMLR 7:1-30), drawn by :func:`plot_cd_diagram`.

:func:`gssl.compare.compare` checks two sets of runs of the same cells (a rerun, a new commit)
for changes beyond split noise; :mod:`gssl.stats_plots` draws the figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as _st

from .errors import GsslError
from .metrics import HIGHER_IS_BETTER

KEYS = ["dataset", "prep", "graph", "method", "protocol"]  # one cell = one row of a results table
SETTING = ["dataset", "prep", "graph", "protocol"]  # methods of a setting share their splits


class StatsError(GsslError, ValueError):
    """A results table or a parameter cannot be used for the statistics asked for."""


def higher_is_better(metric: str) -> bool:
    """Whether larger values of ``metric`` are better (purity, clustering accuracy).

    Parameters
    ----------
    metric : str
        Metric column name, e.g. ``"error_unlabeled"`` or ``"purity"``.

    Returns
    -------
    bool
        True for names starting with a prefix of :data:`gssl.metrics.HIGHER_IS_BETTER`.
    """
    return metric.startswith(HIGHER_IS_BETTER)


# ---------------------------------------------------------------------------------------------
# input checks


def check_runs(runs, metrics, name: str = "runs", need_split: bool = True) -> None:
    """Raise StatsError unless ``runs`` has the key columns, numeric ``metrics`` and, when
    ``need_split``, one row per (cell, split)."""
    if not isinstance(runs, pd.DataFrame):
        raise StatsError(f"{name} must be a pandas DataFrame with one row per (cell, split), "
                         f"got {type(runs).__name__}")
    if runs.empty:
        raise StatsError(f"{name} is empty: it needs one row per (cell, split)")
    needed = KEYS + (["split"] if need_split else []) + list(metrics)
    missing = [c for c in needed if c not in runs.columns]
    if missing:
        raise StatsError(f"{name} lacks column(s) {missing}; it has {list(runs.columns)}. Pass a "
                         f"metric that {name} has, or add the key columns {KEYS} and 'split'")
    for m in metrics:
        if not pd.api.types.is_numeric_dtype(runs[m]) or pd.api.types.is_bool_dtype(runs[m]):
            raise StatsError(f"metric column {m!r} of {name} is not numeric (dtype "
                             f"{runs[m].dtype}); convert it with pd.to_numeric or pick another")
    if runs[KEYS].isna().any().any():
        raise StatsError(f"{name} has missing values in the key columns {KEYS}; fill or drop "
                         f"those rows")
    if need_split:
        dup = runs.duplicated(KEYS + ["split"], keep=False)
        if dup.any():
            first = runs.loc[dup, KEYS + ["split"]].iloc[0].to_dict()
            raise StatsError(f"{name} has {int(dup.sum())} rows sharing a (cell, split), e.g. "
                             f"{first}; keep one row per split of a cell (drop reruns)")


def check_level(value: float, name: str) -> None:
    if not 0.0 < value < 1.0:
        raise StatsError(f"{name} must lie strictly between 0 and 1, got {value!r}")


# ---------------------------------------------------------------------------------------------
# single cells and paired tests within a setting


def cell_summary(runs: pd.DataFrame, metric: str, confidence: float = 0.95) -> pd.DataFrame:
    """Mean and Student-t confidence interval of ``metric`` per cell.

    Parameters
    ----------
    runs : DataFrame
        One row per (cell, split) with the :data:`KEYS` columns and ``metric``.
    metric : str
        Numeric metric column; NaN values (a split without it) are left out.
    confidence : float
        Coverage of the interval, in (0, 1).

    Returns
    -------
    DataFrame
        One row per cell: :data:`KEYS`, ``n``, ``mean``, ``std`` (ddof=1), ``sem`` and
        ``ci_low``/``ci_high`` = mean -/+ t_{(1+confidence)/2, n-1} sem. ``std``, ``sem`` and the
        interval are NaN for n == 1 (one split carries no estimate of its noise).
    """
    check_runs(runs, [metric], need_split=False)
    check_level(confidence, "confidence")
    g = runs.groupby(KEYS, sort=False)[metric]
    out = pd.DataFrame({"n": g.count(), "mean": g.mean(), "std": g.std(ddof=1)})
    out["sem"] = out["std"] / np.sqrt(out["n"])
    half = t_quantile(confidence, out["n"]) * out["sem"]
    out["ci_low"], out["ci_high"] = out["mean"] - half, out["mean"] + half
    return out.reset_index()


def t_quantile(confidence: float, n) -> np.ndarray:
    """Two-sided Student-t quantile for samples of size n (NaN where n < 2)."""
    df = np.asarray(n, dtype=float) - 1.0
    with np.errstate(invalid="ignore"):
        return np.where(df >= 1, _st.t.ppf(0.5 + confidence / 2, np.maximum(df, 1)), np.nan)


def wilcoxon_p(differences) -> float:
    """Two-sided Wilcoxon signed-rank p-value of paired differences.

    Zero differences are dropped (``zero_method="wilcox"``); when every difference is zero the
    two samples are identical and p = 1.0 (scipy would refuse the test).

    Parameters
    ----------
    differences : array_like
        Paired differences, at least one.

    Returns
    -------
    float
        The p-value of :func:`scipy.stats.wilcoxon` with its default method (exact null
        distribution for small samples, normal approximation otherwise).
    """
    d = np.asarray(differences, dtype=float)
    if d.size == 0 or np.isnan(d).any():
        raise StatsError(f"wilcoxon_p needs at least one finite paired difference, got {d}")
    if np.all(d == 0):
        return 1.0
    return float(_st.wilcoxon(d).pvalue)


def holm(p_values) -> np.ndarray:
    """Holm-Bonferroni step-down adjustment of a family of p-values.

    The i-th smallest of m p-values becomes max_{j <= i} min(1, (m - j + 1) p_(j)), so the adjusted
    values keep the order of the raw ones. Rejecting where adjusted p < alpha controls the
    family-wise error rate at alpha.

    Parameters
    ----------
    p_values : array_like
        Raw p-values; NaN entries are not part of the family and stay NaN.

    Returns
    -------
    ndarray
        Adjusted p-values, in the input order.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    order = np.argsort(q, kind="stable")
    steps = (q.size - np.arange(q.size)) * q[order]  # m, m-1, ..., 1 times the sorted p-values
    adjusted = np.empty(q.size)
    adjusted[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    out[ok] = adjusted
    return out


def paired_tests(runs: pd.DataFrame, metric: str, alpha: float = 0.05) -> pd.DataFrame:
    """Which methods of each setting are not significantly worse than its best one.

    Within each setting (:data:`SETTING`) the best method has the best mean ``metric`` (lowest,
    or highest for :func:`higher_is_better` metrics; the first listed on equal means). Every other
    method is compared with it by a two-sided Wilcoxon signed-rank test on the splits both have
    (paired by ``split``); the p-values of a setting are Holm-corrected together.

    With n <= 5 paired splits the smallest two-sided Wilcoxon p-value is 2 / 2**n >= 0.0625, so
    no method can be shown worse at alpha = 0.05: every method is then "tied". Use more splits
    (or report ``n_paired``) before reading ties as equal performance.

    Parameters
    ----------
    runs : DataFrame
        One row per (cell, split) with :data:`KEYS`, ``split`` and ``metric``.
    metric : str
        Numeric metric column.
    alpha : float
        Family-wise error rate of the Holm procedure within a setting.

    Returns
    -------
    DataFrame
        One row per cell: :data:`KEYS`, ``n`` (splits with a value), ``mean``, ``best``,
        ``n_paired`` (splits shared with the best), ``p_value`` (1.0 when all paired differences
        are zero, NaN for the best itself), ``p_holm`` and ``tied_with_best``
        (best, or p_holm >= alpha).

    Raises
    ------
    ValueError
        On a malformed table, or when a method shares no split with its setting's best method.
    """
    check_runs(runs, [metric])
    check_level(alpha, "alpha")
    parts = [_setting_tests(sub, metric, alpha) for _, sub in runs.groupby(SETTING, sort=False)]
    return pd.concat(parts, ignore_index=True)


def _setting_tests(sub: pd.DataFrame, metric: str, alpha: float) -> pd.DataFrame:
    """paired_tests on one setting's rows."""
    methods = list(dict.fromkeys(sub["method"]))
    wide = sub.pivot(index="split", columns="method", values=metric)[methods]
    means = wide.mean()
    best = None
    if means.notna().any():
        best = means.idxmax() if higher_is_better(metric) else means.idxmin()
    rows = [_versus_best(wide, m, best) for m in methods]
    out = pd.DataFrame(rows)
    out["p_holm"] = holm(out["p_value"])
    out["tied_with_best"] = out["best"] | (out["p_holm"] >= alpha)
    keys = sub.drop_duplicates("method").set_index("method").loc[methods, SETTING].reset_index()
    return pd.concat([keys[KEYS], out], axis=1)


def _versus_best(wide: pd.DataFrame, method: str, best) -> dict:
    """Counts, mean and the Wilcoxon p-value of one method against the setting's best."""
    values = wide[method].dropna()
    row = {"n": int(values.size), "mean": float(values.mean()) if values.size else np.nan,
           "best": method == best, "n_paired": int(values.size) if method == best else 0,
           "p_value": np.nan}
    if method == best or best is None or values.empty:
        return row
    pair = wide[[method, best]].dropna()
    if pair.empty:
        raise StatsError(f"method {method!r} shares no split with the best method {best!r} of "
                         f"its setting, so they cannot be paired; check the 'split' column "
                         f"(every method of a setting should run the same seeded splits)")
    row["n_paired"] = len(pair)
    row["p_value"] = wilcoxon_p(pair[method].to_numpy() - pair[best].to_numpy())
    return row


# ---------------------------------------------------------------------------------------------
# across settings: average ranks, Friedman, Nemenyi (Demšar 2006)


@dataclass
class RankResult:
    """Ranks of methods (columns) per data set or setting (rows); rank 1 is the best.

    Attributes
    ----------
    ranks : DataFrame
        The rank of every method on every complete row (ties get the average rank).
    average : Series
        Mean rank per method, best (smallest) first.
    n_dropped : int
        Rows left out because some method had no score there.
    """

    ranks: pd.DataFrame
    average: pd.Series
    n_dropped: int

    @property
    def n(self) -> int:
        """Number of rows (data sets) ranked."""
        return len(self.ranks)

    @property
    def k(self) -> int:
        """Number of methods ranked."""
        return self.ranks.shape[1]


def score_table(runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean ``metric`` per setting (rows, indexed by :data:`SETTING`) and method (columns).

    The input of :func:`average_ranks` and :func:`friedman_test`; a method missing from a
    setting is NaN there.
    """
    check_runs(runs, [metric], need_split=False)
    means = runs.groupby(SETTING + ["method"], sort=False)[metric].mean()
    table = means.unstack("method")
    return table[list(dict.fromkeys(runs["method"]))]


def average_ranks(scores: pd.DataFrame, higher_is_better: bool = False) -> RankResult:
    """Rank methods within each row of a score table and average the ranks.

    Parameters
    ----------
    scores : DataFrame
        Index: data sets or settings; columns: methods; values: mean metric (e.g. from
        :func:`score_table`). Rows with any NaN are dropped (counted in ``n_dropped``), since
        ranks are only comparable over the same set of methods.
    higher_is_better : bool
        False for errors (lowest score gets rank 1), True for accuracies.

    Returns
    -------
    RankResult
        Per-row ranks (ties averaged, :func:`scipy.stats.rankdata`) and their column means.
    """
    if not isinstance(scores, pd.DataFrame):
        raise StatsError(f"scores must be a DataFrame (rows: data sets, columns: methods), got "
                         f"{type(scores).__name__}")
    try:
        complete = scores.astype(float).dropna(how="any")
    except (TypeError, ValueError) as err:
        raise StatsError(f"scores must be numeric (mean metric per data set and method): {err}")
    if complete.shape[1] < 2 or complete.empty:
        raise StatsError(f"ranking needs at least 2 methods (columns) and one row where every "
                         f"method has a score; got {scores.shape[1]} columns and "
                         f"{len(complete)} complete rows of {len(scores)}")
    sign = -1.0 if higher_is_better else 1.0
    ranks = _st.rankdata(sign * complete.to_numpy(dtype=float), axis=1)
    ranks = pd.DataFrame(ranks, index=complete.index, columns=complete.columns)
    average = ranks.mean().sort_values(kind="stable")
    return RankResult(ranks=ranks, average=average, n_dropped=len(scores) - len(complete))


@dataclass
class FriedmanResult:
    """Friedman test of k methods over N data sets (Demšar 2006, section 3.2.2).

    Attributes
    ----------
    chi2, chi2_p_value : float
        Friedman statistic chi2_F and its chi-square(k - 1) p-value.
    f, p_value : float
        Iman-Davenport statistic F_F (less conservative than chi2_F; Demšar recommends it) and
        its F(df1, df2) p-value.
    df1, df2 : int
        k - 1 and (k - 1)(N - 1).
    n, k : int
        Number of data sets and of methods.
    ranks : RankResult
        The ranks the statistics were computed from.
    """

    chi2: float
    chi2_p_value: float
    f: float
    p_value: float
    df1: int
    df2: int
    n: int
    k: int
    ranks: RankResult


def friedman_test(scores: pd.DataFrame, higher_is_better: bool = False) -> FriedmanResult:
    """Friedman and Iman-Davenport tests of "all methods perform alike" over data sets.

    chi2_F = 12N / (k(k+1)) [sum_j R_j^2 - k(k+1)^2 / 4] from the average ranks R_j, and
    F_F = (N - 1) chi2_F / (N(k - 1) - chi2_F). Without ties in a row chi2_F equals
    :func:`scipy.stats.friedmanchisquare`; with ties it omits scipy's tie correction, as Demšar.

    Parameters
    ----------
    scores : DataFrame
        Rows: data sets (N >= 2 complete rows); columns: methods (k >= 2). See
        :func:`average_ranks`.
    higher_is_better : bool
        Direction of the scores.

    Returns
    -------
    FriedmanResult
    """
    ranks = average_ranks(scores, higher_is_better)
    n, k = ranks.n, ranks.k
    if n < 2:
        raise StatsError(f"the Friedman test needs at least 2 data sets with every method "
                         f"scored, got {n} ({ranks.n_dropped} dropped for missing scores)")
    r = ranks.average.to_numpy()
    chi2 = 12.0 * n / (k * (k + 1)) * (np.sum(r ** 2) - k * (k + 1) ** 2 / 4.0)
    df1, df2 = k - 1, (k - 1) * (n - 1)
    denom = n * (k - 1) - chi2
    # identical rankings on every data set make chi2 reach its maximum N(k-1): F is infinite
    f = (n - 1) * chi2 / denom if denom > 1e-12 else np.inf
    return FriedmanResult(chi2=float(chi2), chi2_p_value=float(_st.chi2.sf(chi2, df1)),
                          f=float(f), p_value=float(_st.f.sf(f, df1, df2)), df1=df1, df2=df2,
                          n=n, k=k, ranks=ranks)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value q_alpha of the Nemenyi test for k methods (Demšar 2006, Table 5a).

    The studentized range quantile with infinite degrees of freedom divided by sqrt(2).
    """
    if int(k) != k or k < 2:
        raise StatsError(f"the Nemenyi test needs k >= 2 methods, got {k!r}")
    check_level(alpha, "alpha")
    return float(_st.studentized_range.ppf(1.0 - alpha, int(k), np.inf) / np.sqrt(2.0))


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Critical difference of average ranks for the Nemenyi post-hoc test.

    Two of k methods ranked over n data sets differ significantly at level alpha when their
    average ranks differ by at least CD = q_alpha sqrt(k(k+1) / (6n)).

    Parameters
    ----------
    k : int
        Number of methods (>= 2).
    n : int
        Number of data sets the ranks average over (>= 1).
    alpha : float
        Significance level.

    Returns
    -------
    float
    """
    if int(n) != n or n < 1:
        raise StatsError(f"the critical difference needs n >= 1 data sets, got {n!r}")
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n)))


def cd_groups(avg_ranks: pd.Series, cd: float) -> list[list[str]]:
    """Maximal groups of methods whose average ranks all differ by less than ``cd``.

    These are the bars of a critical-difference diagram: methods joined by a bar are not
    significantly different. Each group is a contiguous run in rank order; groups contained in
    another one and single methods are left out.

    Parameters
    ----------
    avg_ranks : Series
        Average rank per method (index: method names).
    cd : float
        Critical difference, e.g. from :func:`nemenyi_cd`.

    Returns
    -------
    list of list of str
        Groups in rank order, each listing its methods best first.
    """
    if not isinstance(avg_ranks, pd.Series) or avg_ranks.isna().any():
        raise StatsError("avg_ranks must be a pandas Series of average ranks (index: methods) "
                         "without NaN, e.g. average_ranks(scores).average")
    if not cd >= 0:
        raise StatsError(f"cd must be a non-negative critical difference, got {cd!r}")
    r = avg_ranks.sort_values(kind="stable")
    values, names = r.to_numpy(), list(r.index)
    groups, last_end = [], 0
    for i, v in enumerate(values):
        end = int(np.searchsorted(values, v + cd, side="left"))  # first rank >= v + cd
        # ends never decrease with i, so a group is maximal iff it reaches further than the last
        if end - i >= 2 and end > last_end:
            groups.append(names[i:end])
        last_end = max(last_end, end)
    return groups
