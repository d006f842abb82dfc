"""FRANK's baseline meta-evaluation, rebuilt on the real FRANK labels and scores.

References are computed here independently: partial correlations as scipy on "score minus its
system's mean" (pandas groupby), the principled variant against pingouin.partial_corr, the
Williams test from its formula, and the ablation as a difference of such correlations.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

from factlab.cli import main
from factlab.data.adapters.frank import BASELINE_METRICS, adapt_frank, adapt_frank_baselines
from factlab.errors import DataError
from factlab.metaeval.analyses.published import frank_command as published
from factlab.paper import captions
from factlab.paper.frank_command import frank_layout

SOME_METRICS = ["FactCC", "Dep Entail", "BertScore P Art"]  # Dep Entail has 83 missing scores


@pytest.fixture(scope="module")
def labels(raw) -> pd.DataFrame:
    return adapt_frank(raw).frame


@pytest.fixture(scope="module")
def scores(raw) -> pd.DataFrame:
    return adapt_frank_baselines(raw).frame


@pytest.fixture(scope="module")
def joined(labels, scores) -> pd.DataFrame:
    return published.join_scores(labels, scores)


@pytest.fixture(scope="module")
def correlations(joined) -> pd.DataFrame:
    return published.metric_human_correlations(joined, ["all", "cnndm", "xsum"], "frank")


def demeaned(frame: pd.DataFrame, column: str) -> pd.Series:
    """Residual of `column` on the system: its value minus its system's mean (FRANK's regression)."""
    return frame[column] - frame.groupby("system")[column].transform("mean")


def test_join_keeps_every_summary_and_frank_metric_names(joined):
    assert len(joined) == 2246
    assert joined["example_id"].is_unique
    assert set(BASELINE_METRICS) <= set(joined.columns)
    assert joined[list(BASELINE_METRICS)].isna().sum()[lambda s: s > 0].to_dict() == {"FEQA": 4, "Dep Entail": 83}
    assert len(published.flip_columns(joined)) == 11


def test_join_rejects_unmatched_or_disagreeing_rows(labels, scores):
    with pytest.raises(DataError, match="not in both tables"):
        published.join_scores(labels, scores.iloc[1:])
    swapped = scores.copy()
    swapped.loc[0, "system"] = "some other system"
    with pytest.raises(DataError, match="disagree on system"):
        published.join_scores(labels, swapped)
    with pytest.raises(DataError, match="lacks metric columns"):
        published.join_scores(labels, scores.drop(columns=["QAGS"]))


def test_one_row_per_metric_and_subset_with_counts(correlations):
    assert list(correlations.columns[:7]) == ["metric", "subset", "n", "pearson", "pearson_p", "spearman", "spearman_p"]
    assert len(correlations) == 15 * 3
    assert correlations["metric"].tolist()[:15] == list(BASELINE_METRICS)
    n = correlations.set_index(["subset", "metric"])["n"]
    assert n["all"].drop(["FEQA", "Dep Entail"]).eq(2246).all()
    assert n["cnndm"].drop("Dep Entail").eq(1250).all() and n["xsum"].drop(["FEQA", "Dep Entail"]).eq(996).all()
    # Missing scores are dropped per metric only (FEQA's 4 rows stay for every other metric).
    assert (n["all", "FEQA"], n["all", "Dep Entail"]) == (2242, 2163)
    dropped = correlations.set_index(["subset", "metric"])["n_dropped_nan"]
    assert (dropped["all", "Dep Entail"], dropped["cnndm", "Dep Entail"], dropped["xsum", "Dep Entail"]) == (83, 68, 15)
    assert (correlations["variant"] == "frank").all()


@pytest.mark.parametrize("subset", ["all", "cnndm", "xsum"])
@pytest.mark.parametrize("metric", SOME_METRICS)
def test_frank_variant_equals_scipy_on_system_demeaned_scores(joined, correlations, subset, metric):
    part = joined if subset == "all" else joined[joined["subset"] == subset]
    part = part.dropna(subset=[metric])
    x, y = demeaned(part, metric), demeaned(part, "human_score")
    row = correlations.set_index(["metric", "subset"]).loc[(metric, subset)]
    assert row["n"] == len(part)
    assert row["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-10)
    assert row["pearson_p"] == pytest.approx(stats.pearsonr(x, y).pvalue, rel=1e-6)
    assert row["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-10)
    assert row["spearman_p"] == pytest.approx(stats.spearmanr(x, y).pvalue, rel=1e-6)


def test_frank_published_headlines_are_reproduced(correlations):
    """FRANK's README (after the July 2021 BERTScore fix): BertScore P Art is best by Pearson, FactCC by Spearman."""
    everything = correlations[correlations["subset"] == "all"].set_index("metric")
    assert everything["pearson"].idxmax() == "BertScore P Art"
    assert everything["spearman"].idxmax() == "FactCC"
    assert everything.loc["FactCC", "pearson"] == pytest.approx(0.20, abs=0.005)
    assert everything.loc["FEQA", "pearson_p"] > 0.05


def test_ranked_variant_matches_pingouin(joined):
    result = published.metric_human_correlations(joined, ["xsum"], "ranked", ["FactCC"]).iloc[0]
    part = joined[joined["subset"] == "xsum"]
    data = pd.concat([part[["FactCC", "human_score"]], pd.get_dummies(part["system"], drop_first=True).astype(float)], axis=1)
    covariates = [c for c in data.columns if c not in ("FactCC", "human_score")]
    spearman = pg.partial_corr(data, x="FactCC", y="human_score", covar=covariates, method="spearman")
    assert result["spearman"] == pytest.approx(spearman["r"].iloc[0], abs=1e-10)
    assert result["spearman_p"] == pytest.approx(spearman["p_val"].iloc[0], rel=1e-6)


def test_bootstrap_cis_are_reproducible_and_cover_the_estimate(joined, correlations):
    settings = published.BootstrapSettings(n_resamples=200, confidence=0.95, seed=2022)
    cis = published.pearson_bootstrap_cis(joined, settings, ["FactCC", "Dep Entail"])
    again = published.pearson_bootstrap_cis(joined, settings, ["Dep Entail", "FactCC"])
    pd.testing.assert_frame_equal(cis.set_index("metric"), again.set_index("metric").loc[cis["metric"]])
    filled = published.with_bootstrap_cis(correlations[correlations["metric"].isin(cis["metric"])], cis)
    on_all = filled[filled["subset"] == "all"]
    assert (on_all["pearson_ci_low"] < on_all["pearson"]).all() and (on_all["pearson"] < on_all["pearson_ci_high"]).all()
    assert (on_all["pearson_ci_high"] - on_all["pearson_ci_low"]).between(0.03, 0.2).all()
    assert filled.loc[filled["subset"] != "all", "pearson_ci_low"].isna().all()


def williams_by_hand(r12: float, r13: float, r23: float, n: int) -> float:
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    return (
        (r12 - r13)
        * math.sqrt((n - 1) * (1 + r23))
        / math.sqrt(2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
    )


def test_williams_on_rows_where_both_metrics_are_present(joined):
    comparisons = published.williams_comparisons(joined, "two_sided", SOME_METRICS)
    assert len(comparisons) == 3
    row = comparisons.set_index(["metric_a", "metric_b"]).loc[("FactCC", "Dep Entail")]
    both = joined.dropna(subset=["FactCC", "Dep Entail"])
    a, b, h = (demeaned(both, c) for c in ("FactCC", "Dep Entail", "human_score"))
    r12, r13, r23 = stats.pearsonr(a, h).statistic, stats.pearsonr(b, h).statistic, stats.pearsonr(a, b).statistic
    t = williams_by_hand(r12, r13, r23, len(both))
    assert (row["n"], row["n_dropped_nan"], row["df"]) == (2163, 83, 2160)
    assert (row["r12"], row["r13"], row["r23"]) == pytest.approx((r12, r13, r23), abs=1e-10)
    assert row["t"] == pytest.approx(t, rel=1e-8)
    assert row["p_two_sided"] == pytest.approx(2 * stats.t.sf(abs(t), len(both) - 3), rel=1e-8)
    assert row["p_frank_one_sided"] == pytest.approx(1 - stats.t.cdf(abs(t), len(both) - 3), rel=1e-6)
    assert (comparisons["p"] == comparisons["p_two_sided"]).all()
    frank_selected = published.williams_comparisons(joined, "frank_one_sided", SOME_METRICS)
    assert (frank_selected["p"] == frank_selected["p_frank_one_sided"]).all()


def test_pairwise_matrix_is_symmetric_with_unit_diagonal(joined):
    comparisons = published.williams_comparisons(joined, "two_sided", SOME_METRICS)
    order = ["BertScore P Art", "FactCC", "Dep Entail"]
    matrix = published.pairwise_matrix(comparisons, "r23", order, diagonal=1.0)
    assert list(matrix.index) == list(matrix.columns) == order
    np.testing.assert_allclose(matrix.to_numpy(), matrix.to_numpy().T)
    assert (np.diag(matrix) == 1.0).all()
    expected = comparisons.set_index(["metric_a", "metric_b"]).loc[("FactCC", "BertScore P Art"), "r23"]
    assert matrix.loc["BertScore P Art", "FactCC"] == expected
    with pytest.raises(DataError, match="no comparison"):
        published.pairwise_matrix(comparisons, "r23", [*order, "QAGS"], diagonal=1.0)


def test_ablation_is_correlation_with_factuality_minus_with_flipped(joined):
    flips = ["Flip_Semantic_Frame_Errors", "Flip_EntE"]
    ablation = published.category_ablation(joined, ["all"], "frank", ["FactCC"], flips)
    assert ablation["category"].tolist() == ["Semantic_Frame_Errors", "EntE"]
    assert (ablation["n"] == 2246).all()
    row = ablation.set_index("category").loc["Semantic_Frame_Errors"]
    metric = demeaned(joined, "FactCC")
    human = stats.pearsonr(metric, demeaned(joined, "human_score")).statistic
    flipped = stats.pearsonr(metric, demeaned(joined, "Flip_Semantic_Frame_Errors")).statistic
    assert row["pearson_influence"] == pytest.approx(human - flipped, abs=1e-10)
    spearman = stats.spearmanr(metric, demeaned(joined, "human_score")).statistic
    spearman_flipped = stats.spearmanr(metric, demeaned(joined, "Flip_Semantic_Frame_Errors")).statistic
    assert row["spearman_influence"] == pytest.approx(spearman - spearman_flipped, abs=1e-10)
    with pytest.raises(DataError, match="unknown ablation columns"):
        published.category_ablation(joined, ["all"], "frank", ["FactCC"], ["Flip_Nothing"])


def test_table_has_frank_layout_and_marks_significance(correlations):
    table = frank_layout(correlations, ["all", "cnndm", "xsum"])
    assert table.shape == (15, 7)
    assert list(table.columns.get_level_values(0).unique()) == ["Metric", "All data", "CNN/DM", "XSum"]
    rows = table.set_index(("Metric", ""))
    assert rows.loc["FactCC", ("All data", "Pearson")] == "0.20*"
    assert not rows.loc["FEQA", ("All data", "Pearson")].endswith("*")  # p = 0.83
    assert "variant \\texttt{ranked}" in captions.frank_baselines("ranked")


def test_unknown_subset_or_split_is_a_data_error(joined):
    with pytest.raises(DataError, match="unknown FRANK subset"):
        published.select_subset(joined, "bbc")
    with pytest.raises(DataError, match="unknown FRANK split"):
        published.select_split(joined, "valid")
    assert len(published.select_split(joined, "test")) == 1575


def test_commands_end_to_end(tmp_path, labels, scores):
    benchmark, score_table = tmp_path / "frank.parquet", tmp_path / "scores.parquet"
    labels.to_parquet(benchmark)
    scores.to_parquet(score_table)
    inputs = ["--benchmark", str(benchmark), "--scores", str(score_table), "--metrics", *SOME_METRICS]
    out = tmp_path / "out"
    commands = [
        [
            "frank-correlations",
            *inputs,
            "--subsets",
            "all",
            "cnndm",
            "xsum",
            "--variant",
            "frank",
            "--resamples",
            "100",
            "--confidence",
            "0.95",
            "--seed",
            "2022",
            "--out",
            f"{out}/correlations.csv",
            "--out-test",
            f"{out}/correlations_test.csv",
        ],
        [
            "frank-williams",
            *inputs,
            "--variant",
            "frank_one_sided",
            "--out",
            f"{out}/williams.csv",
            "--out-matrix",
            f"{out}/metric_matrix.csv",
        ],
        [
            "frank-ablation",
            *inputs,
            "--subsets",
            "all",
            "--variant",
            "frank",
            "--out",
            f"{out}/ablation.csv",
            "--flips",
            "Flip_Semantic_Frame_Errors",
            "Flip_Discourse_Errors",
            "Flip_Content_Verifiability_Errors",
        ],
        [
            "frank-summary",
            "--correlations",
            f"{out}/correlations.csv",
            "--williams",
            f"{out}/williams.csv",
            "--out",
            f"{out}/metrics.json",
        ],
    ]
    paper_commands = [
        ["frank-williams-figure", "--williams", f"{out}/williams.csv", "--correlations", f"{out}/correlations.csv",
         "--out", f"{out}/williams.png", "--out-matrix", f"{out}/matrix.png"],
        ["frank-ablation-figure", "--ablation", f"{out}/ablation.csv", "--correlations", f"{out}/correlations.csv",
         "--out", f"{out}/ablation.png"],
        ["frank-table", "--correlations", f"{out}/correlations.csv", "--subsets", "all", "cnndm", "xsum",
         "--out-md", f"{out}/t.md", "--out-tex", f"{out}/t.tex"],
    ]  # fmt: skip
    for command in commands:
        assert main(["metaeval", *command]) == 0, command
    for command in paper_commands:
        assert main(["paper", *command]) == 0, command
    correlations = pd.read_csv(out / "correlations.csv")
    assert list(correlations.columns) == [*published.CORRELATION_COLUMNS, *published.CI_COLUMNS]
    assert correlations["metric"].tolist()[:3] == SOME_METRICS and len(correlations) == 9
    test_split = pd.read_csv(out / "correlations_test.csv")
    assert test_split.set_index(["subset", "metric"]).loc[("all", "FactCC"), "n"] == 1575
    assert pd.read_csv(out / "metric_matrix.csv", index_col="metric").shape == (3, 3)
    summary = json.loads((out / "metrics.json").read_text())
    assert summary["best_pearson_metric"] == "BertScore P Art" and summary["williams_variant"] == "frank_one_sided"
    assert summary["dropped_nan_all"] == {"Dep Entail": 83}
    assert "\\multicolumn{2}" in (out / "t.tex").read_text()
    for png in ("williams.png", "matrix.png", "ablation.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
