# kNN / LLE / precomputed graphs with Laplacians, cached in HDF5.


rule graph:
    input:
        features=f"{RESULTS}/features/{{dataset}}/{{prep}}.h5",
        data=graph_data_input,
    output:
        f"{RESULTS}/graphs/{{dataset}}/{{prep}}/{{graph}}.h5",
    log:
        f"{RESULTS}/logs/graphs/{{dataset}}/{{prep}}/{{graph}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/graphs/{{dataset}}/{{prep}}/{{graph}}.tsv"
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
