# kNN / LLE / precomputed graphs with Laplacians, cached in HDF5.


rule graph:
    input:
        features=rules.features.output[0],
        data=rules.dataset.output[0],  # what the features were built from: lineage checked
    output:
        results_pattern(paths.GRAPH),
    log:
        results_pattern(paths.beside("logs", paths.GRAPH, ".log")),
    benchmark:
        results_pattern(paths.beside("benchmarks", paths.GRAPH, ".tsv"))
    params:
        spec=lambda wc: config["graphs"][wc.graph],
        code=code_hash("gssl.graphs"),
    threads: 2
    resources:
        mem_mb=per_attempt(8000),
        runtime=per_attempt(120),
    conda:
        "../../environment.yml"
    script:
        "../scripts/graph.py"
