"""Regression check between two sets of runs of the same cells (a rerun, another commit): every
metric that moved beyond its split noise, with the paired test (``gssl compare``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .stats import KEYS, StatsError, check_level, check_runs, t_quantile, holm, wilcoxon_p

COLUMNS = KEYS + ["metric", "n", "n_unpaired", "mean_a", "mean_b", "delta", "se_delta", "ci_low",
                  "ci_high", "p_value", "p_holm", "changed"]


@dataclass
class Comparison:
    """Result of :func:`compare`.

    Attributes
    ----------
    table : DataFrame
        One row per (cell present in both, metric); columns :data:`COLUMNS`.
    only_a, only_b : DataFrame
        The :data:`KEYS` of the cells present in one set of runs only.
    atol : float
        Smallest absolute change of a mean that counts as a change.
    alpha : float
        1 - coverage of the Student-t interval of the mean difference.
    """

    table: pd.DataFrame
    only_a: pd.DataFrame
    only_b: pd.DataFrame
    atol: float
    alpha: float

    @property
    def changed(self) -> pd.DataFrame:
        """The rows of :attr:`table` that changed beyond their split noise."""
        return self.table[self.table["changed"]]


def compare(runs_a: pd.DataFrame, runs_b: pd.DataFrame, metrics=None, atol: float = 1e-9,
            alpha: float = 0.05) -> Comparison:
    """Compare two sets of runs of the same cells, paired by split.

    A (cell, metric) row is *changed beyond its split noise* when ``|delta| > atol`` and either
    the cell has a single paired split (its noise cannot be estimated, so any change beyond
    ``atol`` counts) or the Student-t interval of the mean paired difference at level
    ``1 - alpha`` excludes 0. Identical differences on every split (se_delta = 0) give the
    interval [delta, delta], so a constant shift beyond ``atol`` is always a change.

    Parameters
    ----------
    runs_a, runs_b : DataFrame
        One row per (cell, split): :data:`KEYS`, ``split`` and numeric metric columns.
    metrics : list of str, optional
        Metric columns to compare; default every numeric column both tables have (but ``split``).
    atol : float
        Absolute tolerance (>= 0) below which a difference of means is rounding, not a change.
    alpha : float
        The interval has coverage 1 - alpha.

    Returns
    -------
    Comparison
        ``table`` has, per (cell in both, metric): ``n`` paired splits (both values present),
        ``n_unpaired`` splits with a value on one side only, ``mean_a``/``mean_b`` over the
        paired splits, ``delta`` = mean of b - a, ``se_delta`` = std(ddof=1) / sqrt(n), the
        interval ``ci_low``/``ci_high``, ``p_value`` (two-sided Wilcoxon signed-rank test of the
        differences; 1.0 when all are zero, NaN when n < 2), ``p_holm`` (Holm over every row)
        and ``changed``. A cell of both sets without a shared split has n = 0 and NaN statistics.

    Raises
    ------
    ValueError
        On a malformed table, a requested metric missing on a side, ``atol`` < 0, or when the two
        sets share no (cell, split) pair at all.
    """
    if not (np.isfinite(atol) and atol >= 0):
        raise StatsError(f"atol must be a finite tolerance >= 0 (the smallest |delta| counted as "
                         f"a change), got {atol!r}")
    check_level(alpha, "alpha")
    if metrics is None:
        metrics = _shared_metrics(runs_a, runs_b)
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    check_runs(runs_a, metrics, "runs_a")
    check_runs(runs_b, metrics, "runs_b")
    if not metrics:
        raise StatsError(f"no metric to compare: runs_a and runs_b share no numeric column "
                         f"besides the keys and 'split' (runs_a has {list(runs_a.columns)}, "
                         f"runs_b has {list(runs_b.columns)}); pass metrics=[...] naming "
                         f"columns both have")
    cols = KEYS + ["split"]
    merged = runs_a[cols + metrics].merge(runs_b[cols + metrics], on=cols, how="outer",
                                          suffixes=("_a", "_b"), indicator=True)
    if not (merged["_merge"] == "both").any():
        raise StatsError("runs_a and runs_b share no (cell, split) pair, so nothing can be "
                         "compared; check that both hold the same cells (columns "
                         f"{KEYS}) run on the same seeded splits")
    cells_a, cells_b = runs_a[KEYS].drop_duplicates(), runs_b[KEYS].drop_duplicates()
    index_a, index_b = pd.MultiIndex.from_frame(cells_a), pd.MultiIndex.from_frame(cells_b)
    shared = index_a[index_a.isin(index_b)]
    parts = [_metric_rows(merged, m, shared) for m in metrics]
    table = pd.concat(parts, ignore_index=True)
    # rows cell by cell (in the order of runs_a), the metrics of a cell together
    order = np.lexsort((np.repeat(np.arange(len(metrics)), len(shared)),
                        np.tile(np.arange(len(shared)), len(metrics))))
    table = table.iloc[order].reset_index(drop=True)
    table["se_delta"] = table["sd"] / np.sqrt(table["n"].where(table["n"] > 0))
    half = t_quantile(1.0 - alpha, table["n"]) * table["se_delta"]
    table["ci_low"], table["ci_high"] = table["delta"] - half, table["delta"] + half
    table["p_holm"] = holm(table["p_value"])
    beyond_noise = (table["n"] == 1) | (table["ci_low"] > 0) | (table["ci_high"] < 0)
    table["changed"] = (table["delta"].abs() > atol) & beyond_noise
    return Comparison(table=table[COLUMNS], only_a=cells_a[~index_a.isin(index_b)]
                      .reset_index(drop=True), only_b=cells_b[~index_b.isin(index_a)]
                      .reset_index(drop=True), atol=float(atol), alpha=float(alpha))


def _shared_metrics(runs_a, runs_b) -> list[str]:
    """Numeric columns of both tables but the keys and ``split`` (none if one is no table)."""
    if not (isinstance(runs_a, pd.DataFrame) and isinstance(runs_b, pd.DataFrame)):
        return []  # check_runs says what is wrong

    def numeric(frame, c):
        return pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])

    return [c for c in runs_a.columns if c in runs_b.columns and c not in KEYS + ["split"]
            and numeric(runs_a, c) and numeric(runs_b, c)]


def _metric_rows(merged: pd.DataFrame, metric: str, shared: pd.MultiIndex) -> pd.DataFrame:
    """Paired statistics of one metric per shared cell, in the order of ``shared``."""
    xa, xb = merged[f"{metric}_a"], merged[f"{metric}_b"]
    paired = xa.notna() & xb.notna()
    frame = merged[KEYS].assign(a=xa.where(paired), b=xb.where(paired), d=(xb - xa).where(paired),
                                paired=paired, one=xa.notna() ^ xb.notna())
    g = frame.groupby(KEYS, sort=False)
    out = pd.DataFrame({"n": g["paired"].sum(), "n_unpaired": g["one"].sum(),
                        "mean_a": g["a"].mean(), "mean_b": g["b"].mean(), "delta": g["d"].mean(),
                        "sd": g["d"].std(ddof=1), "p_value": g["d"].agg(_p_value)})
    out = out.reindex(shared).reset_index()
    out.insert(len(KEYS), "metric", metric)
    return out.astype({"n": int, "n_unpaired": int})


def _p_value(differences: pd.Series) -> float:
    """Wilcoxon p-value of the paired differences; NaN below two pairs (no test possible)."""
    d = differences.dropna().to_numpy()
    return wilcoxon_p(d) if d.size >= 2 else np.nan


def text_table(frame: pd.DataFrame, formats: dict | None = None) -> str:
    """A plain aligned text table: a header line, a rule of dashes, one line per row.

    Parameters
    ----------
    frame : DataFrame
        The rows to print; numeric columns are right-aligned, the others left-aligned.
    formats : dict, optional
        Column -> format string (``"{:.3g}"``) or callable giving a cell's text. Missing values
        print as ``-``, booleans as ``yes``/``no``.

    Returns
    -------
    str
    """
    formats = formats or {}
    columns = [str(c) for c in frame.columns]
    cells, right = [], []
    for c in frame.columns:
        fmt = formats.get(c, "{}")
        as_text = fmt if callable(fmt) else fmt.format
        numeric = pd.api.types.is_numeric_dtype(frame[c]) and \
            not pd.api.types.is_bool_dtype(frame[c])
        cells.append([_cell(v, as_text) for v in frame[c]])
        right.append(numeric)
    widths = [max([len(h)] + [len(v) for v in col]) for h, col in zip(columns, cells)]

    def line(values):
        return "  ".join(v.rjust(w) if r else v.ljust(w)
                         for v, w, r in zip(values, widths, right)).rstrip()

    rows = [line(columns), "  ".join("-" * w for w in widths)]
    rows += [line(values) for values in zip(*cells)] if len(frame) else []
    return "\n".join(rows)


def _cell(value, as_text) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if value is None or (np.ndim(value) == 0 and pd.isna(value)):
        return "-"
    return as_text(value)


def format_comparison(result: Comparison, max_rows: int | None = 50) -> str:
    """Human-readable report of a :class:`Comparison`.

    Two summary lines (rows compared, how many changed, the rule; cells on one side only), then
    the table with the changed rows first, clipped to ``max_rows`` rows (None: all).
    """
    t = result.table
    n_changed = int(t["changed"].sum())
    level = f"{1 - result.alpha:.0%}"
    lines = [f"compared {len(t)} (cell, metric) rows: {n_changed} changed beyond split noise "
             f"(atol={result.atol:g}, {level} t interval of the paired differences excludes 0, "
             f"or a single split)",
             f"only in a: {len(result.only_a)}, only in b: {len(result.only_b)}"]
    shown = pd.concat([t[t["changed"]], t[~t["changed"]]]).drop(columns="se_delta")
    num, p = "{:.4g}".format, "{:.3g}".format
    formats = {"mean_a": num, "mean_b": num, "delta": "{:+.3g}".format, "ci_low": p,
               "ci_high": p, "p_value": p, "p_holm": p}
    lines += _clipped(shown, max_rows, formats)
    for side, cells in (("a", result.only_a), ("b", result.only_b)):
        if len(cells):
            lines += ["", f"cells only in {side}:"] + _clipped(cells, max_rows)
    return "\n".join(lines)


def _clipped(frame: pd.DataFrame, max_rows: int | None, formats: dict | None = None) -> list:
    """text_table of the first ``max_rows`` rows, and a line counting the rows left out."""
    extra = 0 if max_rows is None else max(len(frame) - max(int(max_rows), 0), 0)
    lines = [text_table(frame.iloc[:len(frame) - extra], formats)]
    return lines + ([f"... {extra} more rows"] if extra else [])


def load_split_results(source, experiment: str | None = None) -> pd.DataFrame:
    """Per-split scores (KEYS, ``split`` and the error / purity scores; timings left out) of a
    results folder (its ``runs/<experiment>/**.json``) or of a CSV written by
    :func:`save_split_results` (a committed reference). ``experiment`` keeps one experiment."""
    from pathlib import Path

    from ..metrics import SCORE_PREFIXES
    from .tables import load_runs

    path = Path(source)
    if path.is_file():
        runs = pd.read_csv(path)
    elif (path / "runs").is_dir():
        top = path / "runs" / experiment if experiment else path / "runs"
        files = sorted(top.rglob("*.json"))
        if not files:
            raise StatsError(f"{top}: no job outputs (*.json) to compare; run the workflow first")
        runs = pd.concat([load_runs([f]).assign(experiment=f.relative_to(path / "runs").parts[0])
                          for f in files], ignore_index=True)
    else:
        raise StatsError(f"{source}: neither a results folder (with runs/) nor a CSV of split results")
    if experiment is not None and "experiment" in runs:
        runs = runs[runs["experiment"] == experiment]
    scores = [c for c in runs.columns if c.startswith(SCORE_PREFIXES)]
    # a cell shared by two experiments ran on the same seeded splits: keep it once
    return runs[KEYS + ["split"] + scores].drop_duplicates(KEYS + ["split"]).reset_index(drop=True)


def save_split_results(runs: pd.DataFrame, path) -> None:
    """Write per-split results as CSV (17 significant digits: a reread compares exactly)."""
    runs.sort_values(KEYS + ["split"]).to_csv(path, index=False, float_format="%.17g")
