# Download -> resources/raw/{source}/ ; parse -> results/data/{dataset}.h5


localrules:
    download,  # compute nodes of a cluster usually have no route to the data sources


rule download:
    output:
        f"{RAW}/{{source}}/MANIFEST.json",
    log:
        f"{RESULTS}/logs/download/{{source}}.log",
    params:
        # the files' sha256 is their identity: editing gssl code never re-downloads
        files=lambda wc: source_identity(wc.source)["files"],
    retries: 1
    resources:
        downloads=1,
        mem_mb=per_attempt(1000),
        runtime=per_attempt(30),
    conda:
        "../../environment.yml"
    script:
        "../scripts/download.py"


rule dataset:
    input:
        raw_manifest,
    output:
        results_pattern(paths.DATA),
    log:
        f"{RESULTS}/logs/dataset/{{dataset}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/dataset/{{dataset}}.tsv"
    params:
        entry=lambda wc: config["datasets"][wc.dataset],
        raw_dir=lambda wc: f"{RAW}/{config['datasets'][wc.dataset]['source']}",
        source=lambda wc: dataset_identity(wc.dataset),
        code=lambda wc: dataset_code_hash(config["datasets"][wc.dataset]["source"]),
    resources:
        mem_mb=per_attempt(4000),
        runtime=per_attempt(30),
    conda:
        "../../environment.yml"
    script:
        "../scripts/dataset.py"
