# Download: every manifest dataset into results/download/<dataset>/OWNER/REPO/COMMIT/PATH,
# from the mirror first, the URL second, sha256-verified.


rule download_dataset:
    output:
        directory(f"{DOWNLOAD_DIR}/{{dataset}}"),
    input:
        manifest=MANIFEST,
        code=code("download"),
    params:
        download_dir=lambda wildcards, output: str(Path(output[0]).parent),
        mirrors=" ".join(f"--mirror {d}" for d in config["download"]["mirror_dirs"]),
        network="--allow-network" if config["download"]["allow_network"] else "--no-allow-network",
    conda:
        CONDA_ENV
    log:
        "logs/download/{dataset}.log",
    shell:
        "factlab download {wildcards.dataset} --manifest {input.manifest} --download-dir {params.download_dir} "
        "{params.mirrors} {params.network} > {log} 2>&1"


rule download:
    input:
        expand(f"{DOWNLOAD_DIR}/{{dataset}}", dataset=DOWNLOADS),
