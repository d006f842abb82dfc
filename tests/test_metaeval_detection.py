"""ROC AUC, balanced accuracy and macro-F1 under named threshold policies: values worked by hand,
the exact AUC (pair counting), and sklearn's roc_auc_score as an independent implementation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

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


def _exact_auc(labels: np.ndarray, scores: np.ndarray) -> Fraction:
    """P(score of a random positive > that of a random negative) + ½·P(tie), by counting all pairs."""
    positives, negatives = scores[labels == 1], scores[labels == 0]
    wins = int((positives[:, None] > negatives[None, :]).sum())
    ties = int((positives[:, None] == negatives[None, :]).sum())
    return Fraction(2 * wins + ties, 2 * len(positives) * len(negatives))


def test_roc_auc_worked_by_hand():
    # Positives {0.5, 0.9}, negatives {0.1, 0.5}: pairs (.5>.1) 1, (.5=.5) ½, (.9>.1) 1, (.9>.5) 1 -> 3.5 / 4.
    assert roc_auc([0, 0, 1, 1], [0.1, 0.5, 0.5, 0.9]) == 0.875
    # A perfectly inverted scorer has AUC 0; constant scores tie every pair: ½.
    assert roc_auc([1, 1, 0], [0.1, 0.2, 0.3]) == 0.0
    assert roc_auc([1, 0, 1, 0], [0.4] * 4) == 0.5


def test_roc_auc_is_the_exact_pair_count_correctly_rounded(split_scores):
    y, s = split_scores["test_y"], split_scores["test_s"]  # 200 items with many ties
    assert roc_auc(y, s) == float(_exact_auc(y, s))  # float(Fraction) rounds correctly: equality, not approx
    # sklearn integrates the ROC curve (trapezoids): the same number up to the last bits.
    assert roc_auc(y, s) == pytest.approx(roc_auc_score(y, s), rel=1e-14)


def test_balanced_accuracy_and_macro_f1_worked_by_hand():
    # Labels 1 1 1 1 0 0, predictions 1 1 0 0 0 0: TP 2, FN 2, TN 2, FP 0.
    # TPR = 2/4, TNR = 2/2 -> balanced accuracy (1/2 + 1) / 2 = 3/4.
    # F1(class 1) = 2·2 / (2·2 + 0 + 2) = 2/3; F1(class 0) = 2·2 / (2·2 + 2 + 0) = 2/3 -> macro 2/3.
    y, predicted = [1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0]
    assert balanced_accuracy(y, predicted) == pytest.approx(3 / 4)
    assert macro_f1(y, predicted) == pytest.approx(2 / 3)
    # Nothing predicted inconsistent: TPR 1, TNR 0 -> 1/2; F1(1) = 2·2 / (4 + 1) = 4/5, F1(0) = 0 -> 2/5.
    assert balanced_accuracy([1, 1, 0], [1, 1, 1]) == pytest.approx(1 / 2)
    assert macro_f1([1, 1, 0], [1, 1, 1]) == pytest.approx(2 / 5)


def test_tuned_threshold_worked_by_hand():
    # Scores .1 .2 .3 .4 .5 .6 with labels 0 0 1 0 1 1 (3 of each). Predict 1 iff score >= t:
    #   t = .1: TPR 3/3, TNR 0/3 -> 1/2      t = .4: TPR 2/3, TNR 2/3 -> 2/3
    #   t = .2: TPR 3/3, TNR 1/3 -> 2/3      t = .5: TPR 2/3, TNR 3/3 -> 5/6
    #   t = .3: TPR 3/3, TNR 2/3 -> 5/6      t = .6: TPR 1/3, TNR 3/3 -> 2/3
    # .3 and .5 tie at 5/6; ties go to the lowest threshold.
    val_y, val_s = [0, 0, 1, 0, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert tune_threshold(val_y, val_s) == 0.3
    # Frozen at .3 on test scores .35 .25 .2 .5 (labels 1 0 1 0): predictions 1 0 0 1 -> TPR 1/2, TNR 1/2.
    test_y, test_s = [1, 0, 1, 0], [0.35, 0.25, 0.2, 0.5]
    tuned = val_tuned(val_y, val_s, test_y, test_s)
    assert (tuned.policy, tuned.threshold, tuned.balanced_accuracy, tuned.n) == ("val_tuned", 0.3, 0.5, 4)
    # fixed05 predicts 0 0 0 1: TPR 0, TNR 1/2 -> 1/4. The oracle tries .2 (all 1: 1/2), .25 (1/4), .35 (1/2),
    # .5 (1/4) and keeps the lowest best threshold, .2.
    assert fixed05(test_y, test_s).balanced_accuracy == pytest.approx(1 / 4)
    best = oracle(test_y, test_s)
    assert (best.threshold, best.balanced_accuracy) == (0.2, 0.5)


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
    assert result == evaluate_at_threshold(d["test_y"], d["test_s"], frozen, "val_tuned")
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
    with pytest.raises(StatisticsError, match="only one class"):
        balanced_accuracy([1, 1], [1, 0])
    with pytest.raises(StatisticsError, match="y_pred must hold only 0 and 1"):
        macro_f1([1, 0], [1, 0.5])
    with pytest.raises(StatisticsError, match="length mismatch"):
        balanced_accuracy([1, 0, 1], [1, 0])
    with pytest.raises(StatisticsError, match="needs val_true"):
        threshold_policy_result("val_tuned", d["test_y"], d["test_s"])
    with pytest.raises(StatisticsError, match="does not use validation"):
        threshold_policy_result("fixed05", d["test_y"], d["test_s"], val_true=d["val_y"], val_score=d["val_s"])
    with pytest.raises(StatisticsError, match="unknown threshold policy"):
        threshold_policy_result("best", d["test_y"], d["test_s"])  # type: ignore[arg-type]
    with pytest.raises(StatisticsError, match="unknown threshold policy"):
        evaluate_at_threshold(d["test_y"], d["test_s"], 0.5, "tuned")  # type: ignore[arg-type]
