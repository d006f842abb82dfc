# Train: factlab's own models, written under results/models/ only. Today the QASem parser, trained
# offline on the mirrored gold data (QANom train and dev + QA-SRL GS dev); its evaluation is a metaeval
# rule (evaluate_qasem_parser). Command: `factlab train qasem-parser` (src/factlab/train/).


rule train_qasem_parser:
    input:
        qasrl_gs="results/data/qasrl_gs.parquet",
        qanom="results/data/qanom.parquet",
        code=code("train", "qasem-parser"),
    output:
        **QASEM_MODEL,
        log=f"{QASEM_MODEL_DIR}/training_log.json",
        metrics=f"{QASEM_MODEL_DIR}/metrics.json",
    log:
        "logs/train/train_qasem_parser.log",
    benchmark:
        "benchmarks/train/train_qasem_parser.tsv"
    # The longest job, and every preprocess_qas waits for it: start it before the preprocess jobs.
    priority: 50
    conda:
        CONDA_ENV
    threads: param("qasem.threads")
    resources:
        gpu=int(param("qasem.device") == "cuda"),
    params:
        out_dir=lambda wildcards, output: str(Path(output.weights).parent),
        settings=json.dumps(param("qasem.train"), sort_keys=True),
        device=param("qasem.device"),
    shell:
        "factlab train qasem-parser --qasrl-gs {input.qasrl_gs} --qanom {input.qanom} --out-dir {params.out_dir} "
        "--settings {params.settings:q} --threads {threads} --device {params.device} > {log} 2>&1"


rule train:
    input:
        rules.train_qasem_parser.output,
