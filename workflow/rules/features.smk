# Preprocessing chains (standardize, min-max, normalization, PCA, random projection, VAE).


rule features:
    input:
        rules.dataset.output[0],
    output:
        results_pattern(paths.FEATURES),
    log:
        f"{RESULTS}/logs/features/{{dataset}}/{{prep}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/features/{{dataset}}/{{prep}}.tsv"
    params:
        steps=lambda wc: config["preprocessing"][wc.prep],
        seed=config["seed"],
        code=lambda wc: chain_code_hash(config["preprocessing"][wc.prep]),
    threads: 2
    resources:
        mem_mb=per_attempt(4000),
        runtime=per_attempt(30),
    conda:
        "../../environment.yml"
    script:
        "../scripts/features.py"
