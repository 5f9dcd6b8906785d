"""Where each stage's files lie under the results folder: every path template spelled once.

A template is relative to the results folder and names its parts as Snakemake wildcards. The
rules take :func:`pattern` (wildcards kept: Snakemake fills them in); code that knows the parts
(``gssl verify``, the logging job, the plan of an experiment's outputs) takes :func:`path`.
"""

from __future__ import annotations

DATA = "data/{dataset}.h5"
FEATURES = "features/{dataset}/{prep}.h5"
GRAPH = "graphs/{dataset}/{prep}/{graph}.h5"
SPLITS = "splits/{dataset}/{protocol}.h5"

# one solve (runs/) or grid (selection/) job: a cell, or a block of its splits; {suffix} .json for
# its output, .mlflow.json.gz for the runs it leaves to log, .predictions.npz (solve jobs) for each
# split's label codes
JOB = "{experiment}/{dataset}/{prep}/{graph}/{method}/{protocol}/splits{first}-{last}"
RUNS = "runs/" + JOB + "{suffix}"
SELECTION = "selection/" + JOB + "{suffix}"
# the selection stage's outputs for one method: .json (the choice), .grid.json, .grid.csv, ...
SELECTED = "selected/{experiment}/{dataset}/{prep}/{graph}/{method}{suffix}"
TABLES = "tables/{experiment}{suffix}"  # .csv, .md, .html, .stats.csv, ...
PLOT = "plots/{experiment}/{plot}.png"
LOSS_PLOT = "plots/learned/{dataset}/{prep}.loss.png"  # a chain that trains a network: its loss
MLFLOW_SUMMARY = "mlflow/{experiment}.summary.json"
# an experiment's predictions by name (rule predictions): per cell each split's predicted class of
# its scored points, or (protocol kind predict) each row without a label, its predicted class and
# class scores
PREDICTIONS_FOLDER = "predictions/{experiment}"
PREDICTIONS = PREDICTIONS_FOLDER + "/{dataset}/{prep}/{graph}/{method}/{protocol}.csv"
UNLABELED_PREDICTIONS = PREDICTIONS_FOLDER + "/{dataset}/{prep}/{graph}/{method}/{protocol}.unlabeled.csv"
# what planning knows of each source: file dataset's files, kept while they are unchanged
# (gssl.datasets.file_facts: labels, class names, feature count, sha256; never an output of a job)
PLANNING = "planning"


def pattern(results, template: str, **parts) -> str:
    """``template`` under ``results``, with ``parts`` filled in and every other wildcard kept
    (``{experiment}`` stays ``{experiment}``) for a rule's input or output."""
    class Kept(dict):
        def __missing__(self, key):
            return "{" + key + "}"

    return f"{results}/" + template.format_map(Kept(parts))


def beside(folder: str, template: str, suffix: str) -> str:
    """The twin of ``template`` (a cache file's, or :data:`JOB`) under ``folder``, ending in
    ``suffix``: the log or benchmark of the job that writes it (``logs/graphs/...log``)."""
    return f"{folder}/{template.removesuffix('.h5')}{suffix}"


def path(results, template: str, **parts) -> str:
    """``template`` under ``results`` with every part filled in (a missing one raises KeyError)."""
    return f"{results}/" + template.format(**parts)
