"""Log the experiment's summary run (tables, plots) and parent the current runs under it."""
import json

from gssl.h5io import atomic_write_text
from gssl.jobs import job_context
from gssl.tracking import read_sentinel, summarize

sm = snakemake
with job_context(sm.log[0]) as log:
    name = sm.wildcards.experiment
    exp_id = read_sentinel(sm.input.experiment, name, sm.params.tracking_uri)
    run_ids = [json.load(open(p))["mlflow_run_id"] for p in sm.input.runs]
    sid = summarize(sm.params.tracking_uri, exp_id, name, run_ids,
                    [sm.input.csv, sm.input.md, sm.input.plot],
                    params={"experiment": sm.params.experiment}, metrics={"n_runs": len(run_ids)})
    atomic_write_text(sm.output[0], json.dumps({"experiment": name, "experiment_id": exp_id,
                                                "summary_run_id": sid, "n_runs": len(run_ids),
                                                "tracking_uri": sm.params.tracking_uri}, indent=1) + "\n")
    log.info("summary run %s over %d runs", sid, len(run_ids))
