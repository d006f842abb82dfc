# Download: every manifest dataset into results/raw/<dataset>/OWNER/REPO/COMMIT/PATH,
# from the mirror first, the URL second, sha256-verified.


rule download_dataset:
    output:
        directory("results/raw/{dataset}"),
    input:
        MANIFEST,
    params:
        mirrors=" ".join(f"--mirror {d}" for d in config["download"]["mirror_dirs"]),
        network="--allow-network" if config["download"]["allow_network"] else "--no-allow-network",
    conda:
        CONDA_ENV
    log:
        "logs/download/{dataset}.log",
    shell:
        "factlab data download {wildcards.dataset} --manifest {input} --raw-dir results/raw "
        "{params.mirrors} {params.network} > {log} 2>&1"


rule download:
    input:
        expand("results/raw/{dataset}", dataset=DOWNLOADS),
