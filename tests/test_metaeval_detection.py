"""ROC AUC, balanced accuracy and macro-F1 under named threshold policies, checked against sklearn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from factlab.metaeval import (
    StatisticsError,
    balanced_accuracy,
    evaluate_at_threshold,
    fixed05,
    macro_f1,
    oracle,
    roc_auc,
    threshold_policy_result,
    tune_threshold,
    val_tuned,
)


@pytest.fixture(scope="module")
def split_scores() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(13)

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        labels = (rng.random(n) < 0.35).astype(int)  # imbalanced, like most benchmarks
        scores = np.round(1 / (1 + np.exp(-(1.5 * labels - 0.4 + rng.normal(size=n)))), 2)  # rounded: ties
        return labels, scores

    val_y, val_s = draw(150)
    test_y, test_s = draw(200)
    return {"val_y": val_y, "val_s": val_s, "test_y": test_y, "test_s": test_s}


def test_roc_auc_matches_sklearn_with_ties(split_scores):
    y, s = split_scores["test_y"], split_scores["test_s"]
    assert roc_auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert roc_auc([0, 0, 1, 1], [0.1, 0.5, 0.5, 0.9]) == pytest.approx(0.875)  # tie counts 1/2: (1 + 1 + 1 + 0.5) / 4


def test_balanced_accuracy_and_macro_f1_match_sklearn(split_scores):
    y, s = split_scores["test_y"], split_scores["test_s"]
    for threshold in (0.2, 0.5, 0.71, 2.0):  # 2.0: nothing predicted consistent
        predicted = (s >= threshold).astype(int)
        assert balanced_accuracy(y, predicted) == pytest.approx(balanced_accuracy_score(y, predicted))
        assert macro_f1(y, predicted) == pytest.approx(f1_score(y, predicted, average="macro", zero_division=0))


def test_fixed05_counts_a_score_of_exactly_half_as_consistent():
    result = fixed05([1, 0, 1, 0], [0.5, 0.49, 0.8, 0.2])
    assert result.policy == "fixed05" and result.threshold == 0.5
    assert result.balanced_accuracy == 1.0 and result.macro_f1 == 1.0 and result.n == 4


def test_tuned_threshold_is_the_best_observed_score(split_scores):
    y, s = split_scores["val_y"], split_scores["val_s"]
    threshold = tune_threshold(y, s)
    accuracies = {t: balanced_accuracy_score(y, (s >= t).astype(int)) for t in np.unique(s)}
    best = max(accuracies.values())
    assert accuracies[threshold] == pytest.approx(best)
    assert threshold == min(t for t, acc in accuracies.items() if np.isclose(acc, best))  # ties -> lowest


def test_val_tuned_freezes_the_validation_threshold(split_scores):
    d = split_scores
    result = val_tuned(d["val_y"], d["val_s"], d["test_y"], d["test_s"])
    frozen = tune_threshold(d["val_y"], d["val_s"])
    assert result.policy == "val_tuned" and result.threshold == frozen and result.n == 200
    assert result.balanced_accuracy == pytest.approx(balanced_accuracy_score(d["test_y"], d["test_s"] >= frozen))
    assert result == threshold_policy_result("val_tuned", d["test_y"], d["test_s"], val_true=d["val_y"], val_score=d["val_s"])


def test_oracle_is_labelled_and_never_worse_than_other_policies(split_scores):
    d = split_scores
    best = oracle(d["test_y"], d["test_s"])
    assert best.policy == "oracle"
    assert best.threshold == tune_threshold(d["test_y"], d["test_s"])
    for other in (fixed05(d["test_y"], d["test_s"]), val_tuned(d["val_y"], d["val_s"], d["test_y"], d["test_s"])):
        assert best.balanced_accuracy >= other.balanced_accuracy
    assert threshold_policy_result("oracle", d["test_y"], d["test_s"]) == best


def test_detection_input_errors(split_scores):
    d = split_scores
    with pytest.raises(StatisticsError, match="only one class"):
        roc_auc([1, 1, 1], [0.2, 0.5, 0.9])
    with pytest.raises(StatisticsError, match="only one class"):
        fixed05([0, 0, 0], [0.2, 0.5, 0.9])
    with pytest.raises(StatisticsError, match="only 0 and 1"):
        roc_auc([0, 1, 2], [0.2, 0.5, 0.9])
    with pytest.raises(StatisticsError, match="NaN"):
        roc_auc([0, 1, 1], [0.2, np.nan, 0.9])
    with pytest.raises(StatisticsError, match="NaN"):
        roc_auc([0, np.nan, 1], [0.2, 0.4, 0.9])
    with pytest.raises(StatisticsError, match="length mismatch"):
        oracle([0, 1, 1], [0.2, 0.9])
    with pytest.raises(StatisticsError, match="needs val_true"):
        threshold_policy_result("val_tuned", d["test_y"], d["test_s"])
    with pytest.raises(StatisticsError, match="does not use validation"):
        threshold_policy_result("fixed05", d["test_y"], d["test_s"], val_true=d["val_y"], val_score=d["val_s"])
    with pytest.raises(StatisticsError, match="unknown threshold policy"):
        threshold_policy_result("best", d["test_y"], d["test_s"])  # type: ignore[arg-type]
    with pytest.raises(StatisticsError, match="unknown threshold policy"):
        evaluate_at_threshold(d["test_y"], d["test_s"], 0.5, "tuned")  # type: ignore[arg-type]
