# gssl: graph-based semi-supervised learning benchmark.
# Thin: load the embedded default config (extra --configfile files are merged over it), validate,
# and include the rule files. See README.md for the config reference.
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
