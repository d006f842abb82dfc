# factlab's own QASem parser: trained offline on the mirrored gold data (QANom train and dev + QA-SRL GS dev),
# evaluated on QA-SRL GS test and QANom test (UA/LA argument F1, gold predicates) and by its coverage of the
# QASemConsistency gold QAs. Commands: `factlab models train-qasem|evaluate-qasem` (src/factlab/models/cli.py).
import json
from pathlib import Path

import factlab.models

QASEM = config["qasem"]
QASEM_MODEL_DIR = "results/models/qasem_parser"
QASEM_EVAL_DIR = "results/metaeval/qasem_parser"
# The parser code (and the spaCy loader it uses) is an input: editing it retrains and re-evaluates.
MODELS_CODE = sorted(str(p) for p in Path(factlab.models.__file__).parent.rglob("*.py")) + [
    "src/factlab/text/nlp.py",
]
QASEM_MODEL = {
    "weights": f"{QASEM_MODEL_DIR}/model.safetensors",
    "config": f"{QASEM_MODEL_DIR}/config.json",
    "templates": f"{QASEM_MODEL_DIR}/templates.json",
    "noun_verbs": f"{QASEM_MODEL_DIR}/noun_verbs.json",
}


rule train_qasem_parser:
    output:
        **QASEM_MODEL,
        log=f"{QASEM_MODEL_DIR}/training_log.json",
        metrics=f"{QASEM_MODEL_DIR}/metrics.json",
    input:
        qasrl_gs="results/data/qasrl_gs.parquet",
        qanom="results/data/qanom.parquet",
        code=MODELS_CODE,
    params:
        out_dir=lambda wildcards, output: str(Path(output.weights).parent),
        settings=json.dumps(QASEM["train"], sort_keys=True),
        device=QASEM["device"],
    threads: QASEM["threads"]
    # The longest job, and every preprocess_qas waits for it: start it before the preprocess jobs.
    priority: 50
    resources:
        gpu=int(QASEM["device"] == "cuda"),
    benchmark:
        "benchmarks/models/train_qasem_parser.tsv"
    conda:
        CONDA_ENV
    log:
        "logs/models/train_qasem_parser.log",
    shell:
        "factlab models train-qasem --qasrl-gs {input.qasrl_gs} --qanom {input.qanom} --out-dir {params.out_dir} "
        "--settings {params.settings:q} --threads {threads} --device {params.device} > {log} 2>&1"


rule evaluate_qasem_parser:
    output:
        scores=report(
            f"{QASEM_EVAL_DIR}/scores.csv",
            caption="../report/qasem_parser_scores.rst",
            category="qasem_parser",
        ),
        coverage=report(
            f"{QASEM_EVAL_DIR}/consistency_coverage.csv",
            caption="../report/qasem_parser_coverage.rst",
            category="qasem_parser",
        ),
        detection=f"{QASEM_EVAL_DIR}/predicate_detection.csv",
        coverage_qas=f"{QASEM_EVAL_DIR}/consistency_coverage_qas.parquet",
        predictions_qasrl=f"{QASEM_EVAL_DIR}/predictions_qasrl_gs_test.parquet",
        predictions_qanom=f"{QASEM_EVAL_DIR}/predictions_qanom_test.parquet",
        metrics=f"{QASEM_EVAL_DIR}/metrics.json",
        md=report(
            "paper/tables/qasem_parser.md",
            caption="../report/qasem_parser_table.rst",
            category="qasem_parser",
        ),
        tex="paper/tables/qasem_parser.tex",
    input:
        **QASEM_MODEL,
        qasrl_gs="results/data/qasrl_gs.parquet",
        qanom="results/data/qanom.parquet",
        responses="results/data/qasem_consistency.parquet",
        qas="results/data/qasem_consistency_qas.parquet",
        code=MODELS_CODE + TABLE_CODE,
    params:
        model_dir=lambda wildcards, input: str(Path(input.weights).parent),
        out_dir=lambda wildcards, output: str(Path(output.scores).parent),
        iou=QASEM["evaluate"]["iou_threshold"],
        batch_size=QASEM["evaluate"]["batch_size"],
        max_sentences=QASEM["evaluate"]["max_sentences"],
        device=QASEM["device"],
    threads: QASEM["threads"]
    resources:
        gpu=int(QASEM["device"] == "cuda"),
    benchmark:
        "benchmarks/models/evaluate_qasem_parser.tsv"
    conda:
        CONDA_ENV
    log:
        "logs/models/evaluate_qasem_parser.log",
    shell:
        "factlab models evaluate-qasem --model-dir {params.model_dir} --qasrl-gs {input.qasrl_gs} --qanom {input.qanom} "
        "--consistency-responses {input.responses} --consistency-qas {input.qas} --out-dir {params.out_dir} "
        "--out-md {output.md} --out-tex {output.tex} "
        "--iou-threshold {params.iou} --max-sentences {params.max_sentences} --batch-size {params.batch_size} "
        "--threads {threads} --device {params.device} > {log} 2>&1"


QASEM_OUTPUTS = [
    *rules.train_qasem_parser.output,
    *rules.evaluate_qasem_parser.output,
]


rule qasem_parser:
    input:
        QASEM_OUTPUTS,


# QASem units of every preprocessed benchmark: the parser chosen by qasem.parser (trained: the model
# above; hub: a published T5 by hub id or local folder, for online users).
rule preprocess_qas:
    output:
        qas="results/preprocess/{benchmark}/qas.parquet",
        report="results/preprocess/{benchmark}/reports/qas.json",
    input:
        sentences="results/preprocess/{benchmark}/sentences.parquet",
        parser=list(QASEM_MODEL.values()) if QASEM["parser"] == "trained" else [],
        code=MODELS_CODE,
    params:
        parser=QASEM["parser"],
        model=lambda wildcards, input: (
            str(Path(input.parser[0]).parent) if QASEM["parser"] == "trained" else QASEM["hub"]["model"]
        ),
        device=QASEM["device"],
        hub_format=QASEM["hub"]["format"],
        num_beams=QASEM["hub"]["num_beams"],
        max_new_tokens=QASEM["hub"]["max_new_tokens"],
        batch_size=QASEM["hub"]["batch_size"],
    threads: QASEM["threads"]
    benchmark:
        "benchmarks/preprocess/preprocess_qas/{benchmark}.tsv"
    conda:
        CONDA_ENV
    log:
        "logs/preprocess/{benchmark}/qas.log",
    shell:
        "factlab preprocess qas --benchmark {wildcards.benchmark} --sentences {input.sentences} "
        "--parser {params.parser} --model {params.model} --device {params.device} --batch-size {params.batch_size} "
        "--hub-format {params.hub_format} --num-beams {params.num_beams} --max-new-tokens {params.max_new_tokens} "
        "--out {output.qas} --report {output.report} > {log} 2>&1"


QAS_OUTPUTS = expand("results/preprocess/{benchmark}/qas.parquet", benchmark=PREPROCESS_BENCHMARKS)


rule qas:
    input:
        QAS_OUTPUTS,
