# Split protocols, seeded from (dataset, protocol, split).


rule splits:
    input:
        f"{RESULTS}/data/{{dataset}}.h5",
    output:
        f"{RESULTS}/splits/{{dataset}}/{{protocol}}.h5",
    log:
        "logs/splits/{dataset}/{protocol}.log",
    params:
        spec=lambda wc: config["protocols"][wc.protocol],
        code=code_hash("gssl.splits"),
    conda:
        "../../environment.yml"
    script:
        "../scripts/splits.py"
