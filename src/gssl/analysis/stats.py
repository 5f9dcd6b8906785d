"""Statistics for benchmark results a researcher can trust at a glance.

Input is a ``runs`` table with one row per (cell, split): the key columns :data:`KEYS`, an integer
``split`` and numeric metric columns (errors in percent, lower is better; see
:func:`higher_is_better`). Splits are seeded and shared by every method of a setting
(:data:`SETTING`), so methods of one setting are compared *paired by split*.

Three levels of evidence:

* within a cell -- :func:`cell_summary`: mean, std, standard error and a Student-t interval;
* within a setting -- :func:`paired_tests`: Wilcoxon signed-rank tests of every method against
  the best one, Holm-corrected (:func:`holm`), which says which methods are "tied with the best";
* across settings -- :mod:`gssl.analysis.ranks`: average ranks, the Friedman test and Nemenyi's critical
  difference (Demšar 2006, JMLR 7:1-30), drawn by :func:`gssl.analysis.plots.plot_cd_diagram`.

:func:`gssl.analysis.compare.compare` checks two sets of runs of the same cells (a rerun, a new commit)
for changes beyond split noise; :mod:`gssl.analysis.plots` draws the figures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as _st

from ..errors import GsslError
from ..pipeline.plan import CELL_KEYS
from ..metrics import HIGHER_IS_BETTER

KEYS = list(CELL_KEYS)  # one cell = one row of a results table
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
