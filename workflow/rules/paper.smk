# Paper: every table (paper/tables/*.{md,tex}) and figure (paper/figures/*.png), rendered from the data and
# metaeval CSVs: restyling one recomputes no statistic. Commands: `factlab paper …` (src/factlab/paper/);
# LaTeX captions: src/factlab/paper/captions.py; report captions: workflow/report/*.rst.
FRANK_SUBSETS = param("metaeval.frank.subsets")


rule tabulate_datasets:
    input:
        statistics=rules.dataset_statistics.output[0],
        code=code("paper", "datasets-table"),
    output:
        md="paper/tables/datasets.md",
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
        md="paper/tables/frank_baselines.md",
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


rule plot_screeneval_reliability:
    input:
        table=rules.evaluate_screeneval_published.output.reliability,
        code=code("paper", "screeneval-reliability-figure"),
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
        "factlab paper screeneval-reliability-figure --table {input.table} --out {output} > {log} 2>&1"


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
        "--iou-threshold {params.iou} --out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule tabulate_training_mixture:
    input:
        report=rules.build_training_mixture.output.report,
        code=code("paper", "mixture-table"),
    output:
        md="paper/tables/training_mixture.md",
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
        published=rules.evaluate_true_published.output.detection,
        code=code("paper", "true-detection-table"),
    output:
        md="paper/tables/true_detection.md",
        tex="paper/tables/true_detection.tex",
    log:
        "logs/paper/tabulate_true_detection.log",
    conda:
        CONDA_ENV
    shell:
        "factlab paper true-detection-table --auc {input.auc} --published {input.published} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule paper:
    input:
        rules.tabulate_datasets.output,
        rules.tabulate_frank_baselines.output,
        rules.plot_frank_williams.output,
        rules.plot_frank_ablation.output,
        rules.plot_screeneval_chunk_size.output,
        rules.plot_screeneval_reliability.output,
        rules.tabulate_true_published.output,
        rules.tabulate_qasem_consistency.output,
        rules.tabulate_agreement.output,
        rules.tabulate_qasem_parser.output,
        rules.tabulate_training_mixture.output,
        rules.tabulate_true_detection.output,
