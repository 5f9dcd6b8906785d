# gssl: graph-based semi-supervised learning benchmark.
# Thin: load the embedded default config (extra --configfile files are merged over it), validate,
# and include the rule files. See README.md for the config reference.
# `snakemake --lint` asks for a conda env per rule; we deliberately do not declare one: every rule
# runs gssl's own scripts, which need gssl itself installed (make run does that in .venv, or
# `conda env create -f environment.yml`), so a per-rule env would only duplicate environment.yml.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


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
