# Preprocess: sentences and triples per benchmark (factlab.preprocess.benchmark), each its own
# file so later stages depend only on what they read; report.json merges the counts and words/s.
#   results/preprocess/<benchmark>/sentences.parquet  sources split once per doc_id, outputs per example_id
#   results/preprocess/<benchmark>/triples.parquet    OpenIE triples of every sentence, for the benchmarks that
#                                                     openie_triples scores (TRIPLE_BENCHMARKS); of its
#                                                     seeded sample's sentences where it scores one (score.sample)
#   results/preprocess/<benchmark>/report.json        counts (sentences, empties, triples), seconds, words_per_s
#   results/preprocess/<benchmark>/qas.parquet        QASem QA pairs of every output sentence (qasem.parser), for the
#                                                     benchmarks whose QAs QASemConsistency reads; of its seeded
#                                                     sample's sentences where it scores one (score.sample)

PREPROCESS_DIR = "results/preprocess/{benchmark}"
PREPROCESS_BENCHMARKS = PLAN.preprocess_benchmarks
_not_built = sorted(set(PREPROCESS_BENCHMARKS) - set(PLAN.benchmarks))
if _not_built:
    raise ConfigError(
        f"params.yaml preprocess.benchmarks names benchmarks that data.benchmarks does not build: {_not_built}"
    )
PREPROCESS_MAX_EXAMPLES = PLAN.max_examples
# Triples and parser QAs only for the benchmarks whose scoring jobs read them.
TRIPLE_BENCHMARKS = PLAN.triple_benchmarks
PARSED_QA_BENCHMARKS = PLAN.parsed_qa_benchmarks


wildcard_constraints:
    benchmark="[A-Za-z0-9_]+",


rule preprocess_sentences:
    input:
        data="results/data/{benchmark}.parquet",
        code=code("preprocess", "sentences"),
    output:
        sentences=f"{PREPROCESS_DIR}/sentences.parquet",
        report=f"{PREPROCESS_DIR}/reports/sentences.json",
    log:
        "logs/preprocess/{benchmark}/sentences.log",
    benchmark:
        "benchmarks/preprocess/preprocess_sentences/{benchmark}.tsv"
    priority: TUNING_PATH_PRIORITY
    conda:
        CONDA_ENV
    threads: 1
    params:
        env=ONE_THREAD,
        max_examples=PREPROCESS_MAX_EXAMPLES,
        splitter=param("preprocess.sentence_splitter"),
        batch_size=param("preprocess.spacy_batch_size"),
    shell:
        "{params.env} factlab preprocess sentences --benchmark {wildcards.benchmark} --data {input.data} "
        "--max-examples {params.max_examples} --splitter {params.splitter} --batch-size {params.batch_size} "
        "--out {output.sentences} --report {output.report} > {log} 2>&1"


# The examples OpenIE triples and QASemConsistency score where score.sampled_benchmarks samples them
# (PLAN.sample_arguments, read by the jobs): their triples and QAs are drawn for those examples only. The
# keys are read here so that DVC's preprocess stage depends on them.
for _key in ("score.sample", "score.sampled_benchmarks"):
    param(_key)


rule preprocess_triples:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=f"{PREPROCESS_DIR}/sentences.parquet",
        code=code("preprocess", "triples"),
    output:
        triples=f"{PREPROCESS_DIR}/triples.parquet",
        report=f"{PREPROCESS_DIR}/reports/triples.json",
    log:
        "logs/preprocess/{benchmark}/triples.log",
    benchmark:
        "benchmarks/preprocess/preprocess_triples/{benchmark}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        env=ONE_THREAD,
        batch_size=param("preprocess.spacy_batch_size"),
        max_examples=PREPROCESS_MAX_EXAMPLES,
        sample=lambda wildcards: PLAN.sample_arguments(
            "openie_triples", wildcards.benchmark
        ),
    shell:
        "{params.env} factlab preprocess triples --benchmark {wildcards.benchmark} --data {input.data} "
        "--max-examples {params.max_examples} --sentences {input.sentences} --batch-size {params.batch_size} "
        "{params.sample} --out {output.triples} --report {output.report} > {log} 2>&1"


rule preprocess_report:
    input:
        sentences=f"{PREPROCESS_DIR}/reports/sentences.json",
        # a benchmark's triples report, where its triples are extracted
        triples=lambda wildcards: (
            f"results/preprocess/{wildcards.benchmark}/reports/triples.json"
            if wildcards.benchmark in TRIPLE_BENCHMARKS
            else []
        ),
        code=code("preprocess", "report"),
    output:
        f"{PREPROCESS_DIR}/report.json",
    log:
        "logs/preprocess/{benchmark}/report.log",
    conda:
        CONDA_ENV
    params:
        triples=lambda wildcards, input: (
            f"--triples-report {input.triples}" if input.triples else ""
        ),
    shell:
        "factlab preprocess report --sentences-report {input.sentences} "
        "{params.triples} --out {output} > {log} 2>&1"


# Every preprocessed benchmark's units and report, triples where extracted.
rule preprocess:
    input:
        expand(
            "results/preprocess/{benchmark}/{unit}",
            benchmark=PREPROCESS_BENCHMARKS,
            unit=["sentences.parquet", "report.json"],
        ),
        expand(
            "results/preprocess/{benchmark}/triples.parquet",
            benchmark=TRIPLE_BENCHMARKS,
        ),


# QASem units of every preprocessed benchmark: the parser chosen by qasem.parser (trained: the model
# above; hub: a published T5 by hub id or local folder, for online users).
QASEM_PARSER = param("qasem.parser")
QASEM_HUB_MODEL = param("qasem.hub.model")
# The hub parser's decoding settings reach the rule only when it is used: with the trained parser,
# changing them reruns nothing.
QASEM_HUB_ARGUMENTS = (
    f"--hub-format {param('qasem.hub.format')} --num-beams {param('qasem.hub.num_beams')} "
    f"--max-new-tokens {param('qasem.hub.max_new_tokens')}"
    if QASEM_PARSER == "hub"
    else ""
)


rule preprocess_qas:
    input:
        data="results/data/{benchmark}.parquet",
        sentences="results/preprocess/{benchmark}/sentences.parquet",
        parser=list(QASEM_MODEL.values()) if QASEM_PARSER == "trained" else [],
        code=code("preprocess", "qas"),
    output:
        qas=PARSED_QAS,
        report="results/preprocess/{benchmark}/reports/qas.json",
    log:
        "logs/preprocess/{benchmark}/qas.log",
    benchmark:
        "benchmarks/preprocess/preprocess_qas/{benchmark}.tsv"
    conda:
        CONDA_ENV
    threads: param("qasem.threads")
    params:
        parser=QASEM_PARSER,
        model=lambda wildcards, input: (
            str(Path(input.parser[0]).parent)
            if QASEM_PARSER == "trained"
            else QASEM_HUB_MODEL
        ),
        device=param("qasem.device"),
        batch_size=param("qasem.batch_size"),
        hub=QASEM_HUB_ARGUMENTS,
        max_examples=PREPROCESS_MAX_EXAMPLES,
        sample=lambda wildcards: PLAN.sample_arguments(
            "qasem_consistency", wildcards.benchmark
        ),
    shell:
        "factlab preprocess qas --benchmark {wildcards.benchmark} --data {input.data} "
        "--max-examples {params.max_examples} --sentences {input.sentences} {params.sample} "
        "--parser {params.parser} --model {params.model} --device {params.device} --batch-size {params.batch_size} "
        "{params.hub} --out {output.qas} --report {output.report} > {log} 2>&1"


# The parser's QA tables that a scoring job reads: only they are parsed (parsing every evaluation benchmark costs
# many CPU-minutes, and only QASemConsistency reads QAs); DVC's preprocess stage builds them too.
rule qas:
    input:
        expand(PARSED_QAS, benchmark=PARSED_QA_BENCHMARKS),
