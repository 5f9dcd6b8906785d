# Tables, plots, the MLflow summary run per experiment, and the HTML report (snakemake --report).


rule table:
    input:
        lambda wc: experiment_runs(wc.experiment),
    output:
        csv=report(f"{RESULTS}/tables/{{experiment}}.csv", category="Tables",
                   caption="../report/table.rst"),
        md=f"{RESULTS}/tables/{{experiment}}.md",
    log:
        "logs/report/{experiment}.table.log",
    params:
        experiment=lambda wc: config["experiments"][wc.experiment],
        code=code_hash("gssl.report"),
    script:
        "../scripts/table.py"


rule plot:
    input:
        f"{RESULTS}/tables/{{experiment}}.csv",
    output:
        report(f"{RESULTS}/plots/{{experiment}}/error.png", category="Plots",
               caption="../report/plot.rst"),
    log:
        "logs/report/{experiment}.plot.log",
    params:
        labels=lambda wc: protocol_labels(wc.experiment),
        code=code_hash("gssl.report"),
    script:
        "../scripts/plot.py"


rule mlflow_summary:
    input:
        runs=lambda wc: experiment_runs(wc.experiment),
        csv=f"{RESULTS}/tables/{{experiment}}.csv",
        md=f"{RESULTS}/tables/{{experiment}}.md",
        plot=f"{RESULTS}/plots/{{experiment}}/error.png",
        experiment=f"{RESULTS}/mlflow/{{experiment}}.json",
    output:
        f"{RESULTS}/mlflow/{{experiment}}.summary.json",
    log:
        "logs/report/{experiment}.mlflow.log",
    params:
        tracking_uri=TRACKING_URI,
        experiment=lambda wc: config["experiments"][wc.experiment],
    script:
        "../scripts/mlflow_summary.py"
