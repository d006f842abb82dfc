# Canonical benchmarks: results/data/<name>.parquet (+ a report of counts and drops).


rule build_benchmark:
    output:
        data="results/data/{name}.parquet",
        report="results/data/reports/{name}.json",
    input:
        manifest=MANIFEST,
        raw=get_raw_dirs,
        code=DATA_CODE,
        local=get_local_files,
    params:
        custom=custom_json,
    conda:
        CONDA_ENV
    log:
        "logs/data/{name}.log",
    shell:
        "factlab data build {wildcards.name} --manifest {input.manifest} --raw-dir results/raw "
        "--out {output.data} --report {output.report} --custom-json {params.custom:q} > {log} 2>&1"


rule dataset_statistics:
    output:
        csv="results/data/statistics.csv",
        md="paper/tables/datasets.md",
        tex="paper/tables/datasets.tex",
    input:
        data=expand("results/data/{name}.parquet", name=BENCHMARKS),
        reports=expand("results/data/reports/{name}.json", name=BENCHMARKS),
        code=TABLE_CODE,
    conda:
        CONDA_ENV
    log:
        "logs/data/statistics.log",
    shell:
        "factlab data stats --data {input.data} --reports-dir results/data/reports "
        "--out-csv {output.csv} --out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule data:
    input:
        expand("results/data/{name}.parquet", name=BENCHMARKS + TABLES),
        "results/data/statistics.csv",
