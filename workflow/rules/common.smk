# Config loading + validation and helper functions. No rules here.
import functools
import json
import sys
from pathlib import Path

from gssl.pipeline import paths
from gssl.pipeline.config import load_yaml, selected_by, table_entry, validate_config
from gssl.pipeline.plan import (expected_headline, experiments_to_run, grid_variants, scored_solve_jobs, selection_jobs,
                                solve_jobs)
from gssl.datasets import FILE_SOURCE, generated_datasets
from gssl.errors import ConfigError
from gssl.store.hashing import module_source_hash
from gssl.splits import n_splits
from gssl.tracking.client import default_tracking_uri

try:
    for _path in workflow.configfiles:  # what Snakemake's YAML loading lets through: keys given twice
        load_yaml(_path)
    # the schema shipped in gssl (workflow/schemas/ links to it), with the registries' names filled
    # in (dataset sources, solvers, graph and protocol kinds: gssl.pipeline.config.load_schema)
    validate_config(config, planning_cache=True)  # a data file is read once per content (results/planning)
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None

RESULTS = config["results"]


onstart:
    # temporary files of jobs killed mid-write (never accepted, but never cleaned either): those of
    # this host whose writing process is gone (a running job's, or another host's, are left alone)
    from gssl.store.h5io import remove_stale_tmp

    for _tmp in remove_stale_tmp(RESULTS):
        print(f"gssl: removed {_tmp}, left by a job killed while writing", file=sys.stderr)

RAW = "resources/raw"


def results_pattern(template, **parts):
    """A gssl.pipeline.paths template under the results folder, its other wildcards kept."""
    return paths.pattern(RESULTS, template, **parts)



TRACKING_URI = default_tracking_uri(RESULTS)
GENERATED_SOURCES = generated_datasets()  # the registry's bundled and generated datasets: no download
ID = "[A-Za-z0-9][A-Za-z0-9_-]*"


wildcard_constraints:
    dataset=ID,
    prep=ID,
    graph=ID,
    method=ID,
    protocol=ID,
    experiment=ID,
    source=ID,
    first=r"\d+",
    last=r"\d+",


def per_attempt(first):
    """A rule's default resource request (mem_mb in MB, runtime in minutes): ``first`` on the first
    attempt, doubled on each retry (a profile's ``retries:``), so a job killed for running out of
    memory or time asks for more. The rules name theirs under resources; a profile's
    ``set-resources`` overrides them (workflow/profiles/slurm does for graph and features)."""
    return lambda wildcards, attempt: first * 2 ** (attempt - 1)


@functools.cache
def code_hash(*modules):
    """Hash of the gssl modules a rule's results depend on; in params:, so edits rerun the jobs."""
    return module_source_hash(*modules)


def chain_code_hash(steps):
    """The code a preprocessing chain's features depend on: its steps' modules only."""
    from gssl.features import chain_modules

    return code_hash(*chain_modules(steps))


def source_identity(source):
    """What defines a source's content: served files (sha256), canonical fingerprint, defaults."""
    from gssl.datasets import get_spec

    spec = get_spec(source)
    return {"files": [[f.name, f.sha256] for f in spec.files], "fingerprint": spec.fingerprint,
            "defaults": spec.defaults}


@functools.cache
def file_identity(dataset):
    """A source: file dataset's files (sha256 each) and how they are read: in the dataset job's
    params, so an edit of the data reruns exactly what depends on it."""
    from gssl.datasets.file_facts import file_facts
    from gssl.datasets.files import FileSource

    src = FileSource.from_entry(config["datasets"][dataset], f"datasets.{dataset}")
    # the sha256 the config check found (kept under results/planning while the file is unchanged)
    return src.identity(file_facts(src, dataset, paths.path(RESULTS, paths.PLANNING)).sha256)


def dataset_identity(dataset):
    source = config["datasets"][dataset]["source"]
    return file_identity(dataset) if source == FILE_SOURCE else source_identity(source)


def dataset_code_hash(source):
    """Parsed files are checked against their registered fingerprint, so only generated data
    depends on gssl code (the generators, a plugin's loader, the file reader), besides the
    class views and the file writer."""
    from gssl.datasets import get_spec

    modules = ["gssl.datasets.views", "gssl.datasets.store"]  # views: the class views (class_view)
    if source == FILE_SOURCE:
        from gssl.datasets.file_facts import READER_MODULES

        modules += READER_MODULES
    elif source in GENERATED_SOURCES and get_spec(source).kind == "plugin":
        # the lab's loader with what it imports from its own package or folder, and as_dataset's
        # label encoding and checks
        from gssl.datasets.file_facts import READER_MODULES
        from gssl.store.hashing import plugin_closure

        modules += [*plugin_closure(get_spec(source).loader.__module__), "gssl.datasets.registry",
                    *READER_MODULES]
    elif source in GENERATED_SOURCES:
        modules.append("gssl.datasets.synthetic")
    return code_hash(*modules)


@functools.cache
def solver_tags(solver):
    """A plugin solver's origin (its class, its distribution's version, the sha256 of its own
    modules: its import closure outside gssl) as MLflow tags ``gssl.solver_*``."""
    from gssl.solvers.registry import solver_provenance

    prov = solver_provenance(solver)
    return {} if prov["origin"] == "gssl" else {f"gssl.solver_{k}": v for k, v in prov.items()}


def run_provenance(wc):
    """Tags of a solve job's runs saying which data file and which plugin code they used."""
    tags = dict(solver_tags(config["methods"][wc.method]["solver"]))
    if config["datasets"][wc.dataset]["source"] == FILE_SOURCE:
        tags["gssl.data_files"] = json.dumps(file_identity(wc.dataset)["files"], sort_keys=True)
    return tags


def solver_code_hash(method):
    entry = config["methods"][method]
    if entry.get("active"):  # the query loop's and the acquisition's code as well
        return _active_code_hash(entry["solver"], entry["active"]["acquisition"])
    return _solver_code_hash(entry["solver"])


@functools.cache
def _active_code_hash(solver, acquisition):
    from gssl.active.registry import acquisition_modules
    from gssl.solvers.registry import solver_modules

    return code_hash(*JOB_MODULES, *solver_modules(solver), *acquisition_modules(acquisition))


@functools.cache  # one import closure per solver, not one per job: it reads and parses the sources
def _solver_code_hash(solver):
    from gssl.solvers.registry import solver_modules

    # gssl.pipeline.solve_job runs the job; gssl.pipeline.selection and gssl.pipeline.config map a
    # selection's choice onto the parameters a job fits with; gssl.tracking.job_runs builds the runs
    # the job asks to log
    return code_hash(*JOB_MODULES, *solver_modules(solver))


JOB_MODULES = ("gssl.pipeline.solve_job", "gssl.pipeline.stages", "gssl.metrics", "gssl.pipeline.selection",
               "gssl.pipeline.config", "gssl.tracking.job_runs")


def raw_manifest(wildcards):
    """A dataset job's inputs: the mirror source's manifest, or a source: file dataset's files."""
    source = config["datasets"][wildcards.dataset]["source"]
    if source == FILE_SOURCE:
        return list(file_identity(wildcards.dataset)["files"])
    if source in GENERATED_SOURCES:
        return []
    return f"{RAW}/{source}/MANIFEST.json"


def run_json(job):
    """A solve job's output: one cell (or a block of its splits), one record per split."""
    return paths.path(RESULTS, paths.RUNS, suffix=".json", **job)


@functools.cache
def experiment_runs(experiment):
    return [run_json(job) for job in solve_jobs(config, experiment)]


@functools.cache
def scored_runs(experiment):
    """The solve outputs the tables and statistics read: not those of a protocol of kind predict."""
    return [run_json(job) for job in scored_solve_jobs(config, experiment)]


@functools.cache
def prediction_cells(experiment):
    """Per cell what rule predictions reads: its keys, whether its protocol is kind predict, its
    solve jobs' .predictions.npz, the dataset and the splits file."""
    from gssl.splits import is_predict

    cells = {}
    for job in solve_jobs(config, experiment):
        key = tuple(job[k] for k in ("dataset", "prep", "graph", "method", "protocol"))
        cell = cells.setdefault(key, {
            **dict(zip(("dataset", "prep", "graph", "method", "protocol"), key)),
            "predict": is_predict(config["protocols"][job["protocol"]]), "jobs": [],
            "data": paths.path(RESULTS, paths.DATA, dataset=job["dataset"]),
            "splits": paths.path(RESULTS, paths.SPLITS, dataset=job["dataset"], protocol=job["protocol"])})
        cell["jobs"].append(paths.path(RESULTS, paths.RUNS, suffix=".predictions.npz", **job))
    return list(cells.values())


def grid_json(job):
    """A grid job's output: every grid point of one method on a block of the selection splits."""
    return paths.path(RESULTS, paths.SELECTION, suffix=".json", **job)


def method_entry(method):
    """What an evaluation job's results depend on: the method without its grid (a changed grid
    reruns selection; evaluation reruns only if the chosen parameters change) and without its
    label (the paper's name, display only)."""
    return {k: v for k, v in config["methods"][method].items() if k not in ("grid", "label")}


def selection_method_entry(method):
    """What a selection job's results depend on: the method without its label (display only)."""
    return {k: v for k, v in config["methods"][method].items() if k != "label"}


def grid_points(wc):
    """[variant id, {solver, params}] of every point of a method's grid, in grid order."""
    entry = config["methods"][wc.method]
    extra = {k: entry[k] for k in ("class_priors",) if k in entry}  # applied to every point too
    return [[vid, {"solver": entry["solver"], "params": params, **extra}]
            for vid, params in grid_variants(entry)]


def chosen_params(wc):
    """The selection stage's choice for a gridded method, or for the method it is selected_as
    (a checkpoint: evaluation jobs wait for it)."""
    source = selected_by(config, wc.method)
    if source is None:
        return []
    return checkpoints.select.get(experiment=wc.experiment, dataset=wc.dataset, prep=wc.prep,
                                  graph=wc.graph, method=source).output.choice


def cell_grid_runs(wc):
    """Every grid job of one (experiment, dataset, prep, graph, method)."""
    keys = ("dataset", "prep", "graph", "method")
    return [grid_json(j) for j in selection_jobs(config, wc.experiment)
            if all(j[k] == wc[k] for k in keys)]


def pending_runs(experiment):
    """The MLflow runs an experiment's jobs left to log, in a fixed order: solve jobs, grid jobs,
    selections (each beside the output it belongs to)."""
    grid_runs, grids = experiment_selection(experiment)
    return ([p.removesuffix(".json") + ".mlflow.json.gz" for p in experiment_runs(experiment) + grid_runs]
            + [p.removesuffix(".grid.json") + ".mlflow.json.gz" for p in grids])


@functools.cache
def experiment_selection(experiment):
    """(grid jobs' outputs, the selection stage's grid summaries) of one experiment."""
    jobs = selection_jobs(config, experiment)
    cells = {tuple(j[k] for k in ("dataset", "prep", "graph", "method")) for j in jobs}
    grids = [paths.path(RESULTS, paths.SELECTED, experiment=experiment, dataset=d, prep=p, graph=g, method=m,
                        suffix=".grid.json") for d, p, g, m in sorted(cells)]
    return [grid_json(j) for j in jobs], grids


def all_report_outputs():
    outs = []
    for exp in experiments_to_run(config):
        outs += [*(paths.path(RESULTS, paths.TABLES, experiment=exp, suffix=s) for s in (".csv", ".md", ".html")),
                 paths.path(RESULTS, paths.PLOT, experiment=exp, plot="error"),
                 paths.path(RESULTS, paths.MLFLOW_SUMMARY, experiment=exp),
                 *loss_curve_plots(exp),
                 *([paths.path(RESULTS, paths.PLOT, experiment=exp, plot="active")] if active_budgets(exp) else [])]
    return outs


def active_budgets(experiment):
    """The query counts an experiment's active-learning protocols report at (none: no such protocol)."""
    from gssl.splits import validate_protocol

    return sorted({b for p in config["experiments"][experiment]["protocols"]
                   for b in (validate_protocol(config["protocols"][p]).get("active") or {}).get("report_at", [])})


def learned_chains(experiment):
    """(dataset, prep) of the experiment whose chain trains a network (a vae step, say)."""
    from gssl.features import is_learned

    e = config["experiments"][experiment]
    return [(d, p) for d in e["datasets"] for p in e["preprocessing"]
            if is_learned(config["preprocessing"][p])]


def learned_features(experiment):
    return [paths.path(RESULTS, paths.FEATURES, dataset=d, prep=p) for d, p in learned_chains(experiment)]


def loss_curve_plots(experiment):
    return [paths.path(RESULTS, paths.LOSS_PLOT, dataset=d, prep=p) for d, p in learned_chains(experiment)]


def protocol_labels(experiment):
    from gssl.splits import protocol_label

    return {p: protocol_label(config["protocols"][p]) for p in config["experiments"][experiment]["protocols"]}
