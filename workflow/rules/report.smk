# Tables, plots, the MLflow summary run per experiment, and the HTML report (snakemake --report).

# the report's two kinds of tables, as subcategories of Tables: one label per experiment would
# merge them, and a second label with two values becomes a toggle that hides one kind
TABLES_MEANS = "results: mean ± std"
TABLES_STATS = "statistics: intervals, tests, ranks"
TABLES_CONFUSION = "confusion matrices and per-class error"


rule aggregate:
    # An experiment's tables, statistics and plots, in one job: the solve jobs' outputs read once,
    # and one process instead of three. The CSV (long format) also feeds mlflow_summary; the report
    # shows the HTML tables and the plots. gssl.analysis (report, stats, ranks, plots) holds the
    # numerics, gssl.analysis.aggregate_job the order.
    input:
        lambda wc: scored_runs(wc.experiment),  # not protocol predict's cells: they score nothing
    output:
        csv=results_pattern(paths.TABLES, suffix=".csv"),
        md=results_pattern(paths.TABLES, suffix=".md"),
        html=report(results_pattern(paths.TABLES, suffix=".html"), category="Tables", subcategory=TABLES_MEANS,
                    caption="../report/table.rst", labels={"experiment": "{experiment}"}),
        plot=report(results_pattern(paths.PLOT, plot="error"), category="Plots",
                    caption="../report/plot.rst", labels={"experiment": "{experiment}", "plot": "error vs labels"}),
        stats_csv=results_pattern(paths.TABLES, suffix=".stats.csv"),
        stats_md=results_pattern(paths.TABLES, suffix=".stats.md"),
        stats_html=report(results_pattern(paths.TABLES, suffix=".stats.html"), category="Tables",
                          subcategory=TABLES_STATS, caption="../report/stats.rst",
                          labels={"experiment": "{experiment}"}),
        ranks=results_pattern(paths.TABLES, suffix=".ranks.json"),
        boxes=report(results_pattern(paths.PLOT, plot="boxes"), category="Plots",
                     caption="../report/boxes.rst", labels={"experiment": "{experiment}", "plot": "boxes"}),
        cd=report(results_pattern(paths.PLOT, plot="cd"), category="Plots",
                  caption="../report/cd.rst", labels={"experiment": "{experiment}", "plot": "critical difference"}),
        heatmap=report(results_pattern(paths.PLOT, plot="ranks"), category="Plots",
                       caption="../report/ranks.rst", labels={"experiment": "{experiment}", "plot": "ranks"}),
    log:
        f"{RESULTS}/logs/report/{{experiment}}.aggregate.log",
    benchmark:
        f"{RESULTS}/benchmarks/aggregate/{{experiment}}.tsv"
    params:
        experiment=lambda wc: table_entry(config, wc.experiment),
        labels=lambda wc: protocol_labels(wc.experiment),
        code=code_hash("gssl.analysis.aggregate_job", "gssl.analysis.report", "gssl.analysis.tables",
                       "gssl.analysis.stats", "gssl.analysis.ranks", "gssl.analysis.plots"),
    resources:
        mem_mb=per_attempt(2000),
        runtime=per_attempt(30),
    conda:
        "../../environment.yml"
    script:
        "../scripts/aggregate.py"


rule predictions:
    # An experiment's predictions by name, in one job: per cell a CSV of each split's predicted
    # class for its scored points (the dataset's ids, the true class), or for a protocol of kind
    # predict every row without a label with its predicted class and class scores; and the
    # confusion matrices and per-class errors (gssl.analysis.predictions_job).
    input:
        predictions=lambda wc: [p.removesuffix(".json") + ".predictions.npz" for p in experiment_runs(wc.experiment)],
        data=lambda wc: sorted({c["data"] for c in prediction_cells(wc.experiment)}),
        splits=lambda wc: sorted({c["splits"] for c in prediction_cells(wc.experiment)}),
    output:
        folder=directory(results_pattern(paths.PREDICTIONS_FOLDER)),
        csv=results_pattern(paths.TABLES, suffix=".confusion.csv"),
        html=report(results_pattern(paths.TABLES, suffix=".confusion.html"), category="Tables",
                    subcategory=TABLES_CONFUSION, caption="../report/confusion.rst",
                    labels={"experiment": "{experiment}"}),
    log:
        f"{RESULTS}/logs/report/{{experiment}}.predictions.log",
    benchmark:
        f"{RESULTS}/benchmarks/predictions/{{experiment}}.tsv"
    params:
        cells=lambda wc: prediction_cells(wc.experiment),
        code=code_hash("gssl.analysis.predictions_job", "gssl.analysis.predictions", "gssl.datasets.dataset"),
    resources:
        mem_mb=per_attempt(2000),
        runtime=per_attempt(30),
    conda:
        "../../environment.yml"
    script:
        "../scripts/predictions.py"


rule active_curves:
    # an experiment with an active-learning protocol: its learning curves and budget tables
    input:
        lambda wc: experiment_runs(wc.experiment),
    output:
        plot=report(results_pattern(paths.PLOT, plot="active"), category="Plots",
                    caption="../report/active.rst",
                    labels={"experiment": "{experiment}", "plot": "active learning curves"}),
        csv=results_pattern(paths.TABLES, suffix=".active.csv"),
        budgets_csv=results_pattern(paths.TABLES, suffix=".active_budgets.csv"),
        budgets_md=results_pattern(paths.TABLES, suffix=".active_budgets.md"),
    log:
        f"{RESULTS}/logs/report/{{experiment}}.active.log",
    params:
        methods=lambda wc: {m: config["methods"][m] for m in config["experiments"][wc.experiment]["methods"]},
        budgets=lambda wc: active_budgets(wc.experiment),
        code=code_hash("gssl.analysis.active_curves", "gssl.analysis.plots", "gssl.analysis.stats"),
    resources:
        mem_mb=per_attempt(2000),
        runtime=per_attempt(10),
    conda:
        "../../environment.yml"
    script:
        "../scripts/active_curves.py"


rule loss_curve:
    # the training loss per epoch of a chain that trains a network (vae, autoencoder)
    input:
        rules.features.output[0],
    output:
        report(results_pattern(paths.LOSS_PLOT), category="Plots",
               caption="../report/loss.rst", labels={"experiment": "learned features",
                                                     "plot": "{dataset} / {prep}: training loss"}),
    log:
        f"{RESULTS}/logs/report/learned/{{dataset}}/{{prep}}.loss.log",
    params:
        code=code_hash("gssl.analysis.plots"),
    resources:
        mem_mb=per_attempt(1000),
        runtime=per_attempt(10),
    conda:
        "../../environment.yml"
    script:
        "../scripts/loss_curve.py"


localrules:
    mlflow_summary,


rule mlflow_summary:
    # The experiment's one logging job: the store's schema and the experiment where missing, the
    # runs every solve, grid and select job left to log
    # (*.mlflow.json.gz; those logged before are found by their tag, not logged twice), a cell run
    # over each cell solved in several jobs, the summary run, and the superseded tags. A local
    # rule: on a cluster it runs on the submit host, which reaches the tracking server.
    input:
        runs=lambda wc: experiment_runs(wc.experiment),
        pending=lambda wc: pending_runs(wc.experiment),
        grid_runs=lambda wc: experiment_selection(wc.experiment)[0],
        tables=rules.aggregate.output,
        confusion=[rules.predictions.output.csv, rules.predictions.output.html],
        predictions=rules.predictions.output.folder,
        learned=lambda wc: learned_features(wc.experiment),
        loss_plots=lambda wc: loss_curve_plots(wc.experiment),
    output:
        results_pattern(paths.MLFLOW_SUMMARY),
    log:
        f"{RESULTS}/logs/report/{{experiment}}.mlflow.log",
    benchmark:
        f"{RESULTS}/benchmarks/mlflow/{{experiment}}.tsv"
    params:
        tracking_uri=TRACKING_URI,
        experiment=lambda wc: config["experiments"][wc.experiment],
        headline=lambda wc: expected_headline(config, wc.experiment),
        configfiles=[str(f) for f in workflow.configfiles],  # verify's advice names them
        code=code_hash("gssl.pipeline.logging_job", "gssl.tracking.client", "gssl.tracking.store"),  # new saved views reach existing stores
    resources:
        mem_mb=per_attempt(2000),
        runtime=per_attempt(30),
    conda:
        "../../environment.yml"
    script:
        "../scripts/mlflow_summary.py"
