# Tables, plots, the MLflow summary run per experiment, and the HTML report (snakemake --report).


rule table:
    input:
        lambda wc: experiment_runs(wc.experiment),
    output:
        # the CSV (long format) feeds plot and mlflow_summary; the report shows the HTML tables
        csv=f"{RESULTS}/tables/{{experiment}}.csv",
        md=f"{RESULTS}/tables/{{experiment}}.md",
        html=report(f"{RESULTS}/tables/{{experiment}}.html", category="Tables",
                    caption="../report/table.rst", labels={"experiment": "{experiment}"}),
    log:
        "logs/report/{experiment}.table.log",
    params:
        experiment=lambda wc: {**config["experiments"][wc.experiment],
                               "gridded_methods": [m for m in config["experiments"][wc.experiment]["methods"]
                                                   if has_grid(m)]},
        labels=lambda wc: protocol_labels(wc.experiment),
        code=code_hash("gssl.report"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/table.py"


rule plot:
    input:
        f"{RESULTS}/tables/{{experiment}}.csv",
    output:
        report(f"{RESULTS}/plots/{{experiment}}/error.png", category="Plots",
               caption="../report/plot.rst", labels={"experiment": "{experiment}"}),
    log:
        "logs/report/{experiment}.plot.log",
    params:
        labels=lambda wc: protocol_labels(wc.experiment),
        code=code_hash("gssl.report"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/plot.py"


rule mlflow_summary:
    input:
        runs=lambda wc: experiment_runs(wc.experiment),
        grid_runs=lambda wc: experiment_selection(wc.experiment)[0],
        selections=lambda wc: experiment_selection(wc.experiment)[1],
        csv=f"{RESULTS}/tables/{{experiment}}.csv",
        md=f"{RESULTS}/tables/{{experiment}}.md",
        html=f"{RESULTS}/tables/{{experiment}}.html",
        plot=f"{RESULTS}/plots/{{experiment}}/error.png",
        experiment=f"{RESULTS}/mlflow/{{experiment}}.json",
    output:
        f"{RESULTS}/mlflow/{{experiment}}.summary.json",
    log:
        "logs/report/{experiment}.mlflow.log",
    params:
        tracking_uri=TRACKING_URI,
        experiment=lambda wc: config["experiments"][wc.experiment],
    conda:
        "../../environment.yml"
    script:
        "../scripts/mlflow_summary.py"
