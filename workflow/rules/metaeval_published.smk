# Meta-evaluation: rebuilt published analyses (ScreenEval/SCALE, TRUE, QASemConsistency, agreement).
# METAEVAL_CODE (every module of factlab.metaeval) is defined in metaeval_frank.smk, included first.
# Each command writes its csv/json files into one folder: the folder of the rule's metrics.json.

PUBLISHED_DIR = "results/metaeval"
PUBLISHED_FIGURE_CODE = ["src/factlab/report/figures.py", "src/factlab/report/detection_figures.py"]


rule evaluate_screeneval_published:
    output:
        detection=f"{PUBLISHED_DIR}/screeneval_published/detection.csv",
        split=f"{PUBLISHED_DIR}/screeneval_published/split.csv",
        chunk_size=f"{PUBLISHED_DIR}/screeneval_published/chunk_size.csv",
        comparison=f"{PUBLISHED_DIR}/screeneval_published/published_comparison.csv",
        reliability=f"{PUBLISHED_DIR}/screeneval_published/reliability.csv",
        metrics=f"{PUBLISHED_DIR}/screeneval_published/metrics.json",
    input:
        data="results/data/screeneval_published.parquet",
        code=METAEVAL_CODE,
    params:
        out_dir=lambda wildcards, output: str(Path(output.metrics).parent),
        ece_bins=config["metaeval"]["ece_bins"],
        reliability_bins=config["metaeval"]["reliability_plot_bins"],
        val_fraction=config["metaeval"]["screeneval"]["val_fraction"],
        seed=config["metaeval"]["seed"],
        policies=" ".join(config["metaeval"]["threshold_policies"]),
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/evaluate_screeneval_published.log",
    shell:
        "factlab metaeval screeneval --data {input.data} --out-dir {params.out_dir} "
        "--ece-bins {params.ece_bins} --reliability-bins {params.reliability_bins} "
        "--val-fraction {params.val_fraction} --seed {params.seed} --policies {params.policies} > {log} 2>&1"


rule plot_screeneval_chunk_size:
    output:
        report(
            "paper/figures/screeneval_chunk_size.png",
            caption="../report/screeneval_chunk_size.rst",
            category="screeneval_published",
        ),
    input:
        table=rules.evaluate_screeneval_published.output.chunk_size,
        code=METAEVAL_CODE + PUBLISHED_FIGURE_CODE,
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/plot_screeneval_chunk_size.log",
    shell:
        "factlab metaeval screeneval-chunk-size-figure --table {input.table} --out {output} > {log} 2>&1"


rule plot_screeneval_reliability:
    output:
        report(
            "paper/figures/screeneval_reliability.png",
            caption="../report/screeneval_reliability.rst",
            category="screeneval_published",
        ),
    input:
        table=rules.evaluate_screeneval_published.output.reliability,
        code=METAEVAL_CODE + PUBLISHED_FIGURE_CODE,
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/plot_screeneval_reliability.log",
    shell:
        "factlab metaeval screeneval-reliability-figure --table {input.table} --out {output} > {log} 2>&1"


rule evaluate_true_published:
    output:
        detection=f"{PUBLISHED_DIR}/true_published/detection.csv",
        comparison=f"{PUBLISHED_DIR}/true_published/published_comparison.csv",
        metrics=f"{PUBLISHED_DIR}/true_published/metrics.json",
        md=report(
            "paper/tables/true_published.md",
            caption="../report/true_published_table.rst",
            category="true_published",
        ),
        tex="paper/tables/true_published.tex",
    input:
        data="results/data/true_published.parquet",
        code=METAEVAL_CODE + TABLE_CODE,
    params:
        out_dir=lambda wildcards, output: str(Path(output.metrics).parent),
        ece_bins=config["metaeval"]["ece_bins"],
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/evaluate_true_published.log",
    shell:
        "factlab metaeval true-published --data {input.data} --out-dir {params.out_dir} "
        "--out-md {output.md} --out-tex {output.tex} --ece-bins {params.ece_bins} > {log} 2>&1"


rule summarise_qasem_consistency:
    output:
        statistics=f"{PUBLISHED_DIR}/qasem_consistency/statistics.csv",
        metrics=f"{PUBLISHED_DIR}/qasem_consistency/metrics.json",
        md=report(
            "paper/tables/qasem_consistency.md",
            caption="../report/qasem_consistency_table.rst",
            category="qasem_consistency",
        ),
        tex="paper/tables/qasem_consistency.tex",
    input:
        responses="results/data/qasem_consistency.parquet",
        qas="results/data/qasem_consistency_qas.parquet",
        code=METAEVAL_CODE + TABLE_CODE,
    params:
        out_dir=lambda wildcards, output: str(Path(output.metrics).parent),
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/summarise_qasem_consistency.log",
    shell:
        "factlab metaeval qasem-consistency --responses {input.responses} --qas {input.qas} "
        "--out-dir {params.out_dir} --out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule measure_annotator_agreement:
    output:
        agreement=f"{PUBLISHED_DIR}/agreement/agreement.csv",
        metrics=f"{PUBLISHED_DIR}/agreement/metrics.json",
        md=report(
            "paper/tables/agreement.md",
            caption="../report/agreement_table.rst",
            category="agreement",
        ),
        tex="paper/tables/agreement.tex",
    input:
        # Order = row order of the table.
        data=[
            "results/data/qags_cnndm.parquet",
            "results/data/qags_xsum.parquet",
            "results/data/xsumfaith.parquet",
        ],
        code=METAEVAL_CODE + TABLE_CODE,
    params:
        out_dir=lambda wildcards, output: str(Path(output.metrics).parent),
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/measure_annotator_agreement.log",
    shell:
        "factlab metaeval annotator-agreement --data {input.data} --out-dir {params.out_dir} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


PUBLISHED_OUTPUTS = [
    *rules.evaluate_screeneval_published.output,
    *rules.plot_screeneval_chunk_size.output,
    *rules.plot_screeneval_reliability.output,
    *rules.evaluate_true_published.output,
    *rules.summarise_qasem_consistency.output,
    *rules.measure_annotator_agreement.output,
]
