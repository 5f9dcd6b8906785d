"""Classification and clustering scores, all in percent (losses excepted)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# the scores that read labels (what the tables report, selection refuses to pick a draw by, ...)
SCORE_PREFIXES = ("error_", "macro_error_", "purity", "clustering_accuracy")
HIGHER_IS_BETTER = ("purity", "clustering_accuracy")  # score prefixes; the other scores are errors


def _pair(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    y_true, y_pred = np.asarray(y_true).ravel(), np.asarray(y_pred).ravel()
    if y_true.shape != y_pred.shape or y_true.size == 0:
        raise ValueError(f"y_true and y_pred must be non-empty and of equal length, got "
                         f"{y_true.size} and {y_pred.size}")
    return y_true, y_pred


def contingency(y_true, y_pred) -> np.ndarray:
    """Counts (n_true_classes, n_pred_labels) of points per (true class, predicted label)."""
    y_true, y_pred = _pair(y_true, y_pred)
    _, t = np.unique(y_true, return_inverse=True)
    _, p = np.unique(y_pred, return_inverse=True)
    ones = np.ones(t.size, dtype=np.int64)
    return sp.coo_matrix((ones, (t.ravel(), p.ravel()))).toarray()


def error_rate(y_true, y_pred) -> float:
    y_true, y_pred = _pair(y_true, y_pred)
    return 100.0 * float(np.mean(y_true != y_pred))


def chance_error(y_true) -> float:
    """The error of always answering the largest class of y_true, 100 (1 - its share) %: the
    chance level of error_rate on these points (a method at or above it learned nothing)."""
    _, counts = np.unique(np.asarray(y_true).ravel(), return_counts=True)
    if counts.size == 0:
        raise ValueError("y_true must be non-empty")
    return 100.0 * (1.0 - counts.max() / counts.sum())


def macro_error(y_true, y_pred) -> float:
    """Mean over the classes of y_true of the per-class error rate (= 100 - balanced accuracy)."""
    y_true, y_pred = _pair(y_true, y_pred)
    classes, t = np.unique(y_true, return_inverse=True)
    wrong = np.bincount(t.ravel(), weights=(y_true != y_pred), minlength=classes.size)
    return 100.0 * float(np.mean(wrong / np.bincount(t.ravel(), minlength=classes.size)))


def squared_hinge(y_true, scores, classes) -> float:
    """Mean over points of the one-vs-all squared hinge loss of class scores:
    sum_c max(0, 1 - t_c f_c)^2 with t_c = +1 for the point's class and -1 otherwise. A continuous
    companion of the error for model selection on a few dozen points, where errors tie."""
    scores = np.asarray(scores, dtype=np.float64)
    y_true = np.asarray(y_true).ravel()
    if scores.ndim != 2 or scores.shape != (y_true.size, np.asarray(classes).size):
        raise ValueError(f"scores must be (n_points, n_classes) = ({y_true.size}, "
                         f"{np.asarray(classes).size}), got {scores.shape}")
    t = np.where(y_true[:, None] == np.asarray(classes)[None, :], 1.0, -1.0)
    return float(np.mean(np.sum(np.maximum(0.0, 1.0 - t * scores) ** 2, axis=1)))


def purity(y_true, y_pred) -> float:
    """Share of points whose cluster's majority class is their class."""
    return 100.0 * float(contingency(y_true, y_pred).max(axis=0).sum()) / np.size(y_true)


def clustering_accuracy(y_true, y_pred) -> float:
    """Accuracy under the best one-to-one map of clusters to classes (Hungarian algorithm)."""
    from scipy.optimize import linear_sum_assignment  # here: scipy.optimize costs every importer 0.3 s

    table = contingency(y_true, y_pred)
    rows, cols = linear_sum_assignment(table, maximize=True)
    return 100.0 * float(table[rows, cols].sum()) / np.size(y_true)


def summary(values) -> dict[str, float]:
    """The statistics of one score over splits, as every table reports them: ``mean``, ``std``
    (ddof 0) and ``sem`` (standard error of the mean, ddof 1; NaN for fewer than 2 values)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return {"mean": float("nan"), "std": float("nan"), "sem": float("nan")}
    return {"mean": float(v.mean()), "std": float(v.std()),
            "sem": float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")}


def headline_score(clustering: bool, test_points: bool) -> str:
    """The score an experiment's tables lead with: purity for clustering methods (the clustering
    papers' headline), else the error on test points where the protocols have them, else the
    error on the unlabeled points."""
    if clustering:
        return "purity"
    return "error_test" if test_points else "error_unlabeled"


def split_statistics(metrics: list[dict]) -> dict[str, float]:
    """A cell's statistics over its splits: ``<score>_mean``, ``_std`` (ddof 0, as the tables) and
    ``_sem`` (standard error of the mean, ddof 1) of every error / purity score, the mean fit time,
    ``n_splits`` and the flags' statistics (:func:`_flag_statistics`). Scores missing from some
    splits are summarised over the splits that have them."""
    out: dict[str, float] = {"n_splits": float(len(metrics))}
    names = dict.fromkeys(k for m in metrics for k in m if k.startswith(SCORE_PREFIXES))
    for name in names:
        stats = summary([m[name] for m in metrics if name in m])
        out.update({f"{name}_{stat}": value for stat, value in stats.items()})
    if metrics and all("fit_seconds" in m for m in metrics):
        out["fit_seconds_mean"] = float(np.mean([m["fit_seconds"] for m in metrics]))
    return {**out, **_flag_statistics(metrics)}


def _flag_statistics(metrics: list[dict]) -> dict[str, float]:
    """What the tables flag a cell by: ``n_not_converged`` and ``not_converged_share`` (splits whose
    solver stopped on its iteration limit, metric ``converged`` 0) and ``chance_error_<set>_mean``
    (the error at chance of the scored points, :func:`chance_error`)."""
    out: dict[str, float] = {}
    converged = [m["converged"] for m in metrics if "converged" in m]
    if converged:
        out["n_not_converged"] = float(sum(not c for c in converged))
        out["not_converged_share"] = out["n_not_converged"] / len(converged)
    for name in dict.fromkeys(k for m in metrics for k in m if k.startswith("chance_error_")):
        out[f"{name}_mean"] = float(np.mean([m[name] for m in metrics if name in m]))
    return out
