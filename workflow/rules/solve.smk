# One job per cell (experiment, dataset, prep, graph, method, protocol) or block of its splits
# (splits_per_job); in MLflow one parent run per cell and one child run per split. Jobs write the
# runs to log beside their output (*.mlflow.json.gz); the experiment's logging job (mlflow_summary,
# report.smk) logs them: no compute job imports MLflow or needs a route to the tracking store.



rule solve:
    input:
        features=f"{RESULTS}/features/{{dataset}}/{{prep}}.h5",
        graph=f"{RESULTS}/graphs/{{dataset}}/{{prep}}/{{graph}}.h5",
        splits=f"{RESULTS}/splits/{{dataset}}/{{protocol}}.h5",
        chosen=chosen_params,
    output:
        json=f"{RESULTS}/runs/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}/{{protocol}}/splits{{first}}-{{last}}.json",
        runs=f"{RESULTS}/runs/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}/{{protocol}}/splits{{first}}-{{last}}.mlflow.json.gz",
    log:
        f"{RESULTS}/logs/solve/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}/{{protocol}}/splits{{first}}-{{last}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/solve/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}/{{protocol}}/splits{{first}}-{{last}}.tsv"
    params:
        method=lambda wc: method_entry(wc.method),
        stage="evaluation",
        prep_steps=lambda wc: config["preprocessing"][wc.prep],
        graph_spec=lambda wc: config["graphs"][wc.graph],
        protocol_spec=lambda wc: config["protocols"][wc.protocol],
        seed=config["seed"],
        n_splits=lambda wc: n_splits(config["protocols"][wc.protocol]),
        code=lambda wc: solver_code_hash(wc.method),
        provenance=run_provenance,
    threads: config["threads"]
    resources:
        mem_mb=per_attempt(8000),
        runtime=per_attempt(120),
    conda:
        "../../environment.yml"
    script:
        "../scripts/solve.py"


rule solve_grid:
    # Every grid point of a method on a block of the selection protocol's splits, in one process
    # (features, graph and kernel loaded once; same script as solve).
    input:
        features=f"{RESULTS}/features/{{dataset}}/{{prep}}.h5",
        graph=f"{RESULTS}/graphs/{{dataset}}/{{prep}}/{{graph}}.h5",
        splits=f"{RESULTS}/splits/{{dataset}}/{{protocol}}.h5",
    output:
        json=f"{RESULTS}/selection/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}/{{protocol}}/splits{{first}}-{{last}}.json",
        runs=f"{RESULTS}/selection/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}/{{protocol}}/splits{{first}}-{{last}}.mlflow.json.gz",
    log:
        f"{RESULTS}/logs/selection/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}/{{protocol}}/splits{{first}}-{{last}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/selection/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}/{{protocol}}/splits{{first}}-{{last}}.tsv"
    params:
        method=lambda wc: method_entry(wc.method),
        grid=grid_points,
        stage="selection",
        prep_steps=lambda wc: config["preprocessing"][wc.prep],
        graph_spec=lambda wc: config["graphs"][wc.graph],
        protocol_spec=lambda wc: config["protocols"][wc.protocol],
        seed=config["seed"],
        n_splits=lambda wc: n_splits(config["protocols"][wc.protocol]),
        code=lambda wc: solver_code_hash(wc.method),
        provenance=run_provenance,
    threads: config["threads"]
    resources:
        mem_mb=per_attempt(8000),
        runtime=per_attempt(120),
    conda:
        "../../environment.yml"
    script:
        "../scripts/solve.py"


checkpoint select:
    # The grid point with the lowest mean selection metric (ties: tie_break, then first in grid
    # order), or one per split (selection.per_split). A checkpoint: evaluation jobs read the choice
    # after it is written, and rerun only if it changed.
    input:
        runs=cell_grid_runs,
    output:
        choice=f"{RESULTS}/selected/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}.json",
        grid=f"{RESULTS}/selected/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}.grid.json",
        csv=f"{RESULTS}/selected/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}.grid.csv",
        plot=f"{RESULTS}/selected/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}.grid.png",
        mlflow=f"{RESULTS}/selected/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}.mlflow.json.gz",
    log:
        f"{RESULTS}/logs/select/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}.log",
    params:
        method=lambda wc: config["methods"][wc.method],
        selection=lambda wc: config["experiments"][wc.experiment]["selection"],
        code=code_hash("gssl.pipeline.selection"),
    resources:
        mem_mb=per_attempt(2000),
        runtime=per_attempt(10),
    conda:
        "../../environment.yml"
    script:
        "../scripts/select.py"
