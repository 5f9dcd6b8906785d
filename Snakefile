# gssl: graph-based semi-supervised learning benchmark.
# Thin: load the embedded default config (extra --configfile files are merged over it), validate,
# and include the rule files. See README.md for the config reference.
# Every rule declares `conda: "../../environment.yml"` (the project's one environment), so
# `snakemake --use-conda` runs each job in it; without --use-conda the jobs run in the environment
# Snakemake runs in (make run: .venv). Either way the jobs import gssl from where this Snakemake
# imports it (make run: this checkout, installed editable); environment.yml says why.
import os

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


# gssl's settings reach jobs under executors that do not pass the submitting environment on
# (Kubernetes, cloud batch; SLURM's sbatch --export=ALL does): those that are set, since an
# `envvars:` directive would refuse to start whenever an optional one is unset
GSSL_ENVVARS = ("GSSL_DATA_MIRROR", "GSSL_OFFLINE", "GSSL_MLFLOW_TIMEOUT")
workflow.register_envvars(*(name for name in GSSL_ENVVARS if name in os.environ))


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/features.smk"
include: "workflow/rules/graphs.smk"
include: "workflow/rules/splits.smk"
include: "workflow/rules/solve.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_report_outputs(),
    default_target: True
