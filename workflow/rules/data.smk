# Download -> resources/raw/{source}/ ; parse -> results/data/{dataset}.h5


rule download:
    output:
        f"{RAW}/{{source}}/MANIFEST.json",
    log:
        "logs/download/{source}.log",
    params:
        code=code_hash("gssl.datasets"),
    retries: 1
    resources:
        downloads=1,
    script:
        "../scripts/download.py"


rule dataset:
    input:
        raw_manifest,
    output:
        f"{RESULTS}/data/{{dataset}}.h5",
    log:
        "logs/dataset/{dataset}.log",
    benchmark:
        f"{RESULTS}/benchmarks/dataset/{{dataset}}.tsv"
    params:
        entry=lambda wc: config["datasets"][wc.dataset],
        raw_dir=lambda wc: f"{RAW}/{config['datasets'][wc.dataset]['source']}",
        code=code_hash("gssl.datasets", "gssl.h5io"),
    script:
        "../scripts/dataset.py"
