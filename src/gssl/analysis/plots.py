"""Every plot of gssl, on one matplotlib set-up (:func:`_pyplot`; matplotlib is imported there:
the tables and statistics never need it): the error against the protocol, the statistics'
critical-difference diagram, box plots per cell and rank heat-map, and a selection's grid.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from ..metrics import HIGHER_IS_BETTER
from .ranks import cd_groups, cd_sentence
from .stats import SETTING, StatsError, check_runs, higher_is_better
from .tables import headline_metric

BEST_COLOR, OTHER_COLOR = "#e8913a", "#b9cde5"  # orange best box among light blue ones


def _pyplot():
    """matplotlib.pyplot on the Agg backend (files only: works without a display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, out, *, dpi: int = 110, fmt: str = "png", tight: bool = True) -> None:
    """Write ``fig`` to ``out`` (parent folders created) and close it; ``tight`` crops the
    figure to what it draws."""
    plt = _pyplot()
    try:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        # the format given: out may be a .tmp name
        fig.savefig(out, dpi=dpi, bbox_inches="tight" if tight else None, format=fmt)
    finally:
        plt.close(fig)


def plot_cd_diagram(avg_ranks: pd.Series, cd: float, out, title: str | None = None) -> None:
    """Critical-difference diagram of average ranks (Demšar 2006, figure 1).

    A rank axis 1..k on top, best (rank 1) on the left; each method hangs from its average rank
    by an elbow line to its label (the better half on the left, the rest on the right). The
    critical difference is a scale bar above the axis; thick bars below the axis join the groups
    of :func:`gssl.analysis.ranks.cd_groups`, methods not significantly different.

    Parameters
    ----------
    avg_ranks : Series
        Average rank per method (index: method names), in any order.
    cd : float
        Critical difference, e.g. :func:`gssl.analysis.ranks.nemenyi_cd`.
    out : str or Path
        Image file to write (format from the suffix).
    title : str, optional
        Drawn above the diagram.
    """
    groups = cd_groups(avg_ranks, cd)  # also checks avg_ranks and cd
    r = avg_ranks.sort_values(kind="stable")
    k = len(r)
    if k < 2:
        raise StatsError(f"a critical-difference diagram needs at least 2 methods, got {k}")
    plt = _pyplot()
    labels = [f"{name} ({rank:.2f})" for name, rank in r.items()]
    n_left = (k + 1) // 2
    # everything in inches (axes = whole figure, equal units) so text never scales with k
    unit = min(1.0, max(0.55, 7.0 / (k - 1)))  # inches per rank
    side = 0.45 + 0.075 * max(len(s) for s in labels)  # room for the labels of one side
    width = 2 * side + (k - 1) * unit

    def x(rank):
        return side + (rank - 1) * unit

    # the CD's label in words, wrapped to the figure (about 13 characters per inch at 10 pt)
    label = cd_sentence(cd, k) if cd > k - 1 else f"critical difference {cd:.2f}"
    label = textwrap.fill(label, int(width * 13), break_long_words=False)
    top = (0.45 if title else 0.1) + 0.17 * label.count("\n")  # room for its extra lines
    y_cd, y_axis = top + 0.3, top + 0.85
    y_groups = y_axis + 0.22 + 0.14 * np.arange(len(groups))
    y_rows = y_axis + 0.22 + 0.14 * len(groups) + 0.15 + 0.27 * np.arange(max(n_left, k - n_left))
    height = y_rows[-1] + 0.2
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.axis("off")
    if title:
        ax.text(width / 2, 0.1, title, ha="center", va="top", fontsize=12, weight="bold")
    # rank axis with integer ticks and shorter half ticks
    ax.plot([x(1), x(k)], [y_axis, y_axis], color="black", lw=1.2)
    for t in np.arange(1, k + 0.5, 0.5):
        ax.plot([x(t), x(t)], [y_axis, y_axis - (0.1 if t == int(t) else 0.05)], color="black",
                lw=1.2)
        if t == int(t):
            ax.text(x(t), y_axis - 0.13, f"{int(t)}", ha="center", va="bottom", fontsize=10)
    # CD scale bar: clipped at the axis end; its label then says that no pair differs
    shown = min(cd, k - 1)
    ax.plot([x(1), x(1 + shown)], [y_cd, y_cd], color="black", lw=1.5)
    for end in (1, 1 + shown):
        ax.plot([x(end), x(end)], [y_cd - 0.05, y_cd + 0.05], color="black", lw=1.5)
    ax.text(x(1 + shown / 2), y_cd - 0.08, label, ha="center", va="bottom", fontsize=10)
    # methods: the better half to the left (best nearest the axis), the rest to the right
    for i, rank in enumerate(r.to_numpy()):
        left = i < n_left
        y = y_rows[i] if left else y_rows[k - 1 - i]
        end = x(1) - 0.25 if left else x(k) + 0.25
        ax.plot([x(rank), x(rank), end], [y_axis, y, y], color="0.25", lw=1)
        ax.text(end + (-0.06 if left else 0.06), y, labels[i], ha="right" if left else "left",
                va="center", fontsize=10)
    # one row per group: groups overlap in rank, so sharing rows would merge their bars
    for y, group in zip(y_groups, groups):
        lo, hi = r[group[0]], r[group[-1]]
        ax.plot([x(lo) - 0.06, x(hi) + 0.06], [y, y], color="black", lw=4,
                solid_capstyle="round")
    _save(fig, out)


def plot_boxes(runs: pd.DataFrame, metric: str, out) -> None:
    """Box plot of the per-split ``metric`` of every method, one panel per setting.

    The split values are drawn jittered over the boxes; the box of the best method by mean
    (direction from :func:`gssl.analysis.stats.higher_is_better`) is highlighted.

    Parameters
    ----------
    runs : DataFrame
        One row per (cell, split) with :data:`gssl.analysis.stats.KEYS`, ``split`` and ``metric``.
    metric : str
        Numeric metric column (a percentage, as gssl's metrics are); its name labels the y axes.
    out : str or Path
        Image file to write.
    """
    check_runs(runs, [metric])
    plt = _pyplot()
    settings = list(runs.groupby(SETTING, sort=False))
    n_methods = max(sub["method"].nunique() for _, sub in settings)
    ncols = min(4, len(settings))
    nrows = -(-len(settings) // ncols)
    panel_w = max(3.2, 0.5 * n_methods + 1.2)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_w * ncols, 3.9 * nrows), squeeze=False)
    rng = np.random.default_rng(0)  # jitter only: the same picture on every call
    hib = higher_is_better(metric)
    for ax, (key, sub) in zip(axes.flat, settings):
        methods = list(dict.fromkeys(sub["method"]))
        data = [sub.loc[sub["method"] == m, metric].dropna().to_numpy(float) for m in methods]
        means = np.array([d.mean() if d.size else np.nan for d in data])
        best = None
        if not np.isnan(means).all():
            best = int(np.nanargmax(means) if hib else np.nanargmin(means))
        boxes = ax.boxplot(data, patch_artist=True, widths=0.6, showfliers=False,
                           medianprops={"color": "black"})
        for i, box in enumerate(boxes["boxes"]):
            box.set_facecolor(BEST_COLOR if i == best else OTHER_COLOR)
        for i, d in enumerate(data, start=1):
            ax.scatter(i + rng.uniform(-0.17, 0.17, d.size), d, s=9, color="0.2", alpha=0.6,
                       zorder=3, linewidths=0)
        ax.set_xticks(range(1, len(methods) + 1), methods, rotation=35, ha="right",
                      rotation_mode="anchor", fontsize=9)
        ax.set_ylabel(f"{metric.replace('_', ' ')} (%)")  # (gssl's metrics are percentages)
        title = " · ".join(str(v) for v in key)
        # about 13 characters per inch at fontsize 10; keep names whole, break at the " · "
        ax.set_title(textwrap.fill(title, width=int(panel_w * 13), break_long_words=False,
                                   break_on_hyphens=False), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes.flat[len(settings):]:
        ax.set_visible(False)
    better = "higher" if hib else "lower"
    fig.suptitle(f"{metric} per split; orange: best mean ({better} is better)", fontsize=11)
    fig.tight_layout()
    _save(fig, out)


def plot_rank_heatmap(ranks: pd.DataFrame, out) -> None:
    """Annotated heat-map of the rank of every method (columns) in every setting (rows).

    Methods are sorted by average rank, best first; a last row gives the mean rank.

    Parameters
    ----------
    ranks : DataFrame
        Ranks per setting and method, e.g. ``average_ranks(scores).ranks``; the index may be a
        MultiIndex (levels joined with " · ").
    out : str or Path
        Image file to write.
    """
    if not isinstance(ranks, pd.DataFrame) or ranks.empty:
        raise StatsError("ranks must be a non-empty DataFrame of ranks (rows: settings, "
                         "columns: methods), e.g. average_ranks(scores).ranks")
    try:
        values = ranks.astype(float)
    except (TypeError, ValueError) as err:
        raise StatsError(f"ranks must be numeric: {err}") from None
    plt = _pyplot()
    order = values.mean().sort_values(kind="stable").index
    values = values[order]
    rows = [" · ".join(map(str, i)) if isinstance(i, tuple) else str(i) for i in values.index]
    matrix = np.vstack([values.to_numpy(), values.mean().to_numpy()])
    n, k = matrix.shape
    fig, ax = plt.subplots(figsize=(1.5 + 0.72 * k, 1.2 + 0.36 * n))
    low, high = 1.0, max(float(k), np.nanmax(matrix))
    cmap = plt.get_cmap("RdBu_r")  # blue = good (low rank), red = bad; no red-green
    im = ax.imshow(matrix, cmap=cmap, vmin=low, vmax=high, aspect="auto")
    for (i, j), v in np.ndenumerate(matrix):
        if np.isnan(v):
            continue
        text = f"{v:.2f}" if i == n - 1 else (f"{v:.0f}" if v == int(v) else f"{v:.1f}")
        strong = abs((v - low) / (high - low) - 0.5) > 0.3  # dark end of the colormap
        ax.text(j, i, text, ha="center", va="center", fontsize=8,
                color="white" if strong else "black", weight="bold" if i == n - 1 else None)
    ax.axhline(n - 1.5, color="black", lw=2)  # sets the mean row apart
    ax.set_xticks(range(k), [str(c) for c in order], rotation=35, ha="right",
                  rotation_mode="anchor")
    ax.set_yticks(range(n), rows + ["mean rank"])
    ax.get_yticklabels()[-1].set_fontweight("bold")
    ax.set_title("rank per setting (1 = best), methods by mean rank", fontsize=11)
    fig.colorbar(im, ax=ax, label="rank", fraction=0.04, pad=0.02)
    _save(fig, out)


def plot_note(out, text: str) -> None:
    """A figure that only says why there is no plot (e.g. one method: nothing to rank), so that a
    report keeps its layout and the reader learns the reason."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 1.6))
    ax.axis("off")
    ax.text(0.5, 0.5, textwrap.fill(text, 70), ha="center", va="center", fontsize=11)
    _save(fig, out)


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
    plt = _pyplot()
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
    _save(fig, out, fmt=fmt, tight=False)


def plot_grid(table: pd.DataFrame, keys: list[str], metric: str, out, title: str) -> None:
    """Per grid parameter: the best mean metric over the other parameters at each of its values."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(keys), figsize=(max(6.0, 4.4 * len(keys)), 3.8), squeeze=False)
    higher = metric.startswith(HIGHER_IS_BETTER)
    for ax, key in zip(axes[0], keys):
        labels = table[key].map(lambda v: json.dumps(v) if not isinstance(v, str) else v)
        values = list(dict.fromkeys(labels))  # null / NaN values are groups like any other
        best, sem = [], []
        for v in values:
            sub = table.loc[labels == v]
            row = sub.iloc[int(np.nanargmax(sub[f"{metric}_mean"]) if higher
                               else np.nanargmin(sub[f"{metric}_mean"]))]
            best.append(row[f"{metric}_mean"])
            sem.append(row[f"{metric}_sem"])
        x = np.arange(len(values))
        ax.errorbar(x, best, yerr=np.nan_to_num(sem), marker="o", capsize=3)
        ax.set_xticks(x, values, rotation=30)
        ax.set_xlabel(key)
        ax.set_ylabel(f"{metric.replace('_', ' ')} (%)")
        ax.set_title("best over the other parameters", fontsize=8, color="0.35")
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    _save(fig, out, dpi=100, tight=False)


def plot_loss_curve(losses: dict[str, np.ndarray], out, title: str) -> None:
    """The training loss per epoch of each learned step of a preprocessing chain (one line per
    step, named by it), on a log scale when it spans more than a decade."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    spread = []
    for name, curve in losses.items():
        curve = np.asarray(curve, dtype=float)
        ax.plot(np.arange(1, curve.size + 1), curve, marker="o" if curve.size <= 30 else None,
                markersize=3, label=name)
        spread.append(curve[np.isfinite(curve)])
    values = np.concatenate(spread) if spread else np.array([])
    if values.size and values.min() > 0 and values.max() / values.min() > 10:
        ax.set_yscale("log")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss per point")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if len(losses) > 1:
        ax.legend(fontsize=8)
    _save(fig, out)
