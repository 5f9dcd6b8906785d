"""Several methods over several settings (data sets): average ranks, the Friedman test, the
Nemenyi critical difference and the groups a CD diagram joins (Demšar 2006, JMLR 7:1-30).

The input is :func:`score_table`: the mean score per setting (rows, :data:`gssl.analysis.stats.SETTING`)
and method (columns), from a runs table as :mod:`gssl.analysis.stats` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as _st

from .stats import SETTING, StatsError, check_level, check_runs

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


def cd_sentence(cd: float, k: int) -> str:
    """The critical difference in words: with k methods average ranks lie in [1, k], so a CD above
    their range k - 1 means no pair can differ (the diagram then stops its bar at the axis end)."""
    if cd > k - 1:
        return (f"critical difference {cd:.2f}: larger than the rank range of {k - 1}, "
                "so no pair differs")
    return f"critical difference {cd:.2f}: pairs whose average ranks differ by at least this differ"
