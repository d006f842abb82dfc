# Download: every manifest dataset into results/download/<dataset>/OWNER/REPO/COMMIT/PATH,
# from the mirror first, the URL second, sha256-verified.

# Where files come from is not what they are (each file's sha256 in the manifest pins that): the
# download command reads download.mirror_dirs and download.allow_network from the environment, so
# that changing them (e.g. going offline) reruns no download and no build. Cluster jobs re-parse
# this file, so they see the same values.
os.environ["FACTLAB_MIRROR_DIRS"] = os.pathsep.join(param("download.mirror_dirs"))
os.environ["FACTLAB_ALLOW_NETWORK"] = "yes" if param("download.allow_network") else "no"


envvars:
    "FACTLAB_MIRROR_DIRS",
    "FACTLAB_ALLOW_NETWORK",


rule download_dataset:
    input:
        manifest=MANIFEST,
        code=code("download"),
    output:
        directory(f"{DOWNLOAD_DIR}/{{dataset}}"),
    log:
        "logs/download/{dataset}.log",
    priority: TRAINING_PATH_PRIORITY
    conda:
        CONDA_ENV
    params:
        download_dir=lambda wildcards, output: str(Path(output[0]).parent),
    shell:
        "factlab download {wildcards.dataset} --manifest {input.manifest} --download-dir {params.download_dir} "
        '--mirror-dirs "$FACTLAB_MIRROR_DIRS" --allow-network "$FACTLAB_ALLOW_NETWORK" > {log} 2>&1'


rule download:
    input:
        expand(f"{DOWNLOAD_DIR}/{{dataset}}", dataset=PLAN.downloads),
