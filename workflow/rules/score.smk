# Score: factlab's scorers on every preprocessed benchmark. Commands: `factlab score …` (src/factlab/score/).
#   results/score/<benchmark>/alignscore.parquet        example_id, score, per-sentence detail (best chunk and its span)
#   results/score/<benchmark>/reports/alignscore.json   engine counts (pairs, duplicates, padding, premise cuts), pairs/s
#   results/score/alignscore_tuning.csv                 AUC of each (words per chunk, aggregation, support head) per validation benchmark,
#                                                       and of the chosen cell with each top_chunks candidate (chunks per sentence)
#   results/score/alignscore_choice.json                the cell and top_chunks every score_alignscore job uses (chosen on validation only)
#   results/benchmarks/scoring_throughput.json          the engine against AlignScore's reference loop (same weights, pairs)

SCORE_DIR = "results/score/{benchmark}"
SHARD_DIR = f"{SCORE_DIR}/shards"
SCORE_SHARDS = param("score.shards")
# factlab's scorers, then the user's (scorers.custom: results/score/<benchmark>/<name>.parquet like any other's)
SCORERS = PLAN.scorers
SCORE_ON_GPU = PLAN.engine.device == "cuda"


wildcard_constraints:
    shard=r"\d+",
    scorer=r"[a-z_]+",


SCORE_BENCHMARKS = PLAN.score_benchmarks
_not_preprocessed = sorted(set(SCORE_BENCHMARKS) - set(PLAN.preprocess_benchmarks))
if _not_preprocessed:
    raise ConfigError(
        f"params.yaml score.benchmarks names benchmarks that preprocess.benchmarks does not preprocess: {_not_preprocessed}"
    )
_restricted_to = {
    name for names in param("score.scorer_benchmarks").values() for name in names
}
_unknown_restricted = sorted(_restricted_to - set(SPECS))
if _unknown_restricted:
    raise ConfigError(
        f"params.yaml score.scorer_benchmarks names unknown benchmarks: {_unknown_restricted}"
    )
for _scorer, _names in param("score.sampled_benchmarks").items():
    _unknown_sampled = sorted(set(_names) - set(SPECS))
    if _unknown_sampled:
        raise ConfigError(
            f"params.yaml score.sampled_benchmarks.{_scorer} names unknown benchmarks: {_unknown_sampled}"
        )
    _whole = param("score.scorer_benchmarks").get(_scorer) or sorted(SPECS)
    _both = sorted(set(_names) & set(_whole))
    if _both:
        raise ConfigError(
            f"params.yaml score.sampled_benchmarks.{_scorer} names benchmarks it scores whole "
            f"(score.scorer_benchmarks.{_scorer}, empty = every one): {_both}"
        )
# Read by every scoring job (sample_arguments, common.smk), and here so that DVC's score stage depends on them.
SAMPLED_BENCHMARKS = param("score.sampled_benchmarks")
param("score.sample")
ALIGNSCORE_MODEL = param("score.alignscore.model")
TRAINED_ALIGNER = ALIGNSCORE_MODEL == "trained"
# AlignScore's runtime: OpenVINO reads the trained aligner's ONNX graph on the CPU, as `factlab check` does (the
# checker's scores are the pipeline's); torch for a hub model or a GPU (config/gpu.yaml).
ALIGNSCORE_RUNTIME = PLAN.alignscore_runtime
ALIGNSCORE_MODEL_FILES = (
    list(ALIGNER_MODEL.values())
    + ([ALIGNER_GRAPH] if ALIGNSCORE_RUNTIME == "openvino" else [])
    if TRAINED_ALIGNER
    else []
)
SUMMAC_MODEL = PLAN.summac_zs_model
TRAINED_SUMMAC = SUMMAC_MODEL == "trained"
# SummaC-ZS's reading of NLI, for its own jobs and a user's NLI model (score_nli_model)
SUMMAC_ZS_SETTINGS = PLAN.summac_zs_settings
ALL_CORES = 1024
# Validation benchmarks the chunk size and aggregation are tuned on: those of the list that are preprocessed.
ALIGNSCORE_TUNING = param("score.alignscore.tuning")
TUNING_BENCHMARKS = PLAN.tuning_benchmarks


# Every AlignScore and QASemConsistency job waits for the chunk size chosen here: run it as soon as the
# aligner is trained, ahead of the baselines, SummaC and SCALE jobs, which would otherwise run first and hold
# every AlignScore job back. Its inputs are ready by then.
rule tune_alignscore:
    input:
        data=lambda wildcards: tuning_files("results/data/{benchmark}.parquet"),
        sentences=lambda wildcards: tuning_files(
            rules.preprocess_sentences.output.sentences
        ),
        model=ALIGNSCORE_MODEL_FILES,
        code=code("score", "alignscore-tune"),
    output:
        table="results/score/alignscore_tuning.csv",
        choice="results/score/alignscore_choice.json",
    log:
        "logs/score/alignscore_tuning.log",
    benchmark:
        "benchmarks/score/alignscore_tuning.tsv"
    priority: TUNING_PATH_PRIORITY
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
    params:
        model=lambda wildcards, input: aligner_model_argument(input, ALIGNSCORE_MODEL),
        entailment_label=param("score.alignscore.entailment_label"),
        max_examples=PLAN.max_examples,
        settings=json.dumps(
            {k: v for k, v in ALIGNSCORE_TUNING.items() if k != "benchmarks"},
            sort_keys=True,
        ),
        chunk_policy=PLAN.chunk_policy,
        token_budget=PLAN.engine.token_budget,
        max_batch_pairs=PLAN.engine.max_batch_pairs,
        precision=PLAN.engine.precision,
        device=PLAN.engine.device,
        runtime=ALIGNSCORE_RUNTIME,
    shell:
        "factlab score alignscore-tune --data {input.data} --sentences {input.sentences} --max-examples {params.max_examples} "
        "--model {params.model:q} --entailment-label {params.entailment_label:q} --settings {params.settings:q} "
        "--chunk-policy {params.chunk_policy} --token-budget {params.token_budget} --max-batch-pairs {params.max_batch_pairs} "
        "--precision {params.precision} --threads {threads} --device {params.device} --runtime {params.runtime} "
        "--out-table {output.table} --out-choice {output.choice} > {log} 2>&1"


rule score_alignscore:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=rules.preprocess_sentences.output.sentences,
        model=ALIGNSCORE_MODEL_FILES,
        choice=rules.tune_alignscore.output.choice,
        code=code("score", "alignscore"),
    output:
        scores=temp(f"{SHARD_DIR}/alignscore/{{shard}}.parquet"),
        report=temp(f"{SHARD_DIR}/alignscore/{{shard}}.json"),
    log:
        "logs/score/{benchmark}/alignscore.{shard}.log",
    benchmark:
        "benchmarks/score/alignscore/{benchmark}.{shard}.tsv"
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
        mem_mb=PLAN.engine.mem_mb,
    params:
        model=lambda wildcards, input: aligner_model_argument(input, ALIGNSCORE_MODEL),
        entailment_label=param("score.alignscore.entailment_label"),
        max_examples=PLAN.max_examples,
        sample=lambda wildcards: PLAN.sample_arguments(
            "alignscore", wildcards.benchmark
        ),
        shards=SCORE_SHARDS,
        chunk_policy=PLAN.chunk_policy,
        token_budget=PLAN.engine.token_budget,
        max_batch_pairs=PLAN.engine.max_batch_pairs,
        precision=PLAN.engine.precision,
        device=PLAN.engine.device,
        runtime=ALIGNSCORE_RUNTIME,
    shell:
        "factlab score alignscore --benchmark {wildcards.benchmark} --data {input.data} --sentences {input.sentences} "
        "--max-examples {params.max_examples} {params.sample} "
        "--shard {wildcards.shard} --shards {params.shards} "
        "--model {params.model:q} --entailment-label {params.entailment_label:q} "
        "--choice {input.choice} --chunk-policy {params.chunk_policy} "
        "--token-budget {params.token_budget} --max-batch-pairs {params.max_batch_pairs} --precision {params.precision} "
        "--threads {threads} --device {params.device} --runtime {params.runtime} --out {output.scores} --report {output.report} > {log} 2>&1"


rule score_summac_zs:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=rules.preprocess_sentences.output.sentences,
        model=list(ALIGNER_MODEL.values()) if TRAINED_SUMMAC else [],
        code=code("score", "summac-zs"),
    output:
        scores=temp(f"{SHARD_DIR}/summac_zs/{{shard}}.parquet"),
        report=temp(f"{SHARD_DIR}/summac_zs/{{shard}}.json"),
        # the NLI matrices' pairs, read by this shard's SummaC-Conv job (same backbone): scored once
        pairs=temp(f"{SHARD_DIR}/summac_zs/{{shard}}.pairs.parquet"),
    log:
        "logs/score/{benchmark}/summac_zs.{shard}.log",
    benchmark:
        "benchmarks/score/summac_zs/{benchmark}.{shard}.tsv"
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
        mem_mb=PLAN.engine.mem_mb,
    params:
        model=lambda wildcards, input: aligner_model_argument(input, SUMMAC_MODEL),
        entailment_label=param("score.summac_zs.entailment_label"),
        contradiction_label=param("score.summac_zs.contradiction_label"),
        settings=SUMMAC_ZS_SETTINGS,
        max_examples=PLAN.max_examples,
        sample=lambda wildcards: PLAN.sample_arguments("summac_zs", wildcards.benchmark),
        shards=SCORE_SHARDS,
        token_budget=PLAN.engine.token_budget,
        max_batch_pairs=PLAN.engine.max_batch_pairs,
        precision=PLAN.engine.precision,
        device=PLAN.engine.device,
    shell:
        "factlab score summac-zs --benchmark {wildcards.benchmark} --data {input.data} --sentences {input.sentences} "
        "--max-examples {params.max_examples} {params.sample} "
        "--shard {wildcards.shard} --shards {params.shards} "
        "--model {params.model:q} --entailment-label {params.entailment_label:q} "
        "--contradiction-label {params.contradiction_label:q} --settings {params.settings:q} "
        "--token-budget {params.token_budget} --max-batch-pairs {params.max_batch_pairs} --precision {params.precision} "
        "--threads {threads} --device {params.device} --out {output.scores} --report {output.report} "
        "--pairs-out {output.pairs} > {log} 2>&1"


rule fit_summac_conv:
    input:
        mixture=rules.build_training_mixture.output.mixture,
        model=(list(ALIGNER_MODEL.values()) if SUMMAC_MODEL == "trained" else []),
        code=code("score", "summac-conv-fit"),
    output:
        head=SUMMAC_CONV_HEAD,
        curves="results/score/summac_conv_head/curves.csv",
        metrics="results/score/summac_conv_head/metrics.json",
    log:
        "logs/score/fit_summac_conv.log",
    benchmark:
        "benchmarks/score/fit_summac_conv.tsv"
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
    params:
        model=lambda wildcards, input: aligner_model_argument(input, SUMMAC_MODEL),
        entailment_label=param("score.summac_zs.entailment_label"),
        contradiction_label=param("score.summac_zs.contradiction_label"),
        conv=json.dumps(
            {k: v for k, v in param("score.summac_conv").items() if k != "train"},
            sort_keys=True,
        ),
        settings=json.dumps(param("score.summac_conv.train"), sort_keys=True),
        device=PLAN.engine.device,
        out_dir=lambda wildcards, output: str(Path(output.head).parent),
    shell:
        "factlab score summac-conv-fit --mixture {input.mixture} --model {params.model:q} "
        "--entailment-label {params.entailment_label:q} --contradiction-label {params.contradiction_label:q} "
        "--conv-settings {params.conv:q} --settings {params.settings:q} --threads {threads} --device {params.device} "
        "--out-dir {params.out_dir} > {log} 2>&1"


# SummaC-Conv reuses SummaC-ZS's NLI pairs where ZS scores the same benchmark.
SUMMAC_ZS_BENCHMARKS = (
    PLAN.scored_by("summac_zs", SCORE_BENCHMARKS) if "summac_zs" in SCORERS else []
)


rule score_summac_conv:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=rules.preprocess_sentences.output.sentences,
        model=list(ALIGNER_MODEL.values()) if TRAINED_SUMMAC else [],
        head=SUMMAC_CONV_HEAD,
        pairs=lambda wildcards: (
            expand(
                rules.score_summac_zs.output.pairs,
                benchmark=wildcards.benchmark,
                shard=wildcards.shard,
            )
            if wildcards.benchmark in SUMMAC_ZS_BENCHMARKS
            else []
        ),
        code=code("score", "summac-conv"),
    output:
        scores=temp(f"{SHARD_DIR}/summac_conv/{{shard}}.parquet"),
        report=temp(f"{SHARD_DIR}/summac_conv/{{shard}}.json"),
    log:
        "logs/score/{benchmark}/summac_conv.{shard}.log",
    benchmark:
        "benchmarks/score/summac_conv/{benchmark}.{shard}.tsv"
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
        mem_mb=PLAN.engine.mem_mb,
    params:
        model=lambda wildcards, input: aligner_model_argument(input, SUMMAC_MODEL),
        entailment_label=param("score.summac_zs.entailment_label"),
        contradiction_label=param("score.summac_zs.contradiction_label"),
        settings=json.dumps(
            {k: v for k, v in param("score.summac_conv").items() if k != "train"},
            sort_keys=True,
        ),
        pairs_in=lambda wildcards, input: input.pairs[0] if input.pairs else "none",
        max_examples=PLAN.max_examples,
        sample=lambda wildcards: PLAN.sample_arguments(
            "summac_conv", wildcards.benchmark
        ),
        shards=SCORE_SHARDS,
        token_budget=PLAN.engine.token_budget,
        max_batch_pairs=PLAN.engine.max_batch_pairs,
        precision=PLAN.engine.precision,
        device=PLAN.engine.device,
    shell:
        "factlab score summac-conv --benchmark {wildcards.benchmark} --data {input.data} --sentences {input.sentences} "
        "--max-examples {params.max_examples} {params.sample} "
        "--shard {wildcards.shard} --shards {params.shards} "
        "--model {params.model:q} --entailment-label {params.entailment_label:q} "
        "--contradiction-label {params.contradiction_label:q} --head {input.head} --settings {params.settings:q} "
        "--pairs-in {params.pairs_in} "
        "--token-budget {params.token_budget} --max-batch-pairs {params.max_batch_pairs} --precision {params.precision} "
        "--threads {threads} --device {params.device} --out {output.scores} --report {output.report} > {log} 2>&1"


SCALE_MODEL = param("score.scale.model")
TRAINED_SCALE = SCALE_MODEL == "trained"
SCALE_MODEL_KEYS = ("model", "entailment_label")
SCALE_SETTINGS = json.dumps(
    {
        key: value
        for key, value in param("score.scale").items()
        if key not in SCALE_MODEL_KEYS
    },
    sort_keys=True,
)


rule score_scale:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=rules.preprocess_sentences.output.sentences,
        model=list(ALIGNER_MODEL.values()) if TRAINED_SCALE else [],
        code=code("score", "scale"),
    output:
        scores=temp(f"{SHARD_DIR}/scale/{{shard}}.parquet"),
        report=temp(f"{SHARD_DIR}/scale/{{shard}}.json"),
    log:
        "logs/score/{benchmark}/scale.{shard}.log",
    benchmark:
        "benchmarks/score/scale/{benchmark}.{shard}.tsv"
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
        mem_mb=PLAN.engine.mem_mb,
    params:
        model=lambda wildcards, input: aligner_model_argument(input, SCALE_MODEL),
        entailment_label=param("score.scale.entailment_label"),
        settings=SCALE_SETTINGS,
        max_examples=PLAN.max_examples,
        sample=lambda wildcards: PLAN.sample_arguments("scale", wildcards.benchmark),
        shards=SCORE_SHARDS,
        token_budget=PLAN.engine.token_budget,
        max_batch_pairs=PLAN.engine.max_batch_pairs,
        precision=PLAN.engine.precision,
        device=PLAN.engine.device,
    shell:
        "factlab score scale --benchmark {wildcards.benchmark} --data {input.data} --sentences {input.sentences} "
        "--max-examples {params.max_examples} {params.sample} "
        "--shard {wildcards.shard} --shards {params.shards} "
        "--model {params.model:q} --entailment-label {params.entailment_label:q} --settings {params.settings:q} "
        "--token-budget {params.token_budget} --max-batch-pairs {params.max_batch_pairs} --precision {params.precision} "
        "--threads {threads} --device {params.device} --out {output.scores} --report {output.report} > {log} 2>&1"


# SCALE's binary-search evidence retrieval against a brute-force argmax, on WiCE's annotated supporting sentences.
rule scale_retrieval:
    input:
        data="results/data/wice_claims.parquet",
        model=list(ALIGNER_MODEL.values()) if TRAINED_SCALE else [],
        # the tuned chunk size: the best-chunk evidence of AlignScore and `factlab check`, measured beside SCALE's
        choice=rules.tune_alignscore.output.choice,
        code=code("score", "scale-retrieval"),
    output:
        table="results/score/wice_claims/scale_retrieval.csv",
        report="results/score/wice_claims/scale_retrieval.json",
    log:
        "logs/score/wice_claims/scale_retrieval.log",
    benchmark:
        "benchmarks/score/scale_retrieval.tsv"
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
        mem_mb=PLAN.engine.mem_mb,
    params:
        model=lambda wildcards, input: aligner_model_argument(input, SCALE_MODEL),
        entailment_label=param("score.scale.entailment_label"),
        settings=SCALE_SETTINGS,
        token_budget=PLAN.engine.token_budget,
        max_batch_pairs=PLAN.engine.max_batch_pairs,
        precision=PLAN.engine.precision,
        device=PLAN.engine.device,
        chunk_policy=PLAN.chunk_policy,
    shell:
        "factlab score scale-retrieval --data {input.data} --model {params.model:q} "
        "--entailment-label {params.entailment_label:q} --settings {params.settings:q} "
        "--alignscore-choice {input.choice} --chunk-policy {params.chunk_policy} "
        "--token-budget {params.token_budget} --max-batch-pairs {params.max_batch_pairs} --precision {params.precision} "
        "--threads {threads} --device {params.device} --out {output.table} --report {output.report} > {log} 2>&1"


QASEM_CONSISTENCY = param("score.qasem_consistency")
TRAINED_QASEM_CONSISTENCY = QASEM_CONSISTENCY["model"] == "trained"
QASEM_CONSISTENCY_MODEL_KEYS = ("model", "entailment_label")
# Benchmarks with annotated QAs (GOLD_QAS, common.smk) are never sampled: their QA decomposition
# (score_qa_decomposition) compares every example, and reads the scorer's own table.
_sampled_gold = sorted(
    set(SAMPLED_BENCHMARKS.get("qasem_consistency", [])) & set(GOLD_QAS)
)
if _sampled_gold:
    raise ConfigError(
        f"params.yaml score.sampled_benchmarks.qasem_consistency names benchmarks with gold QAs, whose QA "
        f"decomposition compares every example: {_sampled_gold}"
    )


# class_prior balanced reads the prior the trained aligner's binary head learnt: its training mixture's labels.
BALANCED_QASEM_CONSISTENCY = QASEM_CONSISTENCY["class_prior"] == "balanced"
if BALANCED_QASEM_CONSISTENCY and not TRAINED_QASEM_CONSISTENCY:
    raise ConfigError(
        "params.yaml score.qasem_consistency class_prior 'balanced' needs model 'trained' (a hub model's "
        "training labels are unknown here: set class_prior 'trained')"
    )
QASEM_CONSISTENCY_MIXTURE = (
    [rules.build_training_mixture.output.mixture] if BALANCED_QASEM_CONSISTENCY else []
)
QASEM_CONSISTENCY_SETTINGS = {
    key: value
    for key, value in QASEM_CONSISTENCY.items()
    if key not in QASEM_CONSISTENCY_MODEL_KEYS
}
# What every QASemConsistency scoring job passes (score_qasem_consistency, score_qa_decomposition); each rule
# adds its settings and its shard.
QASEM_CONSISTENCY_JOB = dict(
    model=lambda wildcards, input: aligner_model_argument(
        input, QASEM_CONSISTENCY["model"]
    ),
    entailment_label=param("score.qasem_consistency.entailment_label"),
    qas=lambda wildcards, input: input.qas[0] if input.qas else "none",
    mixture=lambda wildcards, input: input.mixture[0] if input.mixture else "none",
    chunk_policy=PLAN.chunk_policy,
    max_examples=PLAN.max_examples,
    token_budget=PLAN.engine.token_budget,
    max_batch_pairs=PLAN.engine.max_batch_pairs,
    precision=PLAN.engine.precision,
    device=PLAN.engine.device,
)
QASEM_CONSISTENCY_COMMAND = (
    "factlab score qasem-consistency --benchmark {wildcards.benchmark} --data {input.data} --sentences {input.sentences} "
    "--max-examples {params.max_examples} {params.sample} "
    "--shard {params.shard} --shards {params.shards} "
    "--model {params.model:q} --entailment-label {params.entailment_label:q} --qas {params.qas:q} "
    "--choice {input.choice} --chunk-policy {params.chunk_policy} --settings {params.settings:q} "
    "--training-mixture {params.mixture:q} "
    "--token-budget {params.token_budget} --max-batch-pairs {params.max_batch_pairs} --precision {params.precision} "
    "--threads {threads} --device {params.device} --out {output.scores} --report {output.report} > {log} 2>&1"
)


rule score_qasem_consistency:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=rules.preprocess_sentences.output.sentences,
        qas=qasem_consistency_qas,
        model=list(ALIGNER_MODEL.values()) if TRAINED_QASEM_CONSISTENCY else [],
        mixture=QASEM_CONSISTENCY_MIXTURE,
        choice=rules.tune_alignscore.output.choice,
        code=code("score", "qasem-consistency"),
    output:
        scores=temp(f"{SHARD_DIR}/qasem_consistency/{{shard}}.parquet"),
        report=temp(f"{SHARD_DIR}/qasem_consistency/{{shard}}.json"),
    log:
        "logs/score/{benchmark}/qasem_consistency.{shard}.log",
    benchmark:
        "benchmarks/score/qasem_consistency/{benchmark}.{shard}.tsv"
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
        mem_mb=PLAN.engine.mem_mb,
    params:
        **QASEM_CONSISTENCY_JOB,
        settings=json.dumps(QASEM_CONSISTENCY_SETTINGS, sort_keys=True),
        sample=lambda wildcards: PLAN.sample_arguments(
            "qasem_consistency", wildcards.benchmark
        ),
        shard=lambda wildcards: wildcards.shard,
        shards=SCORE_SHARDS,
    shell:
        QASEM_CONSISTENCY_COMMAND


# QASemConsistency's decomposition measured (factlab metaeval qa-decomposition): a benchmark with gold QAs scored
# the three ways of QA_DECOMPOSITIONS (common.smk) with score.qasem_consistency's model, aggregation and threshold;
# a decomposition with the scorer's own settings is its table of the benchmark: scored once.
QA_DECOMPOSITION_BENCHMARKS = PLAN.qa_decomposition_benchmarks
QA_DECOMPOSITIONS_SCORED = PLAN.qa_decompositions_scored


rule score_qa_decomposition:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=rules.preprocess_sentences.output.sentences,
        qas=qa_decomposition_qas,
        model=list(ALIGNER_MODEL.values()) if TRAINED_QASEM_CONSISTENCY else [],
        mixture=QASEM_CONSISTENCY_MIXTURE,
        choice=rules.tune_alignscore.output.choice,
        code=code("score", "qasem-consistency"),
    output:
        scores=f"{SCORE_DIR}/qa_decomposition.{{decomposition}}.parquet",
        report=f"{SCORE_DIR}/qa_decomposition.{{decomposition}}.json",
    log:
        "logs/score/{benchmark}/qa_decomposition.{decomposition}.log",
    benchmark:
        "benchmarks/score/qa_decomposition/{benchmark}.{decomposition}.tsv"
    wildcard_constraints:
        benchmark="|".join(GOLD_QAS),
        decomposition="|".join(QA_DECOMPOSITIONS),
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
        mem_mb=PLAN.engine.mem_mb,
    params:
        **QASEM_CONSISTENCY_JOB,
        settings=lambda wildcards: json.dumps(
            {
                **QASEM_CONSISTENCY_SETTINGS,
                **QA_DECOMPOSITIONS[wildcards.decomposition],
            },
            sort_keys=True,
        ),
        sample="--sample-examples all",  # a benchmark with gold QAs is never sampled (GOLD_QAS)
        shard=0,
        shards=1,
    shell:
        QASEM_CONSISTENCY_COMMAND


# The registry's scorers that the one baseline rule scores.
BASELINE_SCORERS = [
    name for name, entry in BUILT_IN_SCORERS.items() if entry.job == "baseline"
]
# The model-based baselines run their encoders at the engine's precision (ROUGE has none).
SCORE_PRECISION = PLAN.engine.precision
BASELINE_SETTINGS = {
    scorer: json.dumps(param(BUILT_IN_SCORERS[scorer].settings), sort_keys=True)
    for scorer in BASELINE_SCORERS
}


rule score_baseline:
    input:
        unpack(baseline_inputs),
    output:
        scores=temp(f"{SHARD_DIR}/{{scorer}}/{{shard}}.parquet"),
        report=temp(f"{SHARD_DIR}/{{scorer}}/{{shard}}.json"),
    log:
        "logs/score/{benchmark}/{scorer}.{shard}.log",
    benchmark:
        "benchmarks/score/{scorer}/{benchmark}.{shard}.tsv"
    wildcard_constraints:
        scorer="|".join(BASELINE_SCORERS),
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=lambda wildcards: int(SCORE_ON_GPU and wildcards.scorer != "rouge"),
        mem_mb=PLAN.engine.mem_mb,
    params:
        command=lambda wildcards: wildcards.scorer.replace("_", "-"),
        settings=lambda wildcards: BASELINE_SETTINGS[wildcards.scorer],
        triples=lambda wildcards, input: (
            f"--triples {input.triples}" if "triples" in input.keys() else ""
        ),
        encoder=lambda wildcards, input: (
            f"--encoder {input.encoder}" if "encoder" in input.keys() else ""
        ),
        precision=lambda wildcards: (
            "" if wildcards.scorer == "rouge" else f"--precision {SCORE_PRECISION}"
        ),
        max_examples=PLAN.max_examples,
        sample=lambda wildcards: PLAN.sample_arguments(
            wildcards.scorer, wildcards.benchmark
        ),
        shards=SCORE_SHARDS,
        device=PLAN.engine.device,
    shell:
        "factlab score {params.command} --benchmark {wildcards.benchmark} --data {input.data} --sentences {input.sentences} "
        "--max-examples {params.max_examples} {params.sample} "
        "--shard {wildcards.shard} --shards {params.shards} {params.triples} {params.encoder} "
        "--settings {params.settings:q} {params.precision} --threads {threads} --device {params.device} "
        "--out {output.scores} --report {output.report} > {log} 2>&1"


# The ensemble: a stack of other scorers' example scores, fitted on validation benchmarks it never scores.
ENSEMBLE = param("score.ensemble")
ENSEMBLE_FIT_BENCHMARKS = PLAN.ensemble_fit_benchmarks
if "ensemble" in SCORERS:
    _absent = sorted(set(ENSEMBLE["members"]) - set(SCORERS))
    if _absent:
        raise ConfigError(
            f"params.yaml score.ensemble.members names scorers that score.scorers does not run: {_absent}"
        )
    _unfitted = [
        (member, name)
        for member in ENSEMBLE["members"]
        for name in ENSEMBLE_FIT_BENCHMARKS
        if name not in PLAN.scored_by(member, SCORE_BENCHMARKS, sampled=False)
    ]
    if _unfitted:
        raise ConfigError(
            f"params.yaml score.scorer_benchmarks: ensemble member {_unfitted[0][0]} does not score its fit benchmark {_unfitted[0][1]}"
        )


# One stack per scored benchmark: its fit examples share no word run with that benchmark's texts.
rule fit_ensemble:
    input:
        evaluated="results/data/{benchmark}.parquet",
        data=expand(
            "results/data/{benchmark}.parquet", benchmark=ENSEMBLE_FIT_BENCHMARKS
        ),
        scores=expand(
            "results/score/{benchmark}/{member}.parquet",
            benchmark=ENSEMBLE_FIT_BENCHMARKS,
            member=ENSEMBLE["members"],
        ),
        code=code("score", "ensemble-fit"),
    output:
        f"{SCORE_DIR}/ensemble_model.json",
    log:
        "logs/score/{benchmark}/fit_ensemble.log",
    benchmark:
        "benchmarks/score/fit_ensemble/{benchmark}.tsv"
    conda:
        CONDA_ENV
    params:
        settings=json.dumps(
            {**ENSEMBLE, "validation_benchmarks": ENSEMBLE_FIT_BENCHMARKS},
            sort_keys=True,
        ),
    shell:
        "factlab score ensemble-fit --benchmark {wildcards.benchmark} --evaluated {input.evaluated} --data {input.data} "
        "--scores {input.scores} --settings {params.settings:q} --out {output} > {log} 2>&1"


rule score_ensemble:
    input:
        data="results/data/{benchmark}.parquet",
        scores=lambda wildcards: [
            f"results/score/{wildcards.benchmark}/{member}.parquet"
            for member in ENSEMBLE["members"]
        ],
        model=rules.fit_ensemble.output[0],
        code=code("score", "ensemble"),
    output:
        scores=temp(f"{SHARD_DIR}/ensemble/{{shard}}.parquet"),
        report=temp(f"{SHARD_DIR}/ensemble/{{shard}}.json"),
    log:
        "logs/score/{benchmark}/ensemble.{shard}.log",
    benchmark:
        "benchmarks/score/ensemble/{benchmark}.{shard}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=PLAN.engine.mem_mb,
    params:
        max_examples=PLAN.max_examples,
        sample=lambda wildcards: PLAN.sample_arguments("ensemble", wildcards.benchmark),
        shards=SCORE_SHARDS,
    shell:
        "factlab score ensemble --benchmark {wildcards.benchmark} --data {input.data} "
        "--max-examples {params.max_examples} {params.sample} "
        "--shard {wildcards.shard} --shards {params.shards} --threads {threads} "
        "--scores {input.scores} --model {input.model} --out {output.scores} --report {output.report} > {log} 2>&1"


# A scorer's shards of one benchmark -> its score table; a failed shard reruns alone.
rule merge_scores:
    input:
        scores=lambda wildcards: shard_files(wildcards, "parquet"),
        reports=lambda wildcards: shard_files(wildcards, "json"),
        code=code("score", "merge"),
    output:
        scores=f"{SCORE_DIR}/{{scorer}}.parquet",
        report=f"{SCORE_DIR}/reports/{{scorer}}.json",
    log:
        "logs/score/{benchmark}/{scorer}.merge.log",
    conda:
        CONDA_ENV
    shell:
        "factlab score merge --scores {input.scores} --reports {input.reports} "
        "--out {output.scores} --report {output.report} > {log} 2>&1"


rule benchmark_scoring_throughput:
    input:
        data=expand("results/data/{benchmark}.parquet", benchmark=SCORE_BENCHMARKS),
        sentences=expand(
            rules.preprocess_sentences.output.sentences, benchmark=SCORE_BENCHMARKS
        ),
        model=list(ALIGNER_MODEL.values()) if TRAINED_ALIGNER else [],
        choice=rules.tune_alignscore.output.choice,
        code=code("score", "throughput"),
    output:
        "results/benchmarks/scoring_throughput.json",
    log:
        "logs/score/scoring_throughput.log",
    conda:
        CONDA_ENV
    # Timings: alone on the machine (Snakemake caps a job's threads at --cores, so this takes them all), unless
    # score.throughput.threads names fewer (the smoke, which only exercises the rule).
    threads: param("score.throughput.threads") or ALL_CORES
    resources:
        gpu=PLAN.engine.gpus,
    params:
        model=lambda wildcards, input: aligner_model_argument(input, ALIGNSCORE_MODEL),
        entailment_label=param("score.alignscore.entailment_label"),
        pairs=param("score.throughput.pairs_per_benchmark"),
        chunk_policy=PLAN.chunk_policy,
        token_budget=PLAN.engine.token_budget,
        max_batch_pairs=PLAN.engine.max_batch_pairs,
        precision=PLAN.engine.precision,
        device=PLAN.engine.device,
    shell:
        "factlab score throughput --data {input.data} --sentences {input.sentences} --model {params.model:q} "
        "--entailment-label {params.entailment_label:q} --pairs-per-benchmark {params.pairs} "
        "--choice {input.choice} --chunk-policy {params.chunk_policy} --token-budget {params.token_budget} "
        "--max-batch-pairs {params.max_batch_pairs} --precision {params.precision} --threads {threads} "
        "--device {params.device} --out {output} > {log} 2>&1"


# A researcher's own scorers (scorers.custom, factlab.score.custom_scorers), checked in common.smk before any job starts.
CUSTOM_SCORERS = PLAN.custom_scorers
# A wildcard constraint no name matches, for a door no scorer uses.
NO_SCORER = "(?!)"
# Door `scores`: the user's files, and the published scores (score.published) written as a user would bring them.
IMPORTED = PLAN.imported_scorers
PYTHON_SCORERS = PLAN.scorers_run_by("python")
NLI_SCORERS = PLAN.scorers_run_by("nli_model")
ALIGNER_SCORERS = PLAN.scorers_run_by("aligner_model")


# Door `scores`: the user's file of one benchmark, checked against its examples, as a score table.
rule import_scores:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=rules.preprocess_sentences.output.sentences,
        scores=lambda wildcards: IMPORTED[wildcards.scorer].scores[wildcards.benchmark],
        code=code("score", "import"),
    output:
        scores=f"{SCORE_DIR}/{{scorer}}.parquet",
        report=f"{SCORE_DIR}/reports/{{scorer}}.json",
    log:
        "logs/score/{benchmark}/{scorer}.import.log",
    wildcard_constraints:
        scorer="|".join(IMPORTED) or NO_SCORER,
    conda:
        CONDA_ENV
    params:
        max_examples=PLAN.max_examples,
        higher=lambda wildcards: str(
            IMPORTED[wildcards.scorer].higher_is_consistent
        ).lower(),
        allow_missing=lambda wildcards: (
            "--allow-missing" if IMPORTED[wildcards.scorer].allow_missing else ""
        ),
    shell:
        "factlab score import --scorer {wildcards.scorer} --benchmark {wildcards.benchmark} --data {input.data} "
        "--sentences {input.sentences} --max-examples {params.max_examples} --scores {input.scores:q} "
        "--higher-is-consistent {params.higher} {params.allow_missing} "
        "--out {output.scores} --report {output.report} > {log} 2>&1"


ruleorder: import_scores > merge_scores


# score.published: one metric's released scores of one TRUE set, as the JSONL a user would bring.
rule export_published_scores:
    input:
        table="results/data/true_published.parquet",
        code=code("score", "published"),
    output:
        "results/score/published/{metric}/{benchmark}.jsonl",
    log:
        "logs/score/published/{metric}/{benchmark}.log",
    conda:
        CONDA_ENV
    shell:
        "factlab score published --table {input.table} --metric {wildcards.metric} --benchmark {wildcards.benchmark} "
        "--out {output} > {log} 2>&1"


# Door `python`: the user's callable on one shard (merged by merge_scores as every scorer's shards).
rule score_python:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=rules.preprocess_sentences.output.sentences,
        function=lambda wildcards: python_scorer_file(
            CUSTOM_SCORERS[wildcards.scorer].python
        ),
        code=code("score", "python"),
    output:
        scores=temp(f"{SHARD_DIR}/{{scorer}}/{{shard}}.parquet"),
        report=temp(f"{SHARD_DIR}/{{scorer}}/{{shard}}.json"),
    log:
        "logs/score/{benchmark}/{scorer}.{shard}.log",
    benchmark:
        "benchmarks/score/{scorer}/{benchmark}.{shard}.tsv"
    wildcard_constraints:
        scorer="|".join(PYTHON_SCORERS) or NO_SCORER,
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        mem_mb=PLAN.engine.mem_mb,
    params:
        function=lambda wildcards: CUSTOM_SCORERS[wildcards.scorer].python,
        batch_size=lambda wildcards: CUSTOM_SCORERS[wildcards.scorer].batch_size,
        higher=lambda wildcards: str(
            CUSTOM_SCORERS[wildcards.scorer].higher_is_consistent
        ).lower(),
        max_examples=PLAN.max_examples,
        shards=SCORE_SHARDS,
        device=PLAN.engine.device,
    shell:
        "factlab score python --scorer {wildcards.scorer} --benchmark {wildcards.benchmark} --data {input.data} "
        "--sentences {input.sentences} --max-examples {params.max_examples} --sample-examples all "
        "--shard {wildcards.shard} --shards {params.shards} --function {params.function:q} "
        "--batch-size {params.batch_size} --higher-is-consistent {params.higher} --threads {threads} "
        "--device {params.device} --out {output.scores} --report {output.report} > {log} 2>&1"


# Door `model`, an NLI cross-encoder: read as SummaC-ZS reads NLI (score.summac_zs's settings), with the user's labels.
rule score_nli_model:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=rules.preprocess_sentences.output.sentences,
        code=code("score", "summac-zs"),
    output:
        scores=temp(f"{SHARD_DIR}/{{scorer}}/{{shard}}.parquet"),
        report=temp(f"{SHARD_DIR}/{{scorer}}/{{shard}}.json"),
        pairs=temp(f"{SHARD_DIR}/{{scorer}}/{{shard}}.pairs.parquet"),
    log:
        "logs/score/{benchmark}/{scorer}.{shard}.log",
    benchmark:
        "benchmarks/score/{scorer}/{benchmark}.{shard}.tsv"
    wildcard_constraints:
        scorer="|".join(NLI_SCORERS) or NO_SCORER,
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
        mem_mb=PLAN.engine.mem_mb,
    params:
        model=lambda wildcards: CUSTOM_SCORERS[wildcards.scorer].model,
        entailment_label=lambda wildcards: CUSTOM_SCORERS[
            wildcards.scorer
        ].entailment_label,
        contradiction_label=lambda wildcards: CUSTOM_SCORERS[
            wildcards.scorer
        ].contradiction_label,
        settings=SUMMAC_ZS_SETTINGS,
        max_examples=PLAN.max_examples,
        shards=SCORE_SHARDS,
        token_budget=PLAN.engine.token_budget,
        max_batch_pairs=PLAN.engine.max_batch_pairs,
        precision=PLAN.engine.precision,
        device=PLAN.engine.device,
    shell:
        "factlab score summac-zs --benchmark {wildcards.benchmark} --data {input.data} --sentences {input.sentences} "
        "--max-examples {params.max_examples} --sample-examples all "
        "--shard {wildcards.shard} --shards {params.shards} "
        "--model {params.model:q} --entailment-label {params.entailment_label:q} "
        "--contradiction-label {params.contradiction_label:q} --settings {params.settings:q} "
        "--token-budget {params.token_budget} --max-batch-pairs {params.max_batch_pairs} --precision {params.precision} "
        "--threads {threads} --device {params.device} --out {output.scores} --report {output.report} "
        "--pairs-out {output.pairs} > {log} 2>&1"


# Door `model`, an aligner (a released AlignScore checkpoint, a factlab aligner folder): read as AlignScore, with the
# chunking tuned on validation (tune_alignscore).
rule score_aligner_model:
    input:
        data="results/data/{benchmark}.parquet",
        sentences=rules.preprocess_sentences.output.sentences,
        choice=rules.tune_alignscore.output.choice,
        code=code("score", "alignscore"),
    output:
        scores=temp(f"{SHARD_DIR}/{{scorer}}/{{shard}}.parquet"),
        report=temp(f"{SHARD_DIR}/{{scorer}}/{{shard}}.json"),
    log:
        "logs/score/{benchmark}/{scorer}.{shard}.log",
    benchmark:
        "benchmarks/score/{scorer}/{benchmark}.{shard}.tsv"
    wildcard_constraints:
        scorer="|".join(ALIGNER_SCORERS) or NO_SCORER,
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    resources:
        gpu=PLAN.engine.gpus,
        mem_mb=PLAN.engine.mem_mb,
    params:
        model=lambda wildcards: CUSTOM_SCORERS[wildcards.scorer].model,
        entailment_label=lambda wildcards: CUSTOM_SCORERS[
            wildcards.scorer
        ].entailment_label,
        max_examples=PLAN.max_examples,
        shards=SCORE_SHARDS,
        chunk_policy=PLAN.chunk_policy,
        token_budget=PLAN.engine.token_budget,
        max_batch_pairs=PLAN.engine.max_batch_pairs,
        precision=PLAN.engine.precision,
        device=PLAN.engine.device,
    shell:
        "factlab score alignscore --benchmark {wildcards.benchmark} --data {input.data} --sentences {input.sentences} "
        "--max-examples {params.max_examples} --sample-examples all "
        "--shard {wildcards.shard} --shards {params.shards} "
        "--model {params.model:q} --entailment-label {params.entailment_label:q} "
        "--choice {input.choice} --chunk-policy {params.chunk_policy} "
        "--token-budget {params.token_budget} --max-batch-pairs {params.max_batch_pairs} --precision {params.precision} "
        "--threads {threads} --device {params.device} --out {output.scores} --report {output.report} > {log} 2>&1"


# A custom benchmark's overlap with the training mixture (it is not an input of the mixture's leakage filter).
CUSTOM_SCORED = [name for name in SCORE_BENCHMARKS if name in PLAN.custom_benchmarks]


rule check_custom_overlap:
    input:
        data="results/data/{benchmark}.parquet",
        mixture=rules.build_training_mixture.output.mixture,
        code=code("score", "training-overlap"),
    output:
        f"{SCORE_DIR}/training_overlap.json",
    log:
        "logs/score/{benchmark}/training_overlap.log",
    conda:
        CONDA_ENV
    params:
        ngram=param("aligner.mixture.leakage_ngram"),
    shell:
        "factlab score training-overlap --benchmark {wildcards.benchmark} --data {input.data} "
        "--mixture {input.mixture} --ngram {params.ngram} --out {output} > {log} 2>&1"


rule score:
    input:
        PLAN.score_files(SCORE_BENCHMARKS, SCORERS),
        expand(rules.check_custom_overlap.output, benchmark=CUSTOM_SCORED),
        rules.benchmark_scoring_throughput.output,
        rules.scale_retrieval.output,
        expand(
            rules.score_qa_decomposition.output,
            benchmark=QA_DECOMPOSITION_BENCHMARKS,
            decomposition=QA_DECOMPOSITIONS_SCORED,
        ),
