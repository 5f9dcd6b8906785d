"""Active-learning results of an experiment (:mod:`gssl.active.protocol`): the accuracy after
every query, per draw (the solve jobs' ``curve`` records), as learning curves with a band over
draws, and tables at chosen query counts with paired tests against random sampling.

Methods group by model (their solver and its params): within a group, each acquisition is
compared with the group's ``random`` method on the same draws (the splits are the protocol's, so
every method starts from the same labeled set): the mean paired difference of accuracy and the
two-sided Wilcoxon signed-rank p-value (:func:`gssl.analysis.stats.wilcoxon_p`), Holm-corrected
over the group's acquisitions at each query count."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .stats import holm, wilcoxon_p

KEYS = ["dataset", "prep", "graph", "method", "protocol"]
BASELINE = "random"


# parameters that do not change a model on a connected graph: left out of its label
QUIET_PARAMS = ("unreachable",)


def _named(name: str, params: dict) -> str:
    """``name`` or ``name(k=v, ...)``: a model's or an acquisition's label in tables and plots."""
    return name + (f"({', '.join(f'{k}={v}' for k, v in sorted(params.items()))})" if params else "")


def load_curves(run_paths, methods: dict) -> pd.DataFrame:
    """One row per (cell, split, round): ``queries``, ``accuracy`` (%), and the method's
    ``model`` (solver and params) and ``acquisition``, from the solve jobs' JSON outputs and the
    config's ``methods``. Blocks without curves (passive protocols) are skipped."""
    rows = []
    for path in run_paths:
        with open(path) as fh:
            block = json.load(fh)
        for rec in block["splits"]:
            curve = rec.get("curve")
            if not curve:
                continue
            m = methods[block["method"]]
            model = _named(m["solver"], {k: v for k, v in (m.get("params") or {}).items()
                                         if k not in QUIET_PARAMS})
            acq = _named(m["active"]["acquisition"], m["active"].get("params") or {})
            for q, a in zip(curve["queries"], curve["accuracy"], strict=True):
                rows.append({**{k: block[k] for k in KEYS}, "split": rec["split"], "model": model,
                             "acquisition": acq, "queries": q, "accuracy": 100.0 * a})
    return pd.DataFrame(rows, columns=[*KEYS, "split", "model", "acquisition", "queries", "accuracy"])


def curve_summary(curves: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and count over draws of the accuracy at each query count."""
    g = curves.groupby([*KEYS, "model", "acquisition", "queries"])["accuracy"]
    return g.agg(mean="mean", std="std", n="count").reset_index()


def budget_table(curves: pd.DataFrame, budgets) -> pd.DataFrame:
    """Per cell and query count in ``budgets``: mean and std of the accuracy over draws, and
    against the same model's random sampling on the same draws: the mean paired difference,
    the Wilcoxon p-value and its Holm correction within (setting, model, query count)."""
    out = []
    setting = ["dataset", "prep", "graph", "protocol", "model"]
    for key, sub in curves[curves["queries"].isin(budgets)].groupby([*setting, "queries"]):
        wide = sub.pivot_table(index="split", columns="acquisition", values="accuracy")
        rows = []
        for acq in wide.columns:
            row = dict(zip([*setting, "queries"], key), acquisition=acq, mean=wide[acq].mean(),
                       std=wide[acq].std(), n=int(wide[acq].notna().sum()))
            if BASELINE in wide.columns and acq != BASELINE:
                pair = wide[[acq, BASELINE]].dropna()
                d = pair[acq] - pair[BASELINE]
                row.update(vs_random=d.mean(), n_paired=len(d), p_value=wilcoxon_p(d) if len(d) else np.nan)
            rows.append(row)
        tested = [r for r in rows if not np.isnan(r.get("p_value", np.nan))]
        for r, p in zip(tested, holm([r["p_value"] for r in tested]) if tested else [], strict=True):
            r["p_holm"] = p
        out += rows
    cols = [*setting, "queries", "acquisition", "mean", "std", "n", "vs_random", "n_paired", "p_value", "p_holm"]
    return pd.DataFrame(out).reindex(columns=cols)


def budget_markdown(table: pd.DataFrame, alpha: float = 0.05) -> str:
    """The budget table as Markdown: one block per setting and model, a row per acquisition, a
    column per query count: accuracy mean ± std, and the paired difference to random sampling
    with ``*`` where Holm's p < alpha (``▲`` better, ``▼`` worse)."""
    lines = []
    for key, sub in table.groupby(["dataset", "prep", "graph", "protocol", "model"], sort=False):
        budgets = sorted(sub["queries"].unique())
        lines += [f"### {key[0]} · {key[4]} · protocol `{key[3]}`", "",
                  "| acquisition | " + " | ".join(f"{b} queries" for b in budgets) + " |",
                  "|---|" + "---|" * len(budgets)]
        for acq, rows in sub.groupby("acquisition", sort=True):
            cells = []
            for b in budgets:
                r = rows[rows["queries"] == b]
                if r.empty:
                    cells.append("–")
                    continue
                r = r.iloc[0]
                cell = f"{r['mean']:.2f} ± {r['std']:.2f}"
                if not np.isnan(r.get("vs_random", np.nan)):
                    sig = r["p_holm"] < alpha
                    mark = ("▲" if r["vs_random"] > 0 else "▼") if sig else ""
                    cell += f" ({r['vs_random']:+.2f}{mark}, p={r['p_holm']:.3g})"
                cells.append(cell)
            lines.append(f"| {acq} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def plot_curves(summary: pd.DataFrame, out, title: str) -> None:
    """Accuracy (%) against the number of queries, one panel per (dataset, model), a line per
    acquisition with its mean over draws and a band of ± one standard deviation."""
    from .plots import _pyplot, _save

    plt = _pyplot()
    panels = list(summary.groupby(["dataset", "prep", "graph", "protocol", "model"], sort=False))
    n = max(len(panels), 1)
    cols = min(n, 2)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.2 * rows), squeeze=False)
    for ax, (key, sub) in zip(axes.ravel(), panels):
        for acq, s in sub.groupby("acquisition", sort=True):
            s = s.sort_values("queries")
            style = {"color": "black", "linestyle": "--"} if acq == BASELINE else {}
            line, = ax.plot(s["queries"], s["mean"], label=acq, linewidth=1.4, **style)
            ax.fill_between(s["queries"], s["mean"] - s["std"].fillna(0), s["mean"] + s["std"].fillna(0),
                            color=line.get_color(), alpha=0.15, linewidth=0)
        ndraws = int(sub["n"].max())
        ax.set_title(f"{key[0]} · {key[4]} ({ndraws} draws)", fontsize=10)
        ax.set_xlabel("labels queried after the start set")
        ax.set_ylabel("accuracy on the unlabeled points (%)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    fig.suptitle(title + "  (mean over draws, band: ± 1 std)", fontsize=11)
    _save(fig, out)
