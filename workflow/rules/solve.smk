# One job per (experiment, dataset, prep, graph, method, protocol, split); one MLflow run each.


localrules:
    mlflow_experiment,


rule mlflow_experiment:
    # Creates the store's schema and the experiment once, before parallel jobs log to it.
    output:
        f"{RESULTS}/mlflow/{{experiment}}.json",
    log:
        "logs/mlflow/{experiment}.log",
    params:
        tracking_uri=TRACKING_URI,
    script:
        "../scripts/mlflow_init.py"


rule solve:
    input:
        features=f"{RESULTS}/features/{{dataset}}/{{prep}}.h5",
        graph=f"{RESULTS}/graphs/{{dataset}}/{{prep}}/{{graph}}.h5",
        splits=f"{RESULTS}/splits/{{dataset}}/{{protocol}}.h5",
        experiment=ancient(f"{RESULTS}/mlflow/{{experiment}}.json"),
    output:
        f"{RESULTS}/runs/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}/{{protocol}}/{{split}}.json",
    log:
        "logs/solve/{experiment}/{dataset}/{prep}/{graph}/{method}/{protocol}/{split}.log",
    benchmark:
        f"{RESULTS}/benchmarks/solve/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}/{{protocol}}/{{split}}.tsv"
    params:
        method=lambda wc: config["methods"][wc.method],
        prep_steps=lambda wc: config["preprocessing"][wc.prep],
        graph_spec=lambda wc: config["graphs"][wc.graph],
        protocol_spec=lambda wc: config["protocols"][wc.protocol],
        seed=config["seed"],
        tracking_uri=TRACKING_URI,
        code=lambda wc: solver_code_hash(wc.method),
    threads: config["threads"]
    script:
        "../scripts/solve.py"
