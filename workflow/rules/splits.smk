# Split protocols, seeded from (dataset, protocol, split).


rule splits:
    input:
        rules.dataset.output[0],
    output:
        results_pattern(paths.SPLITS),
    log:
        f"{RESULTS}/logs/splits/{{dataset}}/{{protocol}}.log",
    params:
        spec=lambda wc: config["protocols"][wc.protocol],
        code=code_hash("gssl.splits"),
    resources:
        mem_mb=per_attempt(1000),
        runtime=per_attempt(10),
    conda:
        "../../environment.yml"
    script:
        "../scripts/splits.py"
