# Meta-evaluation: numbers only (CSV/JSON) under results/metaeval/; the paper stage renders the tables
# and figures from them (paper.smk). Commands: `factlab metaeval …` (src/factlab/metaeval/analyses/;
# the statistics they call: src/factlab/metaeval/).
#   frank_baselines/       FRANK's evaluation of its baseline metrics, rebuilt from FRANK's released scores
#                          (partial correlations, Williams tests, error-category ablation)
#   screeneval_published/, true_published/, qasem_consistency/, agreement/: published analyses rebuilt
#   qasem_parser/          factlab's QASem parser on QA-SRL GS test and QANom test, QASemConsistency coverage
#   detection/, true/      factlab's scorers as detectors (AUC with CIs, ECE, balanced accuracy) on every scored
#                          benchmark / on the TRUE sets; thresholds tuned on metaeval.detection.validation_benchmarks
#   leaderboard/           every scorer (built-in or a user's) against each benchmark's best built-in scorer
#   decisions/             the checker's verdicts, spans and corrections on the labelled benchmarks it was not tuned on
#   calibration_gain/      the checker's global threshold against one calibrated on 100 of a benchmark's validation examples
# Each rule's code input is the digest of the import closure of the command it runs (common.smk: code()).

METAEVAL_DIR = "results/metaeval"
FRANK_INPUTS = {
    "benchmark": "results/data/frank.parquet",
    "scores": "results/data/frank_baseline_scores.parquet",
}
FRANK_DIR = f"{METAEVAL_DIR}/frank_baselines"
QASEM_EVAL_DIR = f"{METAEVAL_DIR}/qasem_parser"
# `dvc plots show` specs (written into dvc.yaml by `python -m factlab.workflow.dvcyaml`).
DVC_PLOTS = [
    {
        f"{METAEVAL_DIR}/screeneval_published/chunk_size.csv": {
            "x": "chunk_size",
            "y": "roc_auc",
            "title": "ScreenEval, SCALE-large - AUC against chunk size (tokens)",
        }
    },
    {
        "ScreenEval reliability (scale_large)": {
            "template": "simple",
            "x": "mean_score",
            "y": {
                f"{METAEVAL_DIR}/screeneval_published/reliability.csv": "consistent_share"
            },
        }
    },
    {
        "Aligner validation AUC against training step": {
            "template": "linear",
            "x": "step",
            "y": {
                str(rules.train_aligner.output.curves): [
                    "validation_auc",
                    "validation_auc_long",  # always a column: aligner_commands.PLOTTED_CURVES
                ]
            },
        }
    },
]


rule correlate_frank_baselines:
    input:
        **FRANK_INPUTS,
        code=code("metaeval", "frank-correlations"),
    output:
        all=f"{FRANK_DIR}/correlations.csv",
        test=f"{FRANK_DIR}/correlations_test.csv",
    log:
        "logs/metaeval/frank_correlations.log",
    conda:
        CONDA_ENV
    params:
        subsets=param("metaeval.frank.subsets"),
        variant=param("metaeval.frank.partial_variant"),
        resamples=PLAN.bootstrap.resamples,
        confidence=PLAN.bootstrap.confidence,
        seed=PLAN.bootstrap.seed,
    shell:
        "factlab metaeval frank-correlations --benchmark {input.benchmark} --scores {input.scores} "
        "--subsets {params.subsets} --variant {params.variant} --resamples {params.resamples} "
        "--confidence {params.confidence} --seed {params.seed} --out {output.all} --out-test {output.test} "
        "> {log} 2>&1"


rule compare_frank_metrics:
    input:
        **FRANK_INPUTS,
        code=code("metaeval", "frank-williams"),
    output:
        williams=f"{FRANK_DIR}/williams.csv",
        matrix=f"{FRANK_DIR}/metric_matrix.csv",
    log:
        "logs/metaeval/frank_williams.log",
    conda:
        CONDA_ENV
    params:
        variant=param("metaeval.frank.williams_variant"),
    shell:
        "factlab metaeval frank-williams --benchmark {input.benchmark} --scores {input.scores} "
        "--variant {params.variant} --out {output.williams} --out-matrix {output.matrix} > {log} 2>&1"


rule ablate_frank_categories:
    input:
        **FRANK_INPUTS,
        code=code("metaeval", "frank-ablation"),
    output:
        f"{FRANK_DIR}/ablation.csv",
    log:
        "logs/metaeval/frank_ablation.log",
    conda:
        CONDA_ENV
    params:
        subsets=param("metaeval.frank.subsets"),
        variant=param("metaeval.frank.partial_variant"),
    shell:
        "factlab metaeval frank-ablation --benchmark {input.benchmark} --scores {input.scores} "
        "--subsets {params.subsets} --variant {params.variant} --out {output} > {log} 2>&1"


rule summarise_frank_baselines:
    input:
        correlations=rules.correlate_frank_baselines.output.all,
        williams=rules.compare_frank_metrics.output.williams,
        code=code("metaeval", "frank-summary"),
    output:
        f"{FRANK_DIR}/metrics.json",
    log:
        "logs/metaeval/frank_summary.log",
    conda:
        CONDA_ENV
    shell:
        "factlab metaeval frank-summary --correlations {input.correlations} --williams {input.williams} "
        "--out {output} > {log} 2>&1"


rule evaluate_screeneval_published:
    input:
        data="results/data/screeneval_published.parquet",
        code=code("metaeval", "screeneval"),
    output:
        detection=f"{METAEVAL_DIR}/screeneval_published/detection.csv",
        split=f"{METAEVAL_DIR}/screeneval_published/split.csv",
        chunk_size=f"{METAEVAL_DIR}/screeneval_published/chunk_size.csv",
        comparison=f"{METAEVAL_DIR}/screeneval_published/published_comparison.csv",
        reliability=f"{METAEVAL_DIR}/screeneval_published/reliability.csv",
        metrics=f"{METAEVAL_DIR}/screeneval_published/metrics.json",
    log:
        "logs/metaeval/evaluate_screeneval_published.log",
    conda:
        CONDA_ENV
    params:
        out_dir=lambda wildcards, output: str(Path(output.metrics).parent),
        ece_bins=param("metaeval.ece_bins"),
        reliability_bins=param("metaeval.reliability_plot_bins"),
        val_fraction=param("metaeval.screeneval.val_fraction"),
        seed=PLAN.bootstrap.seed,
        policies=" ".join(param("metaeval.threshold_policies")),
    shell:
        "factlab metaeval screeneval --data {input.data} --out-dir {params.out_dir} "
        "--ece-bins {params.ece_bins} --reliability-bins {params.reliability_bins} "
        "--val-fraction {params.val_fraction} --seed {params.seed} --policies {params.policies} > {log} 2>&1"


rule evaluate_true_published:
    input:
        data="results/data/true_published.parquet",
        code=code("metaeval", "true-published"),
    output:
        detection=f"{METAEVAL_DIR}/true_published/detection.csv",
        comparison=f"{METAEVAL_DIR}/true_published/published_comparison.csv",
        metrics=f"{METAEVAL_DIR}/true_published/metrics.json",
    log:
        "logs/metaeval/evaluate_true_published.log",
    conda:
        CONDA_ENV
    params:
        out_dir=lambda wildcards, output: str(Path(output.metrics).parent),
        ece_bins=param("metaeval.ece_bins"),
    shell:
        "factlab metaeval true-published --data {input.data} --out-dir {params.out_dir} "
        "--ece-bins {params.ece_bins} > {log} 2>&1"


rule summarise_qasem_consistency:
    input:
        responses="results/data/qasem_consistency.parquet",
        qas="results/data/qasem_consistency_qas.parquet",
        code=code("metaeval", "qasem-consistency"),
    output:
        statistics=f"{METAEVAL_DIR}/qasem_consistency/statistics.csv",
        metrics=f"{METAEVAL_DIR}/qasem_consistency/metrics.json",
    log:
        "logs/metaeval/summarise_qasem_consistency.log",
    conda:
        CONDA_ENV
    params:
        out_dir=lambda wildcards, output: str(Path(output.metrics).parent),
    shell:
        "factlab metaeval qasem-consistency --responses {input.responses} --qas {input.qas} "
        "--out-dir {params.out_dir} > {log} 2>&1"


rule measure_annotator_agreement:
    input:
        # Order = row order of the table.
        data=[
            "results/data/qags_cnndm.parquet",
            "results/data/qags_xsum.parquet",
            "results/data/xsumfaith.parquet",
        ],
        code=code("metaeval", "annotator-agreement"),
    output:
        agreement=f"{METAEVAL_DIR}/agreement/agreement.csv",
        metrics=f"{METAEVAL_DIR}/agreement/metrics.json",
    log:
        "logs/metaeval/measure_annotator_agreement.log",
    conda:
        CONDA_ENV
    params:
        out_dir=lambda wildcards, output: str(Path(output.metrics).parent),
    shell:
        "factlab metaeval annotator-agreement --data {input.data} --out-dir {params.out_dir} "
        "> {log} 2>&1"


rule evaluate_qasem_parser:
    input:
        **QASEM_MODEL,
        qasrl_gs="results/data/qasrl_gs.parquet",
        qanom="results/data/qanom.parquet",
        responses="results/data/qasem_consistency.parquet",
        qas="results/data/qasem_consistency_qas.parquet",
        code=code("metaeval", "qasem-parser"),
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
        bootstrap=f"{QASEM_EVAL_DIR}/bootstrap.csv",
        coverage_qas=f"{QASEM_EVAL_DIR}/consistency_coverage_qas.parquet",
        predictions_qasrl=f"{QASEM_EVAL_DIR}/predictions_qasrl_gs_test.parquet",
        predictions_qanom=f"{QASEM_EVAL_DIR}/predictions_qanom_test.parquet",
        metrics=f"{QASEM_EVAL_DIR}/metrics.json",
    log:
        "logs/metaeval/evaluate_qasem_parser.log",
    benchmark:
        "benchmarks/metaeval/evaluate_qasem_parser.tsv"
    conda:
        CONDA_ENV
    threads: param("qasem.threads")
    resources:
        gpu=int(param("qasem.device") == "cuda"),
    params:
        model_dir=lambda wildcards, input: str(Path(input.weights).parent),
        out_dir=lambda wildcards, output: str(Path(output.scores).parent),
        iou=param("qasem.evaluate.iou_threshold"),
        resamples=PLAN.bootstrap.resamples,
        confidence=PLAN.bootstrap.confidence,
        seed=PLAN.bootstrap.seed,
        batch_size=param("qasem.evaluate.batch_size"),
        max_sentences=param("qasem.evaluate.max_sentences"),
        device=param("qasem.device"),
    shell:
        "factlab metaeval qasem-parser --model-dir {params.model_dir} --qasrl-gs {input.qasrl_gs} --qanom {input.qanom} "
        "--consistency-responses {input.responses} --consistency-qas {input.qas} --out-dir {params.out_dir} "
        "--iou-threshold {params.iou} --resamples {params.resamples} --confidence {params.confidence} --seed {params.seed} "
        "--max-sentences {params.max_sentences} --batch-size {params.batch_size} "
        "--threads {threads} --device {params.device} > {log} 2>&1"


DETECTION_VALIDATION = PLAN.detection_validation

for _table, _benchmarks in (
    ("detection", PLAN.score_benchmarks),
    ("true", [name for name in PLAN.score_benchmarks if name.startswith("true_")]),
):

    rule:
        name:
            "evaluate_detection"
            if _table == "detection"
            else f"evaluate_{_table}_detection"
        input:
            **detection_inputs(_benchmarks, DETECTION_VALIDATION),
            code=code("metaeval", "detection"),
        output:
            auc=f"{METAEVAL_DIR}/{_table}/auc.csv",
            report=f"{METAEVAL_DIR}/{_table}/thresholds.json",
            reliability=f"{METAEVAL_DIR}/{_table}/reliability.csv",
            metrics=f"{METAEVAL_DIR}/{_table}/metrics.json",
        log:
            f"logs/metaeval/{_table}_detection.log",
        conda:
            CONDA_ENV
        params:
            validation=DETECTION_VALIDATION,
            groups=detection_groups(_benchmarks),
            resamples=PLAN.bootstrap.resamples,
            confidence=PLAN.bootstrap.confidence,
            seed=PLAN.bootstrap.seed,
            ece_bins=param("metaeval.ece_bins"),
            reliability_bins=param("metaeval.reliability_plot_bins"),
        shell:
            "factlab metaeval detection --scores {input.scores} --sampled-scores {input.sampled_scores} "
            "--data {input.data} --validation {params.validation} "
            "--groups {params.groups} --resamples {params.resamples} --confidence {params.confidence} --seed {params.seed} "
            "--ece-bins {params.ece_bins} --reliability-bins {params.reliability_bins} --out {output.auc} "
            "--out-reliability {output.reliability} --report {output.report} --out-metrics {output.metrics} "
            "> {log} 2>&1"


# Every scorer's AUC on every scored benchmark but the validation ones, each against the benchmark's best built-in
# scorer (paired document bootstrap, Holm-adjusted over the table); a scorer outside score.scorers is a user's.
LEADERBOARD_BENCHMARKS = PLAN.leaderboard_benchmarks
LEADERBOARD_SCORES = PLAN.score_files(
    LEADERBOARD_BENCHMARKS, PLAN.scorers, sampled=False
)
LEADERBOARD_SAMPLED = PLAN.score_files(
    LEADERBOARD_BENCHMARKS, PLAN.scorers, sampled=True
)


rule evaluate_leaderboard:
    input:
        scores=LEADERBOARD_SCORES,
        sampled_scores=LEADERBOARD_SAMPLED,
        data=[f"results/data/{name}.parquet" for name in LEADERBOARD_BENCHMARKS],
        code=code("metaeval", "leaderboard"),
    output:
        leaderboard=f"{METAEVAL_DIR}/leaderboard/leaderboard.csv",
        metrics=f"{METAEVAL_DIR}/leaderboard/metrics.json",
    log:
        "logs/metaeval/leaderboard.log",
    conda:
        CONDA_ENV
    params:
        builtin=param("score.scorers"),
        published=list(PLAN.published_scorers),
        validation=DETECTION_VALIDATION,
        resamples=PLAN.bootstrap.resamples,
        confidence=PLAN.bootstrap.confidence,
        seed=PLAN.bootstrap.seed,
    shell:
        "factlab metaeval leaderboard --scores {input.scores} --sampled-scores {input.sampled_scores} "
        "--data {input.data} --builtin {params.builtin} --published {params.published} --validation {params.validation} "
        "--resamples {params.resamples} --confidence {params.confidence} --seed {params.seed} "
        "--out {output.leaderboard} --out-metrics {output.metrics} > {log} 2>&1"


# How often the checker flags consistent outputs, on every benchmark AlignScore scores whole but the validation cuts
# that chose the checker's thresholds: its decisions read from AlignScore's tables at the thresholds recorded in the
# checker folder (checker.smk's package_checker), which exists only for the trained aligner, and the corrections of
# consistent outputs scored by its model.
DECISIONS_BENCHMARKS = PLAN.decisions_benchmarks


rule evaluate_decisions:
    input:
        checker="results/checker/model",
        scores=PLAN.score_files(DECISIONS_BENCHMARKS, ["alignscore"], sampled=False),
        data=[f"results/data/{name}.parquet" for name in DECISIONS_BENCHMARKS],
        code=code("metaeval", "decisions"),
    output:
        decisions=f"{METAEVAL_DIR}/decisions/decisions.csv",
        metrics=f"{METAEVAL_DIR}/decisions/metrics.json",
    log:
        "logs/metaeval/decisions.log",
    conda:
        CONDA_ENV
    threads: PLAN.engine.threads  # the checker's model scores the corrections' candidate edits
    params:
        validation=PLAN.checker_validation,  # chose the checker's decisions on their validation splits
        confidence=PLAN.bootstrap.confidence,
    shell:
        "factlab metaeval decisions --checker {input.checker} --scores {input.scores} --data {input.data} "
        "--validation {params.validation} --confidence {params.confidence} --out {output.decisions} "
        "--out-metrics {output.metrics} > {log} 2>&1"


# What `factlab calibrate` on 100 of a benchmark's validation examples gains over the checker's global threshold, on
# the benchmark's test split, for every benchmark AlignScore scores whole with a validation and a test split.
CALIBRATION_GAIN_BENCHMARKS = PLAN.calibration_gain_benchmarks


rule evaluate_calibration_gain:
    input:
        checker="results/checker/model",
        scores=PLAN.score_files(
            CALIBRATION_GAIN_BENCHMARKS, ["alignscore"], sampled=False
        ),
        data=[f"results/data/{name}.parquet" for name in CALIBRATION_GAIN_BENCHMARKS],
        code=code("metaeval", "calibration-gain"),
    output:
        gain=f"{METAEVAL_DIR}/calibration_gain/calibration_gain.csv",
        metrics=f"{METAEVAL_DIR}/calibration_gain/metrics.json",
    log:
        "logs/metaeval/calibration_gain.log",
    conda:
        CONDA_ENV
    params:
        validation=PLAN.checker_validation,  # chose the checker's global threshold
        sample=param("metaeval.calibration_gain.sample"),
        draws=param("metaeval.calibration_gain.draws"),
        seed=PLAN.bootstrap.seed,
        confidence=PLAN.bootstrap.confidence,
    shell:
        "factlab metaeval calibration-gain --checker {input.checker} --scores {input.scores} --data {input.data} "
        "--validation {params.validation} --sample {params.sample} --draws {params.draws} --seed {params.seed} "
        "--confidence {params.confidence} --out {output.gain} --out-metrics {output.metrics} > {log} 2>&1"


# factlab's scorers on FRANK, FRANK's protocol (only when the score stage scores FRANK).


rule correlate_frank_scorers:
    input:
        benchmark=FRANK_INPUTS["benchmark"],
        released=FRANK_INPUTS["scores"],
        scores=PLAN.score_files(["frank"], PLAN.scorers, sampled=False),
        sampled_scores=PLAN.score_files(["frank"], PLAN.scorers, sampled=True),
        code=code("metaeval", "frank-scorers"),
    output:
        correlations=f"{METAEVAL_DIR}/frank_scorers/correlations.csv",
        williams=f"{METAEVAL_DIR}/frank_scorers/williams.csv",
        metrics=f"{METAEVAL_DIR}/frank_scorers/metrics.json",
        ablation=f"{METAEVAL_DIR}/frank_scorers/ablation.csv",
    log:
        "logs/metaeval/frank_scorers.log",
    conda:
        CONDA_ENV
    params:
        compare=" ".join(
            f"{metric!r}" for metric in param("metaeval.frank.compare_scorers_with")
        ),
        subsets=param("metaeval.frank.subsets"),
        variant=param("metaeval.frank.partial_variant"),
        williams_variant=param("metaeval.frank.williams_variant"),
        resamples=PLAN.bootstrap.resamples,
        confidence=PLAN.bootstrap.confidence,
        seed=PLAN.bootstrap.seed,
    shell:
        "factlab metaeval frank-scorers --benchmark {input.benchmark} --released {input.released} --scores {input.scores} "
        "--sampled-scores {input.sampled_scores} "
        "--compare {params.compare} --subsets {params.subsets} --variant {params.variant} "
        "--williams-variant {params.williams_variant} --resamples {params.resamples} --confidence {params.confidence} "
        "--seed {params.seed} --out-correlations {output.correlations} --out-williams {output.williams} "
        "--out-metrics {output.metrics} --out-ablation {output.ablation} > {log} 2>&1"


# factlab's scorers on SummEval, FRANK's protocol (only when the score stage scores SummEval): on every summary and on
# those that were not tuning examples (SummaC's SummEval validation cut holds SummEval summaries).
# Everything any scorer was tuned or fitted on: AlignScore's head and chunk size, the thresholds, the ensemble's stack.
SUMMEVAL_TUNING = sorted(
    set(PLAN.tuning_benchmarks)
    | set(DETECTION_VALIDATION)
    | set(PLAN.ensemble_fit_benchmarks)
)


rule correlate_summeval_scorers:
    input:
        benchmark="results/data/summeval.parquet",
        scores=PLAN.score_files(["summeval"], PLAN.scorers, sampled=False),
        sampled_scores=PLAN.score_files(["summeval"], PLAN.scorers, sampled=True),
        tuning=[f"results/data/{name}.parquet" for name in SUMMEVAL_TUNING],
        code=code("metaeval", "summeval-scorers"),
    output:
        correlations=f"{METAEVAL_DIR}/summeval_scorers/correlations.csv",
        williams=f"{METAEVAL_DIR}/summeval_scorers/williams.csv",
        metrics=f"{METAEVAL_DIR}/summeval_scorers/metrics.json",
    log:
        "logs/metaeval/summeval_scorers.log",
    conda:
        CONDA_ENV
    params:
        variant=param("metaeval.frank.partial_variant"),
        williams_variant=param("metaeval.frank.williams_variant"),
        resamples=PLAN.bootstrap.resamples,
        confidence=PLAN.bootstrap.confidence,
        seed=PLAN.bootstrap.seed,
    shell:
        "factlab metaeval summeval-scorers --benchmark {input.benchmark} --scores {input.scores} "
        "--sampled-scores {input.sampled_scores} --tuning {input.tuning} "
        "--variant {params.variant} --williams-variant {params.williams_variant} --resamples {params.resamples} "
        "--confidence {params.confidence} --seed {params.seed} --out-correlations {output.correlations} "
        "--out-williams {output.williams} --out-metrics {output.metrics} > {log} 2>&1"


# Token-level localisation: each scorer's per-sentence support (QASemConsistency: its QAs' spans) projected onto
# output tokens, against XSumFaith's spans (xsumfaith_spans, gold of the xsumfaith benchmark) and WiCE's
# unsupported tokens (wice_tokens). The benchmarks' data tables give the outputs' sources to the token localiser
# (the token head read with the source's words, weights fit on the validation tokens: token_localiser.json).
LOCALISATION_SCORERS = PLAN.localisation_scorers
LOCALISATION_BENCHMARKS = PLAN.localisation_benchmarks


rule evaluate_localisation:
    input:
        scores=PLAN.score_files(LOCALISATION_BENCHMARKS, LOCALISATION_SCORERS),
        gold=[LOCALISATION_GOLD[name] for name in LOCALISATION_BENCHMARKS],
        sources=[f"results/data/{name}.parquet" for name in LOCALISATION_BENCHMARKS],
        code=code("metaeval", "localisation"),
    output:
        tokens=f"{METAEVAL_DIR}/localisation/tokens.csv",
        report=f"{METAEVAL_DIR}/localisation/report.json",
        metrics=f"{METAEVAL_DIR}/localisation/metrics.json",
        localiser=f"{METAEVAL_DIR}/localisation/token_localiser.json",
    log:
        "logs/metaeval/localisation.log",
    conda:
        CONDA_ENV
    params:
        gold=" ".join(
            f"{name}={LOCALISATION_GOLD[name]}" for name in LOCALISATION_BENCHMARKS
        ),
        sources=" ".join(
            f"{name}=results/data/{name}.parquet" for name in LOCALISATION_BENCHMARKS
        ),
        policies=" ".join(param("metaeval.localisation.threshold_policies")),
        val_fraction=param("metaeval.localisation.val_fraction"),
        seed=PLAN.bootstrap.seed,
        resamples=PLAN.bootstrap.resamples,
        confidence=PLAN.bootstrap.confidence,
    shell:
        "factlab metaeval localisation --scores {input.scores} --gold {params.gold} --policies {params.policies} "
        "--val-fraction {params.val_fraction} --seed {params.seed} --resamples {params.resamples} "
        "--confidence {params.confidence} --sources {params.sources} --out {output.tokens} --report {output.report} "
        "--out-metrics {output.metrics} --localiser-out {output.localiser} > {log} 2>&1"


# QASemConsistency's QA decomposition against sentences and the parser's QAs (score_qa_decomposition).
# Each decomposition's table: score_qa_decomposition's, or the scorer's own where its settings are the decomposition's.
QA_DECOMPOSITION_TABLES = {
    name: (
        expand(
            rules.score_qa_decomposition.output.scores,
            benchmark="qasem_consistency",
            decomposition=name,
        )[0]
        if name in PLAN.qa_decompositions_scored
        else expand(
            rules.merge_scores.output.scores,
            benchmark="qasem_consistency",
            scorer="qasem_consistency",
        )[0]
    )
    for name in QA_DECOMPOSITIONS
}


rule evaluate_qa_decomposition:
    input:
        data="results/data/qasem_consistency.parquet",
        gold_qas=GOLD_QAS["qasem_consistency"],
        scores=list(QA_DECOMPOSITION_TABLES.values()),
        code=code("metaeval", "qa-decomposition"),
    output:
        qas=f"{METAEVAL_DIR}/qa_decomposition/qa_detection.csv",
        responses=f"{METAEVAL_DIR}/qa_decomposition/response_detection.csv",
    log:
        "logs/metaeval/qa_decomposition.log",
    conda:
        CONDA_ENV
    params:
        resamples=PLAN.bootstrap.resamples,
        confidence=PLAN.bootstrap.confidence,
        seed=PLAN.bootstrap.seed,
        ece_bins=param("metaeval.ece_bins"),
        scores=" ".join(
            f"{name}={path}" for name, path in QA_DECOMPOSITION_TABLES.items()
        ),
    shell:
        "factlab metaeval qa-decomposition --data {input.data} --gold-qas {input.gold_qas} --scores {params.scores} "
        "--resamples {params.resamples} --confidence {params.confidence} --seed {params.seed} "
        "--ece-bins {params.ece_bins} --out-qas {output.qas} --out-responses {output.responses} > {log} 2>&1"


# QASemConsistency's QA-level detection (its paper's protocol: BAcc at 0.5 per task on the test split) for every
# scorer of the gold QAs, and for the QASemConsistency scorer's own reading of them (the decomposition's gold_qas).
# The QASemConsistency scorer's table of qasem_consistency_qas (config/full.yaml scores every benchmark with it)
# reads each QA as an output and asks the parser for QAs of it; its reading of the gold QAs is the protocol table.
QA_DETECTION_SCORERS = PLAN.qa_detection_scorers
QA_DETECTION_BENCHMARKS = PLAN.qa_detection_benchmarks
QA_DETECTION_SCORES = PLAN.score_files(
    QA_DETECTION_BENCHMARKS, QA_DETECTION_SCORERS, sampled=False
)
QA_DETECTION_SAMPLED = PLAN.score_files(
    QA_DETECTION_BENCHMARKS, QA_DETECTION_SCORERS, sampled=True
)
QA_DETECTION_PROTOCOL = (
    QA_DECOMPOSITION_TABLES["gold_qas"] if PLAN.qa_decomposition_runs else None
)


rule evaluate_qa_detection:
    input:
        gold_qas=GOLD_QAS["qasem_consistency"],
        scores=QA_DETECTION_SCORES,
        sampled_scores=QA_DETECTION_SAMPLED,
        protocol=QA_DETECTION_PROTOCOL or [],
        code=code("metaeval", "qa-detection"),
    output:
        detection=f"{METAEVAL_DIR}/qasem_consistency/qa_detection.csv",
        published=f"{METAEVAL_DIR}/qasem_consistency/qa_detection_published.csv",
        metrics=f"{METAEVAL_DIR}/qa_detection/metrics.json",
    log:
        "logs/metaeval/qa_detection.log",
    conda:
        CONDA_ENV
    params:
        protocol=(
            f"--protocol-scores {QA_DETECTION_PROTOCOL}"
            if QA_DETECTION_PROTOCOL
            else ""
        ),
        resamples=PLAN.bootstrap.resamples,
        confidence=PLAN.bootstrap.confidence,
        seed=PLAN.bootstrap.seed,
    shell:
        "factlab metaeval qa-detection --gold-qas {input.gold_qas} --scores {input.scores} "
        "--sampled-scores {input.sampled_scores} {params.protocol} "
        "--resamples {params.resamples} --confidence {params.confidence} --seed {params.seed} "
        "--out {output.detection} --out-published {output.published} --out-metrics {output.metrics} > {log} 2>&1"


# The error-type head on FRANK's annotated categories: the trained aligner's AlignScore scores of FRANK (whole, not
# a sample), whose token pass records each sentence's type distribution.


rule evaluate_error_types:
    input:
        data="results/data/frank.parquet",
        scores="results/score/frank/alignscore.parquet",
        code=code("metaeval", "error-types"),
    output:
        categories=f"{METAEVAL_DIR}/error_types/categories.csv",
        confusion=f"{METAEVAL_DIR}/error_types/confusion.csv",
        report=f"{METAEVAL_DIR}/error_types/report.json",
        metrics=f"{METAEVAL_DIR}/error_types/metrics.json",
    log:
        "logs/metaeval/error_types.log",
    conda:
        CONDA_ENV
    params:
        seed=PLAN.bootstrap.seed,
        resamples=PLAN.bootstrap.resamples,
        confidence=PLAN.bootstrap.confidence,
    shell:
        "factlab metaeval error-types --data {input.data} --scores {input.scores} --seed {params.seed} "
        "--resamples {params.resamples} --confidence {params.confidence} --out {output.categories} "
        "--confusion {output.confusion} --report {output.report} --out-metrics {output.metrics} > {log} 2>&1"


rule metaeval:
    input:
        rules.evaluate_localisation.output if PLAN.localisation_runs else [],
        rules.evaluate_error_types.output if PLAN.error_types_runs else [],
        rules.correlate_frank_baselines.output,
        rules.compare_frank_metrics.output,
        rules.ablate_frank_categories.output,
        rules.summarise_frank_baselines.output,
        rules.evaluate_screeneval_published.output,
        rules.evaluate_true_published.output,
        rules.summarise_qasem_consistency.output,
        rules.measure_annotator_agreement.output,
        rules.evaluate_qasem_parser.output,
        rules.evaluate_detection.output,
        rules.evaluate_true_detection.output,
        rules.evaluate_leaderboard.output if PLAN.leaderboard_runs else [],
        rules.evaluate_decisions.output if PLAN.decisions_runs else [],
        rules.evaluate_calibration_gain.output if PLAN.calibration_gain_runs else [],
        rules.correlate_frank_scorers.output if PLAN.frank_scored else [],
        rules.correlate_summeval_scorers.output if PLAN.summeval_scored else [],
        rules.evaluate_qa_decomposition.output if PLAN.qa_decomposition_runs else [],
        rules.evaluate_qa_detection.output if PLAN.qa_detection_runs else [],
