# Checker: the trained aligner as the folder `factlab check` and `factlab.Checker` load (factlab.checker), and how
# long a user waits for it. Commands: `factlab checker …` (src/factlab/checker/).
#   results/checker/model/             weights, checker.json (the tuned reading, the validation thresholds of the
#                                      score and of the token head), README.md
#   results/checker/token_reading.json   the token head's reading tuned on validation tokens (token localiser, threshold)
#   results/checker/check_latency.json   cold start and seconds per example of `factlab check`, against targets

CHECKER_DIR = "results/checker/model"
# The token head's reading, tuned on validation tokens (WiCE's dev split, else XSumFaith's validation documents) from
# the aligner's own token scores: the localisation analysis's numbers for the aligner, so that the checker waits for
# no other scorer (nor the QASem parser that QASemConsistency's scores wait for).
TOKEN_READING_BENCHMARKS = [
    name
    for name in LOCALISATION_GOLD
    if name in PLAN.score_benchmarks and PLAN.score_files([name], ["alignscore"])
]


rule fit_token_reading:
    input:
        scores=PLAN.score_files(TOKEN_READING_BENCHMARKS, ["alignscore"]),
        gold=[LOCALISATION_GOLD[name] for name in TOKEN_READING_BENCHMARKS],
        sources=[f"results/data/{name}.parquet" for name in TOKEN_READING_BENCHMARKS],
        code=code("metaeval", "token-reading"),
    output:
        "results/checker/token_reading.json",
    log:
        "logs/checker/token_reading.log",
    conda:
        CONDA_ENV
    params:
        gold=" ".join(
            f"{name}={LOCALISATION_GOLD[name]}" for name in TOKEN_READING_BENCHMARKS
        ),
        sources=" ".join(
            f"{name}=results/data/{name}.parquet" for name in TOKEN_READING_BENCHMARKS
        ),
        val_fraction=param("metaeval.localisation.val_fraction"),
        seed=PLAN.bootstrap.seed,
    shell:
        "factlab metaeval token-reading --scores {input.scores} --gold {params.gold} --sources {params.sources} "
        "--val-fraction {params.val_fraction} --seed {params.seed} --out {output} > {log} 2>&1"


rule package_checker:
    input:
        aligner=ALIGNER_MODEL["weights"],
        aligner_config=ALIGNER_MODEL["config"],
        metrics=f"{ALIGNER_DIR}/metrics.json",
        choice=rules.tune_alignscore.output.choice,
        # the kinds of text whose validation splits choose the threshold, the uncertain band and the correction bar
        scores=expand(
            "results/score/{benchmark}/alignscore.parquet",
            benchmark=PLAN.checker_validation,
        ),
        data=expand(
            "results/data/{benchmark}.parquet", benchmark=PLAN.checker_validation
        ),
        mixture=rules.build_training_mixture.output.report,
        leakage=rules.check_training_leakage.output,
        # the graph AlignScore's scores were read with, so that the checker reads the model as they did
        graph=[ALIGNER_GRAPH] if PLAN.alignscore_runtime == "openvino" else [],
        # the token head's validation-tuned reading (WiCE dev, else XSumFaith's validation documents)
        token_reading=(
            rules.fit_token_reading.output if TOKEN_READING_BENCHMARKS else []
        ),
        code=code("checker", "package"),
    output:
        directory(CHECKER_DIR),
    log:
        "logs/checker/package_checker.log",
    conda:
        CONDA_ENV
    params:
        aligner=lambda wildcards, input: str(Path(input.aligner).parent),
        token_reading=lambda wildcards, input: (
            f"--localisation-report {input.token_reading}"
            if input.token_reading
            else ""
        ),
        settings=json.dumps(
            {
                "chunk_policy": PLAN.chunk_policy,
                "sentence_splitter": param("preprocess.sentence_splitter"),
                "token_budget": PLAN.engine.token_budget,
                "max_batch_pairs": PLAN.engine.max_batch_pairs,
                "precision": PLAN.engine.precision,
            },
            sort_keys=True,
        ),
        uncertain_precision=param("check.uncertain_precision"),
        max_rewritten=param("check.max_rewritten_share"),
        graph=lambda wildcards, input: f"--graph {input.graph}" if input.graph else "",
    shell:
        "factlab checker package --aligner {params.aligner} --choice {input.choice} "
        "--validation-scores {input.scores} --validation-data {input.data} --mixture-report {input.mixture} "
        "--leakage {input.leakage} --settings {params.settings:q} {params.token_reading} "
        "--uncertain-precision {params.uncertain_precision} {params.graph} --max-rewritten-share {params.max_rewritten} "
        "--out-dir {output} > {log} 2>&1"


CHECK_LATENCY = param("check.latency")


rule benchmark_check_latency:
    input:
        checker=rules.package_checker.output,
        data=f"results/data/{CHECK_LATENCY['benchmark']}.parquet",
        code=code("checker", "latency"),
    output:
        "results/checker/check_latency.json",
    log:
        "logs/checker/check_latency.log",
    conda:
        CONDA_ENV
    threads: CHECK_LATENCY["threads"]
    params:
        examples=CHECK_LATENCY["examples"],
        source_tokens=CHECK_LATENCY["source_tokens"],
        output_sentences=CHECK_LATENCY["output_sentences"],
        target_seconds=CHECK_LATENCY["target_seconds_per_example"],
        target_cold=CHECK_LATENCY["target_cold_start_seconds"],
        target_help=CHECK_LATENCY["target_help_seconds"],
    shell:
        "factlab checker latency --checker {input.checker} --data {input.data} --examples {params.examples} "
        "--source-tokens {params.source_tokens} --output-sentences {params.output_sentences} "
        "--target-seconds-per-example {params.target_seconds} --target-cold-start-seconds {params.target_cold} "
        "--target-help-seconds {params.target_help} "
        "--threads {threads} --out {output} > {log} 2>&1"


# The checker's corrections of FRANK's test outputs (factlab.checker.correct), judged by SummaC-ZS (which did not
# choose them), and the exact restores of synthetic corruptions of FRANK's test sources.
CORRECTION = param("check.correction")


rule evaluate_correction:
    input:
        data=f"results/data/{CORRECTION_BENCHMARK}.parquet",
        scores=f"results/score/{CORRECTION_BENCHMARK}/alignscore.parquet",
        checker=rules.package_checker.output,
        model=(
            list(ALIGNER_MODEL.values()) if PLAN.summac_zs_model == "trained" else []
        ),
        code=code("checker", "correction"),
    output:
        systems="results/checker/correction/systems.csv",
        restore="results/checker/correction/restore.csv",
        corrections="results/checker/correction/corrections.parquet",
        report="results/checker/correction/report.json",
        metrics="results/checker/correction/metrics.json",
    log:
        "logs/checker/correction.log",
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    params:
        model=lambda wildcards, input: aligner_model_argument(
            input, PLAN.summac_zs_model
        ),
        judge=PLAN.summac_zs_settings,
        splitter=param("preprocess.sentence_splitter"),
        transforms=" ".join(CORRECTION["transforms"]),
        per_transform=CORRECTION["synthetic_per_transform"],
        seed=PLAN.bootstrap.seed,
        confidence=PLAN.bootstrap.confidence,
    shell:
        "factlab checker correction --data {input.data} --scores {input.scores} --checker {input.checker} "
        "--judge-model {params.model} --judge-settings {params.judge:q} --sentence-splitter {params.splitter} "
        "--transforms {params.transforms} --synthetic-per-transform {params.per_transform} --seed {params.seed} "
        "--confidence {params.confidence} --out {output.systems} --restore {output.restore} --corrections {output.corrections} "
        "--report {output.report} --out-metrics {output.metrics} > {log} 2>&1"


# Whether the spans the checker explains are those annotators found unsupported: QASemConsistency's gold QAs
# (predicate and answer tokens, voted), every response checked against its source.


rule evaluate_explanations:
    input:
        qas="results/data/qasem_consistency_qas.parquet",
        checker=rules.package_checker.output,
        code=code("checker", "explanations"),
    output:
        summary="results/checker/explanations/explanations.csv",
        qas="results/checker/explanations/qas.parquet",
        report="results/checker/explanations/report.json",
        metrics="results/checker/explanations/metrics.json",
    log:
        "logs/checker/explanations.log",
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads
    params:
        per_split=(
            ""
            if param("check.explanations.responses_per_split") is None
            else f"--responses-per-split {param('check.explanations.responses_per_split')}"
        ),
        seed=PLAN.bootstrap.seed,
        resamples=PLAN.bootstrap.resamples,
        confidence=PLAN.bootstrap.confidence,
    shell:
        "factlab checker explanations --qas {input.qas} --checker {input.checker} {params.per_split} "
        "--seed {params.seed} --resamples {params.resamples} --confidence {params.confidence} "
        "--out {output.summary} --qa-out {output.qas} --report {output.report} --out-metrics {output.metrics} "
        "> {log} 2>&1"


rule checker:
    input:
        rules.package_checker.output,
        rules.benchmark_check_latency.output,
        rules.evaluate_correction.output if PLAN.correction_runs else [],
        rules.evaluate_explanations.output if PLAN.explanation_runs else [],
