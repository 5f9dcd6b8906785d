# Config loading + validation and helper functions. No rules here.
import functools
import json
from pathlib import Path

from gssl.config import experiments_to_run, solve_jobs, validate_config
from gssl.errors import ConfigError
from gssl.hashing import module_source_hash
from gssl.tracking import default_tracking_uri

try:
    validate_config(config, workflow.source_path("../schemas/config.schema.yaml"))
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None

RESULTS = config["results"]
RAW = "resources/raw"
TRACKING_URI = default_tracking_uri(RESULTS)
GENERATED_SOURCES = {"digits", "g50c", "two_moons", "four_moons"}
ID = "[A-Za-z0-9][A-Za-z0-9_-]*"


wildcard_constraints:
    dataset=ID,
    prep=ID,
    graph=ID,
    method=ID,
    protocol=ID,
    experiment=ID,
    source=ID,
    split=r"\d+",


@functools.cache
def code_hash(*modules):
    """Hash of the gssl modules a rule's results depend on; in params:, so edits rerun the jobs."""
    return module_source_hash(*modules)


def source_identity(source):
    """What defines a source's content: served files (sha256), canonical fingerprint, defaults."""
    from gssl.datasets import get_spec

    spec = get_spec(source)
    return {"files": [[f.name, f.sha256] for f in spec.files], "fingerprint": spec.fingerprint,
            "defaults": spec.defaults}


def dataset_code_hash(source):
    """Parsed files are checked against their registered fingerprint, so only generated data
    depends on gssl code (the generators), besides the class views and the file writer."""
    modules = ["gssl.datasets.views", "gssl.datasets.store"]
    if source in GENERATED_SOURCES:
        modules.append("gssl.datasets.synthetic")
    return code_hash(*modules)


def solver_code_hash(method):
    from gssl.solvers.registry import solver_modules

    solver = config["methods"][method]["solver"]
    return code_hash("gssl.pipeline", "gssl.metrics", *solver_modules(solver))


def raw_manifest(wildcards):
    source = config["datasets"][wildcards.dataset]["source"]
    if source in GENERATED_SOURCES:
        return []
    return f"{RAW}/{source}/MANIFEST.json"


def graph_data_input(wildcards):
    if config["graphs"][wildcards.graph]["kind"] == "precomputed":
        return f"{RESULTS}/data/{wildcards.dataset}.h5"
    return []


def run_json(job):
    return ("{results}/runs/{experiment}/{dataset}/{prep}/{graph}/{method}/{protocol}/{split}.json"
            .format(results=RESULTS, **job))


@functools.cache
def experiment_runs(experiment):
    return [run_json(job) for job in solve_jobs(config, experiment)]


def all_report_outputs():
    outs = []
    for exp in experiments_to_run(config):
        outs += [f"{RESULTS}/tables/{exp}.csv", f"{RESULTS}/tables/{exp}.md",
                 f"{RESULTS}/plots/{exp}/error.png", f"{RESULTS}/mlflow/{exp}.summary.json"]
    return outs


def protocol_labels(experiment):
    from gssl.report import protocol_label

    return {p: protocol_label(config["protocols"][p]) for p in config["experiments"][experiment]["protocols"]}
