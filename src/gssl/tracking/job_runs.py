"""The runs a compute job asks to log: its tags, params and run trees (:mod:`.records`), built from
what the job knows (its rule, wildcards, splits and inputs) and its results. No MLflow here."""

from __future__ import annotations

import json
import platform
import time
from dataclasses import dataclass, field

from .._package import __version__
from ..metrics import split_statistics
from .records import KIND_TAG, run_name, run_tree


def readable(metrics: dict, digits: int = 4) -> dict:
    """A cell run's statistics to ``digits`` significant digits: the UI's table shows what a
    reader compares (4.465, not 4.464796794504866). Split runs, their artifacts and the job's
    JSON keep the exact values, and the tables are computed from those."""
    return {k: float(f"{v:.{digits}g}") if isinstance(v, float) else v for k, v in metrics.items()}


def converged_tag(result: dict) -> dict:
    """A split run's ``gssl.converged`` tag, "true" or "false" (false: its solver stopped on its
    iteration limit and warned); none for a solver that does not say."""
    converged = result.get("converged")
    return {} if converged is None else {"gssl.converged": str(bool(converged)).lower()}


@dataclass
class JobRuns:
    """One solve, grid or select job's view of MLflow.

    Parameters
    ----------
    cell : dict
        The job's wildcards: experiment, dataset, prep, graph, method, protocol (a select job:
        no protocol).
    splits : list of int
        The split indices the job fits (a select job: none).
    whole_cell : bool
        Whether they are every split of the cell (a ``cell`` run) or a block (a ``block`` run).
    rule, stage, code, output : str
        The Snakemake rule, the stage (evaluation or selection), the code hash and the job's output.
    input_tags : dict
        The inputs' hashes and the git commit (``mlflow.source.git.commit``).
    spec : dict
        ``graph``, ``preprocessing``, ``protocol`` and ``seed``: what every run's params repeat.
    """

    cell: dict
    splits: list
    whole_cell: bool
    rule: str
    stage: str
    code: str
    output: str
    input_tags: dict
    spec: dict
    start_ms: int = field(default_factory=lambda: int(time.time() * 1000))

    @property
    def block(self) -> str:
        return "" if self.whole_cell else f"{self.splits[0]}-{self.splits[-1]}"

    def tags(self, solver: str) -> dict:
        tags = {f"gssl.{k}": v for k, v in self.cell.items()}
        tags.update({"gssl.solver": solver, "gssl.rule": self.rule, "gssl.stage": self.stage,
                     "gssl.version": __version__, "gssl.code_hash": self.code,
                     "gssl.host": platform.node(), "gssl.output": self.output,
                     "gssl.splits": f"{self.splits[0]}-{self.splits[-1]}",
                     "mlflow.source.name": f"snakemake rule {self.rule}", "mlflow.source.type": "JOB",
                     **self.input_tags})
        return tags

    def params(self, method) -> dict:
        return {"method": method, **self.spec}

    def times(self) -> dict:
        """The run's start and end for MLflow (ms): this job's, not the later logging job's."""
        return {"start_time": self.start_ms, "end_time": int(time.time() * 1000)}

    def evaluation(self, method: dict, results: list[dict], extra_metrics: dict) -> dict:
        """A cell (or block) run with the splits' statistics (:func:`readable`; the number and
        share of splits that did not converge among them), and a child run per split with its
        exact metrics, predictions and history as an artifact, tagged ``gssl.converged``."""
        tags = self.tags(method["solver"])
        parent = {"name": run_name(self.cell, splits=self.block),
                  "tags": {**tags, KIND_TAG: "cell" if self.whole_cell else "block"},
                  "params": self.params(method),
                  "metrics": readable({**split_statistics([r["metrics"] for r in results]), **extra_metrics}),
                  **self.times()}
        children = [{"name": run_name(self.cell, split=r["split"]), **self.times(),
                     "tags": {**tags, KIND_TAG: "split", "gssl.split": r["split"], **converged_tag(r),
                              **({"gssl.chosen": json.dumps(r["chosen"], sort_keys=True)} if r["chosen"] else {})},
                     "params": self.params(r["method"]), "metrics": r["metrics"], "history": r["history"],
                     "artifacts": {"result.json": {"predictions": r["predictions"], "history": r["history"],
                                                   "stop_reason": r["stop_reason"]}}}
                    for r in results]
        return run_tree(parent, children)

    def grid_point(self, variant: str, method: dict, results: list[dict], load_seconds: float) -> dict:
        """One run per grid point (no child per split: a grid is hundreds of fits); the splits'
        values are its metrics' steps."""
        tags = {**self.tags(method["solver"]), "gssl.variant": variant,
                KIND_TAG: "selection_" + ("cell" if self.whole_cell else "block")}
        history = [{"split": r["split"], **r["metrics"]} for r in results]
        run = {"name": run_name(self.cell, variant, splits=self.block), "tags": tags,
               "params": self.params(method), **self.times(),
               "metrics": {**split_statistics([r["metrics"] for r in results]), "load_seconds": load_seconds},
               "history": history}
        return run_tree(run)

    def selection(self, protocol: str, scored_points: bool, params: dict, metrics: dict, files: list) -> dict:
        """The selection stage's run of one method's grid: its choice, score, table and plot."""
        c = self.cell
        tags = {f"gssl.{k}": v for k, v in c.items()}
        tags.update({KIND_TAG: "selection", "gssl.protocol": protocol, "gssl.rule": self.rule,
                     "gssl.scored_points": str(bool(scored_points)).lower(), "gssl.code_hash": self.code})
        return run_tree({"name": f"select · {c['method']} · {c['dataset']}/{c['prep']}/{c['graph']}",
                         "tags": tags, "params": params, "metrics": metrics, "files": files, **self.times()})
