# Tables, plots, the MLflow summary run per experiment, and the HTML report (snakemake --report).

# the report's two kinds of tables, as subcategories of Tables: one label per experiment would
# merge them, and a second label with two values becomes a toggle that hides one kind
TABLES_MEANS = "results: mean ± std"
TABLES_STATS = "statistics: intervals, tests, ranks"


rule table:
    input:
        lambda wc: experiment_runs(wc.experiment),
    output:
        # the CSV (long format) feeds plot and mlflow_summary; the report shows the HTML tables
        csv=f"{RESULTS}/tables/{{experiment}}.csv",
        md=f"{RESULTS}/tables/{{experiment}}.md",
        html=report(f"{RESULTS}/tables/{{experiment}}.html", category="Tables", subcategory=TABLES_MEANS,
                    caption="../report/table.rst", labels={"experiment": "{experiment}"}),
    log:
        "logs/report/{experiment}.table.log",
    params:
        experiment=lambda wc: table_entry(config, wc.experiment),
        labels=lambda wc: protocol_labels(wc.experiment),
        code=code_hash("gssl.analysis.report", "gssl.analysis.stats"),
    resources:
        mem_mb=per_attempt(2000),
        runtime=per_attempt(15),
    conda:
        "../../environment.yml"
    script:
        "../scripts/table.py"


rule plot:
    input:
        f"{RESULTS}/tables/{{experiment}}.csv",
    output:
        report(f"{RESULTS}/plots/{{experiment}}/error.png", category="Plots",
               caption="../report/plot.rst", labels={"experiment": "{experiment}", "plot": "error vs labels"}),
    log:
        "logs/report/{experiment}.plot.log",
    params:
        labels=lambda wc: protocol_labels(wc.experiment),
        code=code_hash("gssl.analysis.report", "gssl.analysis.stats"),
    resources:
        mem_mb=per_attempt(2000),
        runtime=per_attempt(15),
    conda:
        "../../environment.yml"
    script:
        "../scripts/plot.py"


rule statistics:
    # paired tests within each setting, ranks and the critical difference across settings, and the
    # plots of both (issue #18); gssl.analysis.stats and gssl.analysis.plots hold the numerics
    input:
        lambda wc: experiment_runs(wc.experiment),
    output:
        csv=f"{RESULTS}/tables/{{experiment}}.stats.csv",
        md=f"{RESULTS}/tables/{{experiment}}.stats.md",
        html=report(f"{RESULTS}/tables/{{experiment}}.stats.html", category="Tables", subcategory=TABLES_STATS,
                    caption="../report/stats.rst", labels={"experiment": "{experiment}"}),
        ranks=f"{RESULTS}/tables/{{experiment}}.ranks.json",
        boxes=report(f"{RESULTS}/plots/{{experiment}}/boxes.png", category="Plots",
                     caption="../report/boxes.rst", labels={"experiment": "{experiment}", "plot": "boxes"}),
        cd=report(f"{RESULTS}/plots/{{experiment}}/cd.png", category="Plots",
                  caption="../report/cd.rst", labels={"experiment": "{experiment}", "plot": "critical difference"}),
        heatmap=report(f"{RESULTS}/plots/{{experiment}}/ranks.png", category="Plots",
                       caption="../report/ranks.rst", labels={"experiment": "{experiment}", "plot": "ranks"}),
    log:
        "logs/report/{experiment}.statistics.log",
    benchmark:
        f"{RESULTS}/benchmarks/statistics/{{experiment}}.tsv"
    params:
        code=code_hash("gssl.analysis.report", "gssl.analysis.stats", "gssl.analysis.plots"),
    resources:
        mem_mb=per_attempt(2000),
        runtime=per_attempt(30),
    conda:
        "../../environment.yml"
    script:
        "../scripts/statistics.py"


localrules:
    mlflow_summary,


rule mlflow_summary:
    # The experiment's one logging job: the runs every solve, grid and select job left to log
    # (*.mlflow.json.gz; those logged before are found by their tag, not logged twice), a cell run
    # over each cell solved in several jobs, the summary run, and the superseded tags. A local
    # rule: on a cluster it runs on the submit host, which reaches the tracking server.
    input:
        runs=lambda wc: experiment_runs(wc.experiment),
        pending=lambda wc: pending_runs(wc.experiment),
        grid_runs=lambda wc: experiment_selection(wc.experiment)[0],
        csv=f"{RESULTS}/tables/{{experiment}}.csv",
        md=f"{RESULTS}/tables/{{experiment}}.md",
        html=f"{RESULTS}/tables/{{experiment}}.html",
        plot=f"{RESULTS}/plots/{{experiment}}/error.png",
        stats=rules.statistics.output,
        experiment=f"{RESULTS}/mlflow/{{experiment}}.json",
    output:
        f"{RESULTS}/mlflow/{{experiment}}.summary.json",
    log:
        "logs/report/{experiment}.mlflow.log",
    benchmark:
        f"{RESULTS}/benchmarks/mlflow/{{experiment}}.tsv"
    params:
        tracking_uri=TRACKING_URI,
        experiment=lambda wc: config["experiments"][wc.experiment],
        code=code_hash("gssl.tracking.client"),
    resources:
        mem_mb=per_attempt(2000),
        runtime=per_attempt(30),
    conda:
        "../../environment.yml"
    script:
        "../scripts/mlflow_summary.py"
