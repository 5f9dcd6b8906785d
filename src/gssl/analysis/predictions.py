"""Predictions by name: per cell, each split's predicted class for its scored points; per cell the
confusion matrix and per-class error; for protocol predict, every row without a label with its
predicted class and class scores. Class names and the dataset's ids (a file's ``id:`` column, or
the row number), never integer codes.

The builders take arrays (the dataset's ids, class names and labels, the split roles, a solve
job's label codes) and return pandas tables; :mod:`.predictions_job` reads the files and writes
them (rule predictions)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..splits import TEST, UNLABELED, VALIDATION

SCORED = (UNLABELED, VALIDATION, TEST)  # the roles a split scores
ABSTAINED = "(abstained)"  # a method that gives a node no label (transduction -1)


def predicted_names(codes, classes, clusterer: bool = False) -> np.ndarray:
    """Label codes as names: ``classes[code]``, ``cluster <k>`` for a clustering method (its
    labels are cluster ids, not classes), :data:`ABSTAINED` for -1."""
    codes = np.asarray(codes, dtype=np.int64)
    if clusterer:
        names = np.char.add("cluster ", codes.astype(str)).astype(object)
    else:
        classes = np.asarray(classes).astype(str)
        if codes.size and codes.max() >= classes.size:
            raise ValueError(f"label code {int(codes.max())} out of range for {classes.size} classes")
        names = classes[np.maximum(codes, 0)].astype(object)
    names[codes < 0] = ABSTAINED
    return names


def split_predictions(ids, id_name: str, classes, y, roles, splits, predictions,
                      clusterer: bool = False) -> pd.DataFrame:
    """One row per point scored in at least one of ``splits`` (roles unlabeled, validation or
    test), in dataset order: its id (column ``id_name``), its true class name (``true``), the
    predicted class name in each split where it was scored (``split_<s>``; empty where it was
    labeled or unused in that split), and ``n_scored`` / ``n_wrong`` over those splits.

    ``roles``: the splits file's (n_splits, n) roles; ``predictions``: (len(splits), n) codes of
    the same splits (a solve job's)."""
    y = np.asarray(y)
    roles = np.asarray(roles)[np.asarray(splits, dtype=np.int64)]
    predictions = np.asarray(predictions)
    if predictions.shape != roles.shape:
        raise ValueError(f"predictions of shape {predictions.shape} for roles {roles.shape}")
    scored = np.isin(roles, SCORED)
    rows = np.flatnonzero(scored.any(axis=0))
    table = {id_name: np.asarray(ids).astype(str)[rows],
             "true": np.asarray(classes).astype(str)[y[rows]]}
    for k, s in enumerate(splits):
        col = np.full(rows.size, "", dtype=object)
        hit = scored[k, rows]
        col[hit] = predicted_names(predictions[k, rows[hit]], classes, clusterer)
        table[f"split_{int(s)}"] = col
    wrong = scored & (predictions != y[None, :])
    table["n_scored"] = scored[:, rows].sum(axis=0)
    table["n_wrong"] = wrong[:, rows].sum(axis=0)
    return pd.DataFrame(table)


def headline_points(roles) -> np.ndarray:
    """Per split, the points its headline error scores: the test points where it has any, else
    the unlabeled ones (gssl.metrics.headline_score's choice), as a boolean (n_splits, n) mask."""
    roles = np.asarray(roles)
    has_test = (roles == TEST).any(axis=1, keepdims=True)
    return np.where(has_test, roles == TEST, roles == UNLABELED)


def confusion(y, roles, splits, predictions, n_classes: int) -> np.ndarray:
    """Counts (C, C + 1), pooled over the splits: row = true class, column = predicted class,
    the last column the points a method left without a label; over each split's headline points
    (:func:`headline_points`). Each row sums to the times that class was scored."""
    y = np.asarray(y)
    mask = headline_points(np.asarray(roles)[np.asarray(splits, dtype=np.int64)])
    predictions = np.asarray(predictions)
    true = np.broadcast_to(y, mask.shape)[mask]
    pred = predictions[mask]
    pred = np.where(pred < 0, n_classes, pred)
    counts = np.zeros((n_classes, n_classes + 1), dtype=np.int64)
    np.add.at(counts, (true, pred), 1)
    return counts


def per_class_error(counts: np.ndarray, classes) -> pd.DataFrame:
    """From :func:`confusion`'s counts: per class its name, ``n`` (scored points, pooled over the
    splits), ``errors`` (scored as another class or left without a label) and ``error`` (%; NaN
    where the class was never scored)."""
    n = counts.sum(axis=1)
    correct = np.diag(counts[:, :counts.shape[0]])
    with np.errstate(invalid="ignore", divide="ignore"):
        error = np.where(n > 0, 100.0 * (n - correct) / n, np.nan)
    return pd.DataFrame({"class": np.asarray(classes).astype(str), "n": n, "errors": n - correct,
                         "error": error})


def confusion_long(cell: dict, counts: np.ndarray, classes) -> pd.DataFrame:
    """A cell's confusion counts in long form: the cell's keys, ``true``, ``predicted`` (a class
    name or :data:`ABSTAINED`), ``count``, and the true class's ``n`` and ``class_error`` (%)."""
    classes = np.asarray(classes).astype(str)
    errors = per_class_error(counts, classes)
    predicted = [*classes, ABSTAINED]
    rows = [{**cell, "true": t, "predicted": predicted[j], "count": int(counts[i, j]),
             "n": int(errors["n"][i]), "class_error": errors["error"][i]}
            for i, t in enumerate(classes) for j in range(len(predicted))
            if j < len(classes) or counts[i, j]]
    return pd.DataFrame(rows)


def unlabeled_predictions(ids, id_name: str, classes, y, prediction, scores=None,
                          clusterer: bool = False) -> pd.DataFrame:
    """Protocol predict: one row per point without a label (y = -1), in dataset order: its id,
    its ``predicted`` class name and, where the method gives class scores, ``score_<class>`` for
    each class (the method's own scores, in its own scale; the predicted class is their arg-max
    unless the method decides labels otherwise)."""
    y = np.asarray(y)
    rows = np.flatnonzero(y < 0)
    classes = np.asarray(classes).astype(str)
    table = {id_name: np.asarray(ids).astype(str)[rows],
             "predicted": predicted_names(np.asarray(prediction)[rows], classes, clusterer)}
    if scores is not None:
        scores = np.asarray(scores)
        if scores.shape != (y.size, classes.size):
            raise ValueError(f"class scores of shape {scores.shape}, expected {(y.size, classes.size)}")
        for c, name in enumerate(classes):
            table[f"score_{name}"] = scores[rows, c]
    return pd.DataFrame(table)


CONFUSION_LEGEND = ("Per cell, the confusion matrix pooled over its splits: a row per true class, a "
                    "column per predicted class, each count the times a point of that class was "
                    "predicted so; over each split's headline points (its test points where it has "
                    "any, else its unlabeled points). n: the points of the class scored, over all "
                    "splits; error: the share of them predicted as another class (or left without "
                    "a label), in %. The diagonal (correct) is in bold.")


def confusion_html(cells: list[tuple[dict, np.ndarray, np.ndarray]], experiment: str,
                   notes: list[str] = ()) -> str:
    """The confusion matrices and per-class errors of an experiment's cells as one styled HTML
    page (the report's entry, in the style of the results tables): ``cells`` holds (the cell's
    keys, its :func:`confusion` counts, its class names); ``notes``: lines shown under the legend
    (e.g. the cells without a matrix, and why)."""
    from .report import _escape as e
    from .report import _html_head, _html_page

    out = _html_head(f"Confusion matrices of experiment {experiment}") + [
        f"<h1>Confusion matrices of experiment <code>{e(experiment)}</code></h1>",
        f'<p class="legend">{e(CONFUSION_LEGEND)}</p>']
    out += [f'<p class="legend">{e(note)}</p>' for note in notes]
    for cell, counts, classes in cells:
        classes = np.asarray(classes).astype(str)
        errors = per_class_error(counts, classes)
        abstained = bool(counts[:, -1].any())
        heads = [*classes, *([ABSTAINED] if abstained else [])]
        out += ["<section>", (f"<h2>{e(cell['dataset'])} &#183; prep <code>{e(cell['prep'])}</code> &#183; "
                              f"graph <code>{e(cell['graph'])}</code> &#183; <code>{e(cell['method'])}</code> "
                              f"&#183; protocol <code>{e(cell['protocol'])}</code></h2>"),
                '<table class="stats">',
                ('<thead><tr><th scope="col" class="method">true / predicted</th>'
                 + "".join(f'<th scope="col">{e(h)}</th>' for h in heads)
                 + '<th scope="col">n</th><th scope="col">error %</th></tr></thead>'), "<tbody>"]
        for i, name in enumerate(classes):
            tds = "".join((f'<td class="best">{int(counts[i, j])}</td>' if i == j
                           else f"<td>{int(counts[i, j])}</td>") for j in range(len(heads)))
            err = errors["error"][i]
            shown = "&#8211;" if np.isnan(err) else f"{err:.1f}"
            out.append(f'<tr><th scope="row">{e(name)}</th>{tds}<td>{int(errors["n"][i])}</td>'
                       f"<td>{shown}</td></tr>")
        out += ["</tbody>", "</table>", "</section>"]
    return _html_page(out)
