# Paper: every table (paper/tables/*.{md,tex}) and figure (paper/figures/*.png), rendered from the data and
# metaeval CSVs: restyling one recomputes no statistic. Commands: `factlab paper …` (src/factlab/paper/);
# Captions: src/factlab/paper/captions.py (workflow/report/*.rst are generated from it: python -m factlab.paper.captions).
FRANK_SUBSETS = param("metaeval.frank.subsets")


rule tabulate_datasets:
    input:
        statistics=rules.dataset_statistics.output[0],
        code=code("paper", "datasets-table"),
    output:
        md=report(
            "paper/tables/datasets.md",
            caption="../report/datasets_table.rst",
            category="data",
        ),
        tex="paper/tables/datasets.tex",
    log:
        "logs/paper/tabulate_datasets.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper datasets-table --statistics {input.statistics} --out-md {output.md} --out-tex {output.tex} "
        "> {log} 2>&1"


rule tabulate_frank_baselines:
    input:
        correlations=rules.correlate_frank_baselines.output.all,
        code=code("paper", "frank-table"),
    output:
        md=report(
            "paper/tables/frank_baselines.md",
            caption="../report/frank_baselines_table.rst",
            category="frank_baselines",
        ),
        tex="paper/tables/frank_baselines.tex",
    log:
        "logs/paper/tabulate_frank_baselines.log",
    conda:
        CONDA_ENV
    params:
        subsets=FRANK_SUBSETS,
    shell:
        "factlab paper frank-table --correlations {input.correlations} --subsets {params.subsets} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule plot_frank_williams:
    input:
        williams=rules.compare_frank_metrics.output.williams,
        correlations=rules.correlate_frank_baselines.output.all,
        code=code("paper", "frank-williams-figure"),
    output:
        williams=report(
            "paper/figures/frank_williams.png",
            caption="../report/frank_williams.rst",
            category="frank_baselines",
        ),
        matrix=report(
            "paper/figures/frank_metric_matrix.png",
            caption="../report/frank_metric_matrix.rst",
            category="frank_baselines",
        ),
    log:
        "logs/paper/plot_frank_williams.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper frank-williams-figure --williams {input.williams} --correlations {input.correlations} "
        "--out {output.williams} --out-matrix {output.matrix} > {log} 2>&1"


rule plot_frank_ablation:
    input:
        ablation=rules.ablate_frank_categories.output[0],
        correlations=rules.correlate_frank_baselines.output.all,
        code=code("paper", "frank-ablation-figure"),
    output:
        report(
            "paper/figures/frank_ablation.png",
            caption="../report/frank_ablation.rst",
            category="frank_baselines",
        ),
    log:
        "logs/paper/plot_frank_ablation.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper frank-ablation-figure --ablation {input.ablation} --correlations {input.correlations} "
        "--out {output} > {log} 2>&1"


rule plot_screeneval_chunk_size:
    input:
        table=rules.evaluate_screeneval_published.output.chunk_size,
        code=code("paper", "screeneval-chunk-size-figure"),
    output:
        report(
            "paper/figures/screeneval_chunk_size.png",
            caption="../report/screeneval_chunk_size.rst",
            category="screeneval_published",
        ),
    log:
        "logs/paper/plot_screeneval_chunk_size.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper screeneval-chunk-size-figure --table {input.table} --out {output} > {log} 2>&1"


# factlab's own chunk-size sweep: AlignScore's tuning grid on the validation benchmarks, the chosen cell starred.
rule plot_alignscore_tuning:
    input:
        table=rules.tune_alignscore.output.table,
        choice=rules.tune_alignscore.output.choice,
        code=code("paper", "alignscore-tuning-figure"),
    output:
        report(
            "paper/figures/alignscore_tuning.png",
            caption="../report/alignscore_tuning.rst",
            category="score",
        ),
    log:
        "logs/paper/plot_alignscore_tuning.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper alignscore-tuning-figure --table {input.table} --choice {input.choice} --out {output} > {log} 2>&1"


rule plot_screeneval_reliability:
    input:
        table=rules.evaluate_screeneval_published.output.reliability,
        code=code("paper", "reliability-figure"),
    output:
        report(
            "paper/figures/screeneval_reliability.png",
            caption="../report/screeneval_reliability.rst",
            category="screeneval_published",
        ),
    log:
        "logs/paper/plot_screeneval_reliability.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper reliability-figure --table {input.table} --columns 2 --out {output} > {log} 2>&1"


rule tabulate_true_published:
    input:
        detection=rules.evaluate_true_published.output.detection,
        code=code("paper", "true-published-table"),
    output:
        md=report(
            "paper/tables/true_published.md",
            caption="../report/true_published_table.rst",
            category="true_published",
        ),
        tex="paper/tables/true_published.tex",
    log:
        "logs/paper/tabulate_true_published.log",
    conda:
        CONDA_ENV
    params:
        ece_bins=param("metaeval.ece_bins"),
    shell:
        "factlab paper true-published-table --detection {input.detection} --ece-bins {params.ece_bins} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_qasem_consistency:
    input:
        statistics=rules.summarise_qasem_consistency.output.statistics,
        code=code("paper", "qasem-consistency-table"),
    output:
        md=report(
            "paper/tables/qasem_consistency.md",
            caption="../report/qasem_consistency_table.rst",
            category="qasem_consistency",
        ),
        tex="paper/tables/qasem_consistency.tex",
    log:
        "logs/paper/tabulate_qasem_consistency.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper qasem-consistency-table --statistics {input.statistics} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_agreement:
    input:
        agreement=rules.measure_annotator_agreement.output.agreement,
        code=code("paper", "agreement-table"),
    output:
        md=report(
            "paper/tables/agreement.md",
            caption="../report/agreement_table.rst",
            category="agreement",
        ),
        tex="paper/tables/agreement.tex",
    log:
        "logs/paper/tabulate_agreement.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper agreement-table --agreement {input.agreement} --out-md {output.md} --out-tex {output.tex} "
        "> {log} 2>&1"


rule tabulate_qasem_parser:
    input:
        scores=rules.evaluate_qasem_parser.output.scores,
        detection=rules.evaluate_qasem_parser.output.detection,
        bootstrap=rules.evaluate_qasem_parser.output.bootstrap,
        code=code("paper", "qasem-parser-table"),
    output:
        md=report(
            "paper/tables/qasem_parser.md",
            caption="../report/qasem_parser_table.rst",
            category="qasem_parser",
        ),
        tex="paper/tables/qasem_parser.tex",
    log:
        "logs/paper/tabulate_qasem_parser.log",
    conda:
        CONDA_ENV
    params:
        iou=param("qasem.evaluate.iou_threshold"),
    shell:
        "factlab paper qasem-parser-table --scores {input.scores} --detection {input.detection} "
        "--bootstrap {input.bootstrap} --iou-threshold {params.iou} --out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_training_mixture:
    input:
        report=rules.build_training_mixture.output.report,
        code=code("paper", "mixture-table"),
    output:
        md=report(
            "paper/tables/training_mixture.md",
            caption="../report/training_mixture_table.rst",
            category="training",
        ),
        tex="paper/tables/training_mixture.tex",
    log:
        "logs/paper/tabulate_training_mixture.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper mixture-table --report {input.report} --out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_true_detection:
    input:
        auc=rules.evaluate_true_detection.output.auc,
        code=code("paper", "true-detection-table"),
    output:
        md=report(
            "paper/tables/true_detection.md",
            caption="../report/true_detection_table.rst",
            category="factlab_scorers",
        ),
        tex="paper/tables/true_detection.tex",
    log:
        "logs/paper/tabulate_true_detection.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper true-detection-table --auc {input.auc} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_detection:
    input:
        auc=rules.evaluate_detection.output.auc,
        code=code("paper", "detection-table"),
    output:
        md=report(
            "paper/tables/detection.md",
            caption="../report/detection_table.rst",
            category="factlab_scorers",
        ),
        tex="paper/tables/detection.tex",
    log:
        "logs/paper/tabulate_detection.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper detection-table --auc {input.auc} --out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_leaderboard:
    input:
        leaderboard=rules.evaluate_leaderboard.output.leaderboard,
        code=code("paper", "leaderboard-table"),
    output:
        md=report(
            "paper/tables/leaderboard.md",
            caption="../report/leaderboard_table.rst",
            category="factlab_scorers",
        ),
        tex="paper/tables/leaderboard.tex",
    log:
        "logs/paper/tabulate_leaderboard.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper leaderboard-table --leaderboard {input.leaderboard} --out-md {output.md} --out-tex {output.tex} "
        "> {log} 2>&1"


rule tabulate_decisions:
    input:
        decisions=rules.evaluate_decisions.output.decisions,
        code=code("paper", "decisions-table"),
    output:
        md=report(
            "paper/tables/decisions.md",
            caption="../report/decisions_table.rst",
            category="factlab_scorers",
        ),
        tex="paper/tables/decisions.tex",
    log:
        "logs/paper/tabulate_decisions.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper decisions-table --decisions {input.decisions} --out-md {output.md} --out-tex {output.tex} "
        "> {log} 2>&1"


rule tabulate_calibration_gain:
    input:
        gain=rules.evaluate_calibration_gain.output.gain,
        code=code("paper", "calibration-gain-table"),
    output:
        md=report(
            "paper/tables/calibration_gain.md",
            caption="../report/calibration_gain_table.rst",
            category="factlab_scorers",
        ),
        tex="paper/tables/calibration_gain.tex",
    log:
        "logs/paper/tabulate_calibration_gain.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper calibration-gain-table --gain {input.gain} --out-md {output.md} --out-tex {output.tex} "
        "> {log} 2>&1"


rule plot_true_reliability:
    input:
        table=rules.evaluate_true_detection.output.reliability,
        code=code("paper", "reliability-figure"),
    output:
        report(
            "paper/figures/true_reliability.png",
            caption="../report/true_reliability.rst",
            category="factlab_scorers",
        ),
    log:
        "logs/paper/plot_true_reliability.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper reliability-figure --table {input.table} --columns 4 --out {output} > {log} 2>&1"


rule plot_detection_reliability:
    input:
        table=rules.evaluate_detection.output.reliability,
        code=code("paper", "reliability-figure"),
    output:
        report(
            "paper/figures/detection_reliability.png",
            caption="../report/detection_reliability.rst",
            category="factlab_scorers",
        ),
    log:
        "logs/paper/plot_detection_reliability.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper reliability-figure --table {input.table} --columns 4 --out {output} > {log} 2>&1"


rule tabulate_frank_scorers:
    input:
        correlations=rules.correlate_frank_scorers.output.correlations,
        williams=rules.correlate_frank_scorers.output.williams,
        code=code("paper", "frank-scorers-table"),
    output:
        md=report(
            "paper/tables/frank_scorers.md",
            caption="../report/frank_scorers_table.rst",
            category="factlab_scorers",
        ),
        tex="paper/tables/frank_scorers.tex",
    log:
        "logs/paper/tabulate_frank_scorers.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper frank-scorers-table --correlations {input.correlations} --williams {input.williams} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_summeval_scorers:
    input:
        correlations=rules.correlate_summeval_scorers.output.correlations,
        williams=rules.correlate_summeval_scorers.output.williams,
        code=code("paper", "summeval-scorers-table"),
    output:
        md=report(
            "paper/tables/summeval_scorers.md",
            caption="../report/summeval_scorers_table.rst",
            category="factlab_scorers",
        ),
        tex="paper/tables/summeval_scorers.tex",
    log:
        "logs/paper/tabulate_summeval_scorers.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper summeval-scorers-table --correlations {input.correlations} --williams {input.williams} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


# factlab's scorers and the released metrics they are compared with: Williams p-values and their partial correlations.
rule plot_frank_scorers_williams:
    input:
        williams=rules.correlate_frank_scorers.output.williams,
        correlations=rules.correlate_frank_scorers.output.correlations,
        code=code("paper", "frank-williams-figure"),
    output:
        williams=report(
            "paper/figures/frank_scorers_williams.png",
            caption="../report/frank_scorers_williams.rst",
            category="factlab_scorers",
        ),
        matrix=report(
            "paper/figures/frank_scorers_matrix.png",
            caption="../report/frank_scorers_matrix.rst",
            category="factlab_scorers",
        ),
    log:
        "logs/paper/plot_frank_scorers_williams.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper frank-williams-figure --williams {input.williams} --correlations {input.correlations} "
        "--out {output.williams} --out-matrix {output.matrix} > {log} 2>&1"


rule plot_frank_scorers_ablation:
    input:
        ablation=rules.correlate_frank_scorers.output.ablation,
        correlations=rules.correlate_frank_scorers.output.correlations,
        code=code("paper", "frank-ablation-figure"),
    output:
        report(
            "paper/figures/frank_scorers_ablation.png",
            caption="../report/frank_scorers_ablation.rst",
            category="factlab_scorers",
        ),
    log:
        "logs/paper/plot_frank_scorers_ablation.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper frank-ablation-figure --ablation {input.ablation} --correlations {input.correlations} "
        "--out {output} > {log} 2>&1"


rule tabulate_error_types:
    input:
        categories=rules.evaluate_error_types.output.categories,
        report=rules.evaluate_error_types.output.report,
        code=code("paper", "error-types-table"),
    output:
        md=report(
            "paper/tables/error_types.md",
            caption="../report/error_types_table.rst",
            category="localisation",
        ),
        tex="paper/tables/error_types.tex",
    log:
        "logs/paper/tabulate_error_types.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper error-types-table --categories {input.categories} --error-types-report {input.report} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_correction:
    input:
        systems=rules.evaluate_correction.output.systems,
        restore=rules.evaluate_correction.output.restore,
        code=code("paper", "correction-table"),
    output:
        md=report(
            "paper/tables/correction.md",
            caption="../report/correction_table.rst",
            category="localisation",
        ),
        tex="paper/tables/correction.tex",
    log:
        "logs/paper/tabulate_correction.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper correction-table --systems {input.systems} --restore {input.restore} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_explanations:
    input:
        summary=rules.evaluate_explanations.output.summary,
        code=code("paper", "explanations-table"),
    output:
        md=report(
            "paper/tables/explanations.md",
            caption="../report/explanations_table.rst",
            category="localisation",
        ),
        tex="paper/tables/explanations.tex",
    log:
        "logs/paper/tabulate_explanations.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper explanations-table --summary {input.summary} --out-md {output.md} --out-tex {output.tex} "
        "> {log} 2>&1"


rule tabulate_localisation:
    input:
        tokens=rules.evaluate_localisation.output.tokens,
        localisation_report=rules.evaluate_localisation.output.report,
        retrieval_report=rules.scale_retrieval.output.report,
        code=code("paper", "localisation-table"),
    output:
        md=report(
            "paper/tables/localisation.md",
            caption="../report/localisation_table.rst",
            category="localisation",
        ),
        tex="paper/tables/localisation.tex",
    log:
        "logs/paper/tabulate_localisation.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper localisation-table --tokens {input.tokens} --localisation-report {input.localisation_report} "
        "--retrieval-report {input.retrieval_report} --out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_retrieval:
    input:
        report=rules.scale_retrieval.output.report,
        code=code("paper", "retrieval-table"),
    output:
        md=report(
            "paper/tables/scale_retrieval.md",
            caption="../report/retrieval_table.rst",
            category="localisation",
        ),
        tex="paper/tables/scale_retrieval.tex",
    log:
        "logs/paper/tabulate_retrieval.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper retrieval-table --report {input.report} --out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_qa_decomposition:
    input:
        responses=rules.evaluate_qa_decomposition.output.responses,
        qas=rules.evaluate_qa_decomposition.output.qas,
        code=code("paper", "qa-decomposition-table"),
    output:
        md=report(
            "paper/tables/qa_decomposition.md",
            caption="../report/qa_decomposition_table.rst",
            category="localisation",
        ),
        tex="paper/tables/qa_decomposition.tex",
    log:
        "logs/paper/tabulate_qa_decomposition.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper qa-decomposition-table --responses {input.responses} --qas {input.qas} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_qa_detection:
    input:
        detection=rules.evaluate_qa_detection.output.detection,
        published=rules.evaluate_qa_detection.output.published,
        code=code("paper", "qa-detection-table"),
    output:
        md=report(
            "paper/tables/qa_detection.md",
            caption="../report/qa_detection_table.rst",
            category="localisation",
        ),
        tex="paper/tables/qa_detection.tex",
    log:
        "logs/paper/tabulate_qa_detection.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper qa-detection-table --detection {input.detection} --published {input.published} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


# Every (scorer, benchmark) the run scores in sharded jobs (an imported score file costs nothing), and the benchmark
# file of each of its shards' jobs.
SCORING_JOBS = [
    (scorer, name)
    for scorer in PLAN.scorers
    if scorer not in PLAN.imported_scorers
    for name in PLAN.scored_by(scorer, PLAN.score_benchmarks)
]
SCORING_JOB_BENCHMARKS = [
    f"benchmarks/score/{scorer}/{name}.{shard}.tsv"
    for scorer, name in SCORING_JOBS
    for shard in range(PLAN.shards)
]

# What the run cost: every job's `benchmark:` file (its wall and CPU time, peak memory). The list mirrors the
# jobs the default target builds; tests/test_paper_pipeline_cost.py checks it adds no job to the DAG. Data
# builds (minutes in all) have none: Snakemake counts a benchmark file as an output, so adding one would
# rebuild every existing tree's data and, by mtime, everything downstream.
COST_BENCHMARKS = [
    *expand(rules.preprocess_sentences.benchmark, benchmark=PLAN.preprocess_benchmarks),
    *expand(rules.preprocess_triples.benchmark, benchmark=PLAN.triple_benchmarks),
    *expand(rules.preprocess_qas.benchmark, benchmark=PLAN.parsed_qa_benchmarks),
    rules.train_qasem_parser.benchmark,
    rules.build_training_mixture.benchmark,
    rules.train_aligner.benchmark,
    rules.tune_alignscore.benchmark,
    rules.scale_retrieval.benchmark,
    *([rules.fit_summac_conv.benchmark] if "summac_conv" in PLAN.scorers else []),
    *expand(
        rules.fit_ensemble.benchmark,
        benchmark=(
            PLAN.scored_by("ensemble", PLAN.score_benchmarks)
            if "ensemble" in PLAN.scorers
            else []
        ),
    ),
    *SCORING_JOB_BENCHMARKS,
    *expand(
        rules.score_qa_decomposition.benchmark,
        benchmark=PLAN.qa_decomposition_benchmarks,
        decomposition=PLAN.qa_decompositions_scored,
    ),
    rules.evaluate_qasem_parser.benchmark,
]


rule tabulate_pipeline_cost:
    input:
        benchmarks=COST_BENCHMARKS,
        throughput=rules.benchmark_scoring_throughput.output[0],
        code=code("paper", "pipeline-cost-table"),
    output:
        md=report(
            "paper/tables/pipeline_cost.md",
            caption="../report/pipeline_cost_table.rst",
            category="pipeline",
        ),
        tex="paper/tables/pipeline_cost.tex",
    log:
        "logs/paper/tabulate_pipeline_cost.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper pipeline-cost-table --benchmarks {input.benchmarks} --throughput {input.throughput} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


# Every scorer's examples, words and pairs per second, from its jobs' benchmark files and merged reports.
rule tabulate_scoring_throughput:
    input:
        benchmarks=SCORING_JOB_BENCHMARKS,
        # the merged reports and score tables, in SCORING_JOBS' order (the command pairs them)
        reports=expand(
            rules.merge_scores.output.report,
            zip,
            scorer=[scorer for scorer, _ in SCORING_JOBS],
            benchmark=[name for _, name in SCORING_JOBS],
        ),
        scores=expand(
            rules.merge_scores.output.scores,
            zip,
            scorer=[scorer for scorer, _ in SCORING_JOBS],
            benchmark=[name for _, name in SCORING_JOBS],
        ),
        data=expand(
            "results/data/{benchmark}.parquet",
            benchmark=sorted({name for _, name in SCORING_JOBS}),
        ),
        code=code("paper", "scoring-throughput-table"),
    output:
        csv="results/paper/scoring_throughput.csv",
        md=report(
            "paper/tables/scoring_throughput.md",
            caption="../report/scoring_throughput_table.rst",
            category="pipeline",
        ),
        tex="paper/tables/scoring_throughput.tex",
    log:
        "logs/paper/tabulate_scoring_throughput.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper scoring-throughput-table --benchmarks {input.benchmarks} --reports {input.reports} "
        "--scores {input.scores} --data {input.data} --out-csv {output.csv} --out-md {output.md} "
        "--out-tex {output.tex} > {log} 2>&1"


# Every table and figure: rule `paper` builds them, write_paper_main puts each in paper/main.tex (a new
# table or figure listed here appears in the paper; a figure needs a caption in captions.FIGURES).
PAPER_PARTS = [
    rules.tabulate_datasets.output,
    rules.tabulate_frank_baselines.output,
    rules.plot_frank_williams.output,
    rules.plot_frank_ablation.output,
    rules.plot_screeneval_chunk_size.output,
    rules.plot_screeneval_reliability.output,
    rules.plot_alignscore_tuning.output,
    rules.tabulate_true_published.output,
    rules.tabulate_qasem_consistency.output,
    rules.tabulate_agreement.output,
    rules.tabulate_qasem_parser.output,
    rules.tabulate_training_mixture.output,
    rules.tabulate_true_detection.output,
    rules.tabulate_detection.output,
    *([rules.tabulate_leaderboard.output] if PLAN.leaderboard_runs else []),
    *([rules.tabulate_decisions.output] if PLAN.decisions_runs else []),
    *([rules.tabulate_calibration_gain.output] if PLAN.calibration_gain_runs else []),
    rules.plot_true_reliability.output,
    rules.plot_detection_reliability.output,
    rules.tabulate_retrieval.output,
    rules.tabulate_pipeline_cost.output,
    *([rules.tabulate_scoring_throughput.output] if SCORING_JOBS else []),
    *([rules.tabulate_frank_scorers.output] if PLAN.frank_scored else []),
    *([rules.plot_frank_scorers_ablation.output] if PLAN.frank_scored else []),
    *([rules.plot_frank_scorers_williams.output] if PLAN.frank_scored else []),
    *([rules.tabulate_summeval_scorers.output] if PLAN.summeval_scored else []),
    *([rules.tabulate_localisation.output] if PLAN.localisation_runs else []),
    *([rules.tabulate_error_types.output] if PLAN.error_types_runs else []),
    *([rules.tabulate_correction.output] if PLAN.correction_runs else []),
    *([rules.tabulate_explanations.output] if PLAN.explanation_runs else []),
    *([rules.tabulate_qa_decomposition.output] if PLAN.qa_decomposition_runs else []),
    *([rules.tabulate_qa_detection.output] if PLAN.qa_detection_runs else []),
]
PAPER_TABLES = [
    str(path) for part in PAPER_PARTS for path in part if str(path).endswith(".tex")
]
PAPER_FIGURES = [
    str(path)
    for part in PAPER_PARTS
    for path in part
    if str(path).endswith((".png", ".pdf"))
]
RULE_FILES = sorted(str(path) for path in Path("workflow/rules").glob("*.smk"))


# The README's upstream rules and keys come from the jobs' DAG, which the command builds again from this run's
# Snakefile, --configfile files and --config values (a param: new values rerun the README).
RUN_SNAKEFILE = run_relative(workflow.main_snakefile)
RUN_CONFIGFILES = [run_relative(path) for path in workflow.overwrite_configfiles]
RUN_CONFIG_OVERRIDES = json.dumps(
    dict(workflow.config_settings.config), sort_keys=True, default=str
)


rule write_paper_main:
    input:
        tables=PAPER_TABLES,
        figures=PAPER_FIGURES,
        snakefile=RUN_SNAKEFILE,
        rule_files=RULE_FILES,
        configfiles=RUN_CONFIGFILES,
        code=code("paper", "main-tex"),
    output:
        tex="paper/main.tex",
        readme="paper/README.md",
    log:
        "logs/paper/write_paper_main.log",
    conda:
        CONDA_ENV
    params:
        config_overrides=RUN_CONFIG_OVERRIDES,
    shell:
        "factlab paper main-tex --tables {input.tables} --figures {input.figures} "
        "--snakefile {input.snakefile:q} --rule-files {input.rule_files} --configfiles {input.configfiles:q} "
        "--config-overrides {params.config_overrides:q} --out-tex {output.tex} --out-readme {output.readme} > {log} 2>&1"


# Needs pdflatex (latexmk if installed) and pdfinfo: `make tex` installs them (README, Set-up). Fails on a
# LaTeX error or an undefined or multiply defined reference (logs/paper/main.latex.log).
rule paper_pdf:
    input:
        tex=rules.write_paper_main.output.tex,
        tables=PAPER_TABLES,
        figures=PAPER_FIGURES,
        code=code("paper", "pdf"),
    output:
        "paper/main.pdf",
    log:
        command="logs/paper/paper_pdf.log",
        latex="logs/paper/main.latex.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper pdf --tex {input.tex} --out {output} --latex-log {log.latex} > {log.command} 2>&1"


rule paper:
    input:
        PAPER_PARTS,
        rules.write_paper_main.output,
        rules.paper_pdf.output,
