"""ScreenEval analyses on SCALE's released scores, checked against scipy/sklearn on the same rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from factlab.cli import main
from factlab.data.registry import get_spec
from factlab.metaeval.analyses.published.screeneval_command import (
    chunk_size_table,
    detection_table,
    item_labels,
    published_comparison,
    reliability_table,
    stratified_split,
)

ECE_BINS = 15
VAL_FRACTION = 0.3
SEED = 2022


@pytest.fixture(scope="module")
def frame(raw) -> pd.DataFrame:
    return get_spec("screeneval_published").build(raw).frame


@pytest.fixture(scope="module")
def split(frame) -> pd.DataFrame:
    return stratified_split(item_labels(frame), VAL_FRACTION, SEED)


@pytest.fixture(scope="module")
def detection(frame, split) -> pd.DataFrame:
    return detection_table(frame, split, ece_bins=ECE_BINS)


def metric_rows(frame: pd.DataFrame, experiment: str, metric: str) -> pd.DataFrame:
    rows = frame[(frame["experiment"] == experiment) & (frame["metric"] == metric)]
    return rows.sort_values("example_index")


def test_items_and_split_are_stratified_and_reproducible(frame, split):
    items = item_labels(frame)
    # Two item sets: the 614 ScreenEval sentences (458 consistent) and the early 226-example files.
    assert items.groupby("item_set").size().to_dict() == {"n226": 226, "n614": 614}
    assert int(items.loc[items["item_set"] == "n614", "label"].sum()) == 458
    for (item_set, label), group in split.groupby(["item_set", "label"]):
        assert (group["split"] == "val").sum() == round(VAL_FRACTION * len(group)), (item_set, label)
    assert split.equals(stratified_split(items, VAL_FRACTION, SEED))
    assert not split.equals(stratified_split(items, VAL_FRACTION, SEED + 1))
    assert len(split) == len(items) and set(split["split"]) == {"val", "test"}


def test_one_row_per_metric_with_each_released_file(detection):
    assert len(detection) == 29 and detection["file"].nunique() == 22
    assert detection.groupby("experiment").size().to_dict() == {"accuracy": 10, "accuracy_226": 10, "chunk_size": 9}
    # rouge_results.json holds 9 metrics (rouge-1/2/l × p/r/f); rouge_1_f comes from its own file.
    rouge = detection[detection["file"] == "rouge_results.json"]
    assert len(rouge) == 8 and "rouge_1_f" not in set(rouge["metric"])


def test_correlations_auc_and_ece_match_references_on_all_items(frame, detection):
    row = detection.set_index(["experiment", "metric"]).loc[("accuracy", "scale_xl")]
    rows = metric_rows(frame, "accuracy", "scale_xl")
    labels, scores = rows["label"].to_numpy(), rows["score"].to_numpy()
    assert row["n"] == 614
    assert row["roc_auc"] == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    assert row["pearson"] == pytest.approx(stats.pearsonr(scores, labels).statistic, abs=1e-12)
    assert row["kendall"] == pytest.approx(stats.kendalltau(scores, labels).statistic, abs=1e-12)
    # ECE by hand: right-closed bins (e_{k-1}, e_k] of width 1/15, |share consistent − mean score| weighted by size.
    bins = np.digitize(scores, np.linspace(0, 1, ECE_BINS + 1)[1:-1], right=True)
    expected = sum(
        np.sum(bins == k) / len(scores) * abs(labels[bins == k].mean() - scores[bins == k].mean()) for k in np.unique(bins)
    )
    assert row[f"ece_equal_width_{ECE_BINS}"] == pytest.approx(expected, abs=1e-12)


def test_ece_is_nan_with_a_note_for_scores_outside_unit_interval(detection):
    outside = detection[(detection["score_min"] < 0) | (detection["score_max"] > 1)]
    assert set(outside["metric"]) == {"qa_fact", "bert_score_f", "bert_score_p", "bert_score_r"}
    assert outside[f"ece_equal_width_{ECE_BINS}"].isna().all()
    assert outside["ece_note"].str.contains("outside").all()
    inside = detection.drop(outside.index)
    assert inside[f"ece_equal_width_{ECE_BINS}"].notna().all() and (inside["ece_note"] == "").all()
    assert detection[f"ece_scale_minmax_{ECE_BINS}"].between(0, 1).all()


def best_threshold(labels: np.ndarray, scores: np.ndarray) -> float:
    """Brute force: the lowest observed score maximising sklearn's balanced accuracy of score >= t."""
    candidates = np.unique(scores)
    accuracies = [balanced_accuracy_score(labels, scores >= t) for t in candidates]
    return float(candidates[int(np.argmax(accuracies))])


@pytest.mark.parametrize(("experiment", "metric"), [("accuracy", "scale_large"), ("accuracy_226", "rouge_l_f")])
def test_balanced_accuracy_policies_on_the_test_split(frame, split, detection, experiment, metric):
    rows = metric_rows(frame, experiment, metric).merge(split, on=["example_index", "label"])
    rows = rows[rows["item_set"] == f"n{len(metric_rows(frame, experiment, metric))}"]
    val, test = rows[rows["split"] == "val"], rows[rows["split"] == "test"]
    labels, scores = test["label"].to_numpy(), test["score"].to_numpy()
    row = detection.set_index(["experiment", "metric"]).loc[(experiment, metric)]
    assert (row["n_val"], row["n_test"]) == (len(val), len(test))
    assert row["bacc_fixed05"] == pytest.approx(balanced_accuracy_score(labels, scores >= 0.5))
    tuned = best_threshold(val["label"].to_numpy(), val["score"].to_numpy())
    assert row["threshold_val_tuned"] == tuned
    assert row["bacc_val_tuned"] == pytest.approx(balanced_accuracy_score(labels, scores >= tuned))
    assert row["bacc_oracle"] == pytest.approx(balanced_accuracy_score(labels, scores >= best_threshold(labels, scores)))
    assert row["bacc_oracle"] >= row["bacc_val_tuned"] - 1e-12
    assert "test" in row["computed_on"] and "all n items" in row["computed_on"]


def test_chunk_size_table(frame, detection):
    table = chunk_size_table(detection)
    assert table["chunk_size"].tolist() == [100, 300, 500, 750, 1000, 2000, 3000]
    rows = metric_rows(frame, "chunk_size", "scale_large_750")
    row = table.set_index("chunk_size").loc[750]
    assert row["roc_auc"] == pytest.approx(roc_auc_score(rows["label"], rows["score"]), abs=1e-12)
    assert row["runtime_s"] == rows["runtime_s"].iloc[0]


# SCALE-large's ROC AUC per chunk size, as printed in asappresearch/scale-score
# experiments/chunk_size/chunk_size_graph.ipynb (typed here from the notebook, not read from factlab)
NOTEBOOK_AUC = {100: 0.6662747732616727, 750: 0.7545347665435, 3000: 0.7603571828462657}


def test_chunk_sizes_reproduce_the_scale_notebook(detection):
    comparison = published_comparison(chunk_size_table(detection)).set_index("chunk_size")
    assert len(comparison) == 7 and comparison["difference"].abs().max() < 1e-9
    for size, printed in NOTEBOOK_AUC.items():
        assert comparison.loc[size, "roc_auc"] == pytest.approx(printed, abs=1e-12)
        assert comparison.loc[size, "published_roc_auc"] == printed


def test_reliability_bins_cover_every_item(frame):
    table = reliability_table(frame, n_bins=10)
    assert table.groupby("metric")["count"].sum().eq(614).all()
    assert table.groupby("metric").size().eq(10).all()
    rows = metric_rows(frame, "accuracy", "scale_large")
    top = table[(table["metric"] == "scale_large") & (table["bin"] == 9)].iloc[0]
    in_top = rows[rows["score"] > 0.9]
    assert top["count"] == len(in_top) and top["consistent_share"] == pytest.approx(in_top["label"].mean())


def test_cli_writes_every_output(frame, tmp_path):
    data = tmp_path / "screeneval_published.parquet"
    frame.to_parquet(data)
    out = tmp_path / "out"
    args = ["metaeval", "screeneval", "--data", str(data), "--out-dir", str(out), "--ece-bins", "15"]
    args += [
        "--reliability-bins",
        "10",
        "--val-fraction",
        "0.3",
        "--seed",
        "2022",
        "--policies",
        "fixed05",
        "val_tuned",
        "oracle",
    ]
    assert main(args) == 0
    names = {"detection.csv", "split.csv", "chunk_size.csv", "published_comparison.csv", "reliability.csv", "metrics.json"}
    assert names <= {p.name for p in out.iterdir()}
    assert list(pd.read_csv(out / "chunk_size.csv").columns) == ["chunk_size", "roc_auc", "runtime_s"]
    assert pd.read_csv(out / "split.csv").columns.tolist() == ["item_set", "example_index", "label", "split"]
    figure = tmp_path / "chunk.png"
    assert main(["paper", "screeneval-chunk-size-figure", "--table", str(out / "chunk_size.csv"), "--out", str(figure)]) == 0
    assert figure.read_bytes()[:4] == b"\x89PNG"
    figure = tmp_path / "reliability.png"
    table = str(out / "reliability.csv")
    assert main(["paper", "reliability-figure", "--table", table, "--columns", "2", "--out", str(figure)]) == 0
    assert figure.read_bytes()[:4] == b"\x89PNG"


def test_a_val_fraction_that_empties_a_stratum_is_a_one_line_error(frame, tmp_path, capsys):
    data = tmp_path / "screeneval_published.parquet"
    frame.to_parquet(data)
    args = [
        "metaeval",
        "screeneval",
        "--data",
        str(data),
        "--out-dir",
        str(tmp_path / "out"),
        "--ece-bins",
        "15",
        "--reliability-bins",
        "10",
        "--val-fraction",
        "0.001",
        "--seed",
        "2022",
        "--policies",
        "fixed05",
    ]
    assert main(args) == 1  # was an IndexError traceback deep in binary_labels
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "val_fraction 0.001 leaves no validation item" in error
    assert not (tmp_path / "out").exists()
