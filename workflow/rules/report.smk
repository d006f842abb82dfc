# Report: static, self-contained HTML pages for reading scorer outputs. Commands: `factlab report …` (src/factlab/report/).
#   results/report/<benchmark>/<scorer>.html   every output with its sentences coloured by support, the evidence
#                                              highlighted in the source, gold spans where given, filters and paging
REPORT_BENCHMARKS = PLAN.with_custom(
    param("report.localise.benchmarks") or PLAN.score_benchmarks
)
_not_scored = sorted(set(REPORT_BENCHMARKS) - set(PLAN.score_benchmarks))
if _not_scored:
    raise ConfigError(
        f"params.yaml report.localise.benchmarks names benchmarks that score.benchmarks does not score: {_not_scored}"
    )
REPORT_SCORERS = param("report.localise.scorers") or PLAN.scorers
REPORT_GOLD = param("report.localise.gold")
# AlignScore's page reads its thresholds from the checker folder (checker.smk) when it packages the trained aligner.
REPORT_CHECKER = (
    "results/checker/model" if param("score.alignscore.model") == "trained" else None
)
# and FRANK's AlignScore page the checker's suggested corrections (checker.smk's evaluate_correction).
REPORT_CORRECTIONS = (
    "results/checker/correction/corrections.parquet" if PLAN.correction_runs else None
)


rule report_localise:
    input:
        data="results/data/{benchmark}.parquet",
        scores="results/score/{benchmark}/{scorer}.parquet",
        # the detection metrics row (none for a validation benchmark) and the gold spans where given
        metrics=lambda wildcards: (
            []
            if wildcards.benchmark in PLAN.detection_validation
            else "results/metaeval/detection/auc.csv"
        ),
        gold=lambda wildcards: REPORT_GOLD.get(wildcards.benchmark, []),
        # AlignScore's page: the thresholds recorded with the checker (validation-chosen), not report.localise.threshold
        checker=lambda wildcards: (
            REPORT_CHECKER
            if wildcards.scorer == "alignscore" and REPORT_CHECKER
            else []
        ),
        corrections=lambda wildcards: (
            REPORT_CORRECTIONS
            if wildcards.scorer == "alignscore"
            and wildcards.benchmark == CORRECTION_BENCHMARK
            and REPORT_CORRECTIONS
            else []
        ),
        code=code("report", "localise"),
    output:
        "results/report/{benchmark}/{scorer}.html",
    log:
        "logs/report/localise/{benchmark}/{scorer}.log",
    conda:
        CONDA_ENV
    params:
        threshold=param("report.localise.threshold"),
        page_size=param("report.localise.page_size"),
        optional=report_optional_arguments,
    shell:
        "factlab report localise --benchmark {wildcards.benchmark} --scorer {wildcards.scorer} "
        "--data {input.data} --scores {input.scores} --threshold {params.threshold} "
        "--page-size {params.page_size} {params.optional} --out {output} > {log} 2>&1"


rule report:
    input:
        [
            f"results/report/{name}/{scorer}.html"
            for name in REPORT_BENCHMARKS
            for scorer in REPORT_SCORERS
            if name in PLAN.scored_by(scorer, PLAN.score_benchmarks)
        ],
