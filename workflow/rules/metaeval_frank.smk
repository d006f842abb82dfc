# Meta-evaluation: FRANK's evaluation of its baseline metrics, rebuilt from FRANK's released
# metric scores and human labels (partial correlations, Williams tests, error-category ablation).
# Commands: `factlab metaeval frank-*` (src/factlab/metaeval/published/frank.py).
import factlab.metaeval

# Every statistic and analysis module is an input of the meta-evaluation rules (metaeval_published.smk
# uses it too): editing any of it reruns them.
METAEVAL_CODE = sorted(str(p) for p in Path(factlab.metaeval.__file__).parent.rglob("*.py"))
FRANK_FIGURE_CODE = [
    "src/factlab/report/figures.py",
    "src/factlab/report/frank_figures.py",
]
FRANK_INPUTS = {
    "benchmark": "results/data/frank.parquet",
    "scores": "results/data/frank_baseline_scores.parquet",
}
FRANK_DIR = "results/metaeval/frank_baselines"
FRANK_PARAMS = config["metaeval"]["frank"]


rule correlate_frank_baselines:
    output:
        all=f"{FRANK_DIR}/correlations.csv",
        test=f"{FRANK_DIR}/correlations_test.csv",
    input:
        **FRANK_INPUTS,
        code=METAEVAL_CODE,
    params:
        subsets=FRANK_PARAMS["subsets"],
        variant=FRANK_PARAMS["partial_variant"],
        resamples=config["metaeval"]["bootstrap_resamples"],
        confidence=config["metaeval"]["confidence"],
        seed=config["metaeval"]["seed"],
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/frank_correlations.log",
    shell:
        "factlab metaeval frank-correlations --benchmark {input.benchmark} --scores {input.scores} "
        "--subsets {params.subsets} --variant {params.variant} --resamples {params.resamples} "
        "--confidence {params.confidence} --seed {params.seed} --out {output.all} --out-test {output.test} "
        "> {log} 2>&1"


rule compare_frank_metrics:
    output:
        williams=f"{FRANK_DIR}/williams.csv",
        matrix=f"{FRANK_DIR}/metric_matrix.csv",
    input:
        **FRANK_INPUTS,
        code=METAEVAL_CODE,
    params:
        variant=FRANK_PARAMS["williams_variant"],
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/frank_williams.log",
    shell:
        "factlab metaeval frank-williams --benchmark {input.benchmark} --scores {input.scores} "
        "--variant {params.variant} --out {output.williams} --out-matrix {output.matrix} > {log} 2>&1"


rule ablate_frank_categories:
    output:
        f"{FRANK_DIR}/ablation.csv",
    input:
        **FRANK_INPUTS,
        code=METAEVAL_CODE,
    params:
        subsets=FRANK_PARAMS["subsets"],
        variant=FRANK_PARAMS["partial_variant"],
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/frank_ablation.log",
    shell:
        "factlab metaeval frank-ablation --benchmark {input.benchmark} --scores {input.scores} "
        "--subsets {params.subsets} --variant {params.variant} --out {output} > {log} 2>&1"


rule plot_frank_williams:
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
    input:
        williams=rules.compare_frank_metrics.output.williams,
        correlations=rules.correlate_frank_baselines.output.all,
        code=METAEVAL_CODE + FRANK_FIGURE_CODE,
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/frank_plot_williams.log",
    shell:
        "factlab metaeval frank-plot-williams --williams {input.williams} --correlations {input.correlations} "
        "--out {output.williams} --out-matrix {output.matrix} > {log} 2>&1"


rule plot_frank_ablation:
    output:
        report(
            "paper/figures/frank_ablation.png",
            caption="../report/frank_ablation.rst",
            category="frank_baselines",
        ),
    input:
        ablation=rules.ablate_frank_categories.output[0],
        correlations=rules.correlate_frank_baselines.output.all,
        code=METAEVAL_CODE + FRANK_FIGURE_CODE,
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/frank_plot_ablation.log",
    shell:
        "factlab metaeval frank-plot-ablation --ablation {input.ablation} --correlations {input.correlations} "
        "--out {output} > {log} 2>&1"


rule tabulate_frank_baselines:
    output:
        md="paper/tables/frank_baselines.md",
        tex="paper/tables/frank_baselines.tex",
    input:
        correlations=rules.correlate_frank_baselines.output.all,
        code=METAEVAL_CODE + TABLE_CODE,
    params:
        subsets=FRANK_PARAMS["subsets"],
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/frank_table.log",
    shell:
        "factlab metaeval frank-table --correlations {input.correlations} --subsets {params.subsets} "
        "--out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


rule summarise_frank_baselines:
    output:
        f"{FRANK_DIR}/metrics.json",
    input:
        correlations=rules.correlate_frank_baselines.output.all,
        williams=rules.compare_frank_metrics.output.williams,
        code=METAEVAL_CODE,
    conda:
        CONDA_ENV
    log:
        "logs/metaeval/frank_summary.log",
    shell:
        "factlab metaeval frank-summary --correlations {input.correlations} --williams {input.williams} "
        "--out {output} > {log} 2>&1"


FRANK_OUTPUTS = [
    *rules.correlate_frank_baselines.output,
    *rules.compare_frank_metrics.output,
    *rules.ablate_frank_categories.output,
    *rules.plot_frank_williams.output,
    *rules.plot_frank_ablation.output,
    *rules.tabulate_frank_baselines.output,
    *rules.summarise_frank_baselines.output,
]
