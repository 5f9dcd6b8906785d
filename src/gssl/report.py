"""Tables and plots built from the solve jobs' JSON outputs (never from MLflow searches)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

KEYS = ["dataset", "prep", "graph", "method", "protocol"]
ERROR_METRICS = ["error_unlabeled", "error_validation", "error_test", "macro_error_unlabeled"]


def load_runs(paths) -> pd.DataFrame:
    rows = []
    for p in paths:
        rec = json.loads(Path(p).read_text())
        row = {k: rec[k] for k in KEYS + ["split"]}
        row.update(rec["metrics"])
        row["mlflow_run_id"] = rec.get("mlflow_run_id")
        rows.append(row)
    if not rows:
        raise ValueError("no run outputs given")
    return pd.DataFrame(rows)


def aggregate(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean, std and count of every metric per (dataset, prep, graph, method, protocol)."""
    metrics = [c for c in runs.columns if c not in KEYS + ["split", "mlflow_run_id"]
               and pd.api.types.is_numeric_dtype(runs[c])]
    g = runs.groupby(KEYS, sort=False)[metrics]
    out = g.mean().add_suffix("_mean").join(g.std(ddof=0).add_suffix("_std"))
    out["n_splits"] = runs.groupby(KEYS, sort=False).size()
    return out.reset_index()


def headline_metric(table: pd.DataFrame) -> str:
    """The error the papers report: on test points where a protocol has them, else on unlabeled;
    purity when every row is a clustering method (the clustering papers' headline)."""
    if "purity_mean" in table and table["purity_mean"].notna().all():
        return "purity"
    for m in ("error_test", "error_unlabeled"):
        if f"{m}_mean" in table and table[f"{m}_mean"].notna().any():
            return m
    raise ValueError("no error metric in the run outputs")


def _order(values, preferred):
    seen = [v for v in preferred if v in set(values)]
    return seen + [v for v in dict.fromkeys(values) if v not in seen]


def markdown(table: pd.DataFrame, experiment: str, entry: dict, metric: str | None = None) -> str:
    """Paper-style tables: rows methods, columns protocols, cells mean ± std, one per dataset setting."""
    metric = metric or headline_metric(table)
    lines = [f"# Experiment `{experiment}`", ""]
    if entry.get("description"):
        lines += [entry["description"], ""]
    lines += [f"Cells: {metric.replace('_', ' ')} (%), mean ± std over splits (n = number of splits).", ""]
    for (ds, prep, graph), sub in table.groupby(["dataset", "prep", "graph"], sort=False):
        protocols = _order(sub["protocol"], entry.get("protocols", []))
        methods = _order(sub["method"], entry.get("methods", []))
        lines += [f"## {ds} · prep `{prep}` · graph `{graph}`", "",
                  "| method | " + " | ".join(protocols) + " |",
                  "|---|" + "---|" * len(protocols)]
        for m in methods:
            cells = []
            for p in protocols:
                r = sub[(sub["method"] == m) & (sub["protocol"] == p)]
                if r.empty or pd.isna(r[f"{metric}_mean"].iloc[0]):
                    cells.append("–")
                else:
                    r = r.iloc[0]
                    cells.append(f"{r[f'{metric}_mean']:.2f} ± {r[f'{metric}_std']:.2f} "
                                 f"(n={int(r['n_splits'])})")
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def plot(table: pd.DataFrame, out, experiment: str, protocol_labels: dict | None = None,
         metric: str | None = None, fmt: str = "png") -> None:
    """Error vs protocol (labels per class), one panel per dataset setting, error bars = std."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = metric or headline_metric(table)
    groups = list(table.groupby(["dataset", "prep", "graph"], sort=False))
    fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 4), squeeze=False)
    for ax, ((ds, prep, graph), sub) in zip(axes[0], groups):
        protocols = list(dict.fromkeys(sub["protocol"]))
        x = np.arange(len(protocols))
        for method, msub in sub.groupby("method", sort=False):
            msub = msub.set_index("protocol").reindex(protocols)
            ax.errorbar(x, msub[f"{metric}_mean"], yerr=msub[f"{metric}_std"], marker="o",
                        capsize=3, label=method)
        ax.set_xticks(x, [(protocol_labels or {}).get(p, p) for p in protocols])
        ax.set_xlabel("protocol (labels per class)")
        ax.set_ylabel(f"{metric.replace('_', ' ')} (%)")
        ax.set_title(f"{ds} · {prep} · {graph}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"Experiment {experiment}")
    fig.tight_layout()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, format=fmt)
    plt.close(fig)


def protocol_label(spec: dict) -> str:
    kind = spec.get("kind")
    if kind == "labels_per_class":
        return f"{spec['n']}/class"
    if kind == "label_fraction":
        return f"{spec['fraction']:.1%}" if "fraction" in spec else f"{spec['per_class']}/class"
    if kind == "per_class_counts":
        return f"{spec['labeled']}/class"
    return kind or "?"
