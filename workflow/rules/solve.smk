# One job per cell (experiment, dataset, prep, graph, method, protocol) or block of its splits
# (splits_per_job); in MLflow one parent run per cell and one child run per split. Jobs write the
# runs to log beside their output (*.mlflow.json.gz); the experiment's logging job (mlflow_summary,
# report.smk) logs them: no compute job imports MLflow or needs a route to the tracking store.



rule solve:
    input:
        features=rules.features.output[0],
        graph=rules.graph.output[0],
        splits=rules.splits.output[0],
        data=rules.dataset.output[0],  # the three files above are checked against it (lineage)
        chosen=chosen_params,
    output:
        json=results_pattern(paths.RUNS, suffix=".json"),
        runs=results_pattern(paths.RUNS, suffix=".mlflow.json.gz"),
        predictions=results_pattern(paths.RUNS, suffix=".predictions.npz"),  # label codes: rule predictions
    log:
        results_pattern(paths.beside("logs/solve", paths.JOB, ".log")),
    benchmark:
        results_pattern(paths.beside("benchmarks/solve", paths.JOB, ".tsv"))
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
        features=rules.features.output[0],
        graph=rules.graph.output[0],
        splits=rules.splits.output[0],
        data=rules.dataset.output[0],
    output:
        json=results_pattern(paths.SELECTION, suffix=".json"),
        runs=results_pattern(paths.SELECTION, suffix=".mlflow.json.gz"),
    log:
        results_pattern(paths.beside("logs/selection", paths.JOB, ".log")),
    benchmark:
        results_pattern(paths.beside("benchmarks/selection", paths.JOB, ".tsv"))
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
        choice=results_pattern(paths.SELECTED, suffix=".json"),
        grid=results_pattern(paths.SELECTED, suffix=".grid.json"),
        csv=results_pattern(paths.SELECTED, suffix=".grid.csv"),
        plot=results_pattern(paths.SELECTED, suffix=".grid.png"),
        mlflow=results_pattern(paths.SELECTED, suffix=".mlflow.json.gz"),
    log:
        f"{RESULTS}/logs/select/{{experiment}}/{{dataset}}/{{prep}}/{{graph}}/{{method}}.log",
    params:
        method=lambda wc: selection_method_entry(wc.method),
        selection=lambda wc: config["experiments"][wc.experiment]["selection"],
        code=code_hash("gssl.pipeline.selection", "gssl.pipeline.select_job", "gssl.tracking.job_runs"),
    resources:
        mem_mb=per_attempt(2000),
        runtime=per_attempt(10),
    conda:
        "../../environment.yml"
    script:
        "../scripts/select.py"
