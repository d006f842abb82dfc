# Canonical benchmarks: results/data/<name>.parquet (+ a report of counts and drops).


rule build_benchmark:
    input:
        manifest=MANIFEST,
        raw=get_download_dirs,
        code=code("data", "build"),
        local=get_local_files,
    output:
        data="results/data/{name}.parquet",
        report="results/data/reports/{name}.json",
    log:
        "logs/data/{name}.log",
    priority: TRAINING_PATH_PRIORITY
    conda:
        CONDA_ENV
    params:
        custom=custom_json,
        download_dir=DOWNLOAD_DIR,
    shell:
        "factlab data build {wildcards.name} --manifest {input.manifest} --download-dir {params.download_dir} "
        "--out {output.data} --report {output.report} --custom-json {params.custom:q} > {log} 2>&1"


rule dataset_statistics:
    input:
        data=expand("results/data/{name}.parquet", name=PLAN.benchmarks),
        reports=expand("results/data/reports/{name}.json", name=PLAN.benchmarks),
        code=code("data", "stats"),
    output:
        "results/data/statistics.csv",
    log:
        "logs/data/statistics.log",
    conda:
        CONDA_ENV
    shell:
        "factlab data stats --data {input.data} --reports-dir results/data/reports "
        "--out-csv {output} > {log} 2>&1"


rule data:
    input:
        expand("results/data/{name}.parquet", name=PLAN.benchmarks + PLAN.tables),
        "results/data/statistics.csv",
