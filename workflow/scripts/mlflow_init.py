"""Create the MLflow schema and this experiment once; write the sentinel every solve job reads."""
import json
from pathlib import Path

from gssl.store.h5io import atomic_write_text
from gssl.pipeline.jobs import job_context
from gssl.tracking.views import ui_link
from gssl.tracking.client import init_store

with job_context(snakemake.log[0]) as log:
    name = snakemake.wildcards.experiment
    ids = init_store(snakemake.params.tracking_uri, [name], results_dir=Path(snakemake.output[0]).parents[1],
                     descriptions={name: snakemake.params.description},
                     headlines={name: tuple(snakemake.params.headline)})
    info = {"experiment": name, "experiment_id": ids[name],
            "tracking_uri": snakemake.params.tracking_uri, "ui": ui_link(ids[name])}
    atomic_write_text(snakemake.output[0], json.dumps(info, indent=1) + "\n")
    log.info("experiment %s has id %s in %s", name, ids[name], snakemake.params.tracking_uri)
