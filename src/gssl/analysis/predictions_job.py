"""An experiment's predictions by name, in one job (rule predictions; the solve jobs'
``.predictions.npz`` read once, each dataset and splits file once):

- per cell, ``results/predictions/<experiment>/<dataset>/<prep>/<graph>/<method>/<protocol>.csv``:
  each split's predicted class for its scored points, with the dataset's ids and the true class
  (:func:`gssl.analysis.predictions.split_predictions`);
- per cell of a protocol of kind predict, ``<protocol>.unlabeled.csv`` instead: every row without
  a label, its predicted class and the class scores (the method fitted on every labeled row);
- ``results/tables/<experiment>.confusion.csv`` (long form) and ``.confusion.html`` (the report's
  page): the confusion matrix and per-class error of every scoring cell.

Paths: :mod:`gssl.pipeline.paths` (PREDICTIONS, UNLABELED_PREDICTIONS)."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from ..pipeline import paths
from ..store.h5io import atomic_path, atomic_write_text
from .predictions import (
    confusion,
    confusion_html,
    confusion_long,
    split_predictions,
    unlabeled_predictions,
)


def read_job_predictions(npz_paths: list) -> dict:
    """A cell's solve jobs' predictions joined in split order: ``splits``, ``predictions``,
    ``clusterer`` and (protocol predict) ``scores``."""
    parts = []
    for path in npz_paths:
        with np.load(path, allow_pickle=False) as f:
            parts.append({k: f[k] for k in f.files})
    order = np.argsort(np.concatenate([p["splits"] for p in parts]), kind="stable")
    out = {"splits": np.concatenate([p["splits"] for p in parts])[order],
           "predictions": np.concatenate([p["predictions"] for p in parts])[order],
           "clusterer": any(bool(p["clusterer"]) for p in parts)}
    if all("scores" in p for p in parts):
        out["scores"] = np.concatenate([p["scores"] for p in parts])[order]
    return out


def predictions_job(experiment: str, cells: list[dict], out, log) -> None:
    """Write the per-cell predictions under ``out.folder`` (``results/predictions/<experiment>``)
    and ``out.csv``, ``out.html`` (the confusion tables). ``cells``: per cell its keys (dataset, prep, graph,
    method, protocol), ``predict`` (protocol kind predict), ``jobs`` (its solve jobs'
    ``.predictions.npz``), ``data`` (the dataset file) and ``splits`` (the splits file)."""
    from pathlib import Path

    from ..datasets import load_dataset
    from ..splits import load_splits

    results = Path(out.folder).parents[1]  # paths.PREDICTIONS_FOLDER under the results folder
    datasets = functools.cache(load_dataset)
    roles_of = functools.cache(load_splits)
    long, matrices, skipped = [], [], []
    for cell in cells:
        keys = {k: cell[k] for k in ("dataset", "prep", "graph", "method", "protocol")}
        ds = datasets(cell["data"])
        roles = roles_of(cell["splits"])
        if roles.shape[1] != ds.n_samples:
            raise ValueError(f"{cell['splits']} has {roles.shape[1]} points, {cell['data']} "
                             f"{ds.n_samples}: rebuild them (snakemake --forcerun splits)")
        pred = read_job_predictions(cell["jobs"])
        ids, classes = ds.point_ids(), ds.classes
        if cell["predict"]:
            table = unlabeled_predictions(ids, ds.id_name, classes, ds.y, pred["predictions"][0],
                                          pred.get("scores", [None])[0], pred["clusterer"])
            target = paths.path(results, paths.UNLABELED_PREDICTIONS, experiment=experiment, **keys)
        else:
            table = split_predictions(ids, ds.id_name, classes, ds.y, roles, pred["splits"],
                                      pred["predictions"], pred["clusterer"])
            target = paths.path(results, paths.PREDICTIONS, experiment=experiment, **keys)
            if pred["clusterer"]:  # cluster ids are no classes: no confusion of classes
                skipped.append(f"{keys['method']} on {keys['dataset']} ({keys['protocol']}): a "
                               f"clustering method, whose labels are cluster ids (its table "
                               f"names them 'cluster k'), has no confusion matrix")
            else:
                counts = confusion(ds.y, roles, pred["splits"], pred["predictions"], ds.n_classes)
                matrices.append((keys, counts, classes))
                long.append(confusion_long(keys, counts, classes))
        with atomic_path(target) as tmp:
            table.to_csv(tmp, index=False, float_format="%.6g")
        log.info("%s: %d rows", target, len(table))
    columns = ["dataset", "prep", "graph", "method", "protocol", "true", "predicted", "count", "n", "class_error"]
    with atomic_path(out.csv) as tmp:
        (pd.concat(long, ignore_index=True) if long else pd.DataFrame(columns=columns)).to_csv(
            tmp, index=False, float_format="%.6g")
    atomic_write_text(out.html, confusion_html(matrices, experiment, skipped))
    log.info("%d cells: %d confusion matrices", len(cells), len(matrices))
