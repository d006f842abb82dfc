"""factlab's scorers as detectors: checked against scikit-learn and values worked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from factlab.metaeval.scorers import detection_row, labelled_scores, validation_threshold

SCORES = [0.9, 0.8, 0.35, 0.6, 0.2, 0.55, 0.1, 0.7]
LABELS = [1, 1, 1, 0, 0, 1, 0, 0]


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "example_id": [f"e{i}" for i in range(8)],
            "doc_id": [f"d{i // 2}" for i in range(8)],
            "source": [f"s{i // 2}" for i in range(8)],
            "label": LABELS,
            "score": SCORES,
        }
    )


def test_row_matches_sklearn_and_hand_values() -> None:
    row = detection_row("alignscore", "b", frame(), 0.5, {"s0"}, resamples=200, confidence=0.9, seed=1, ece_bins=5)
    assert row["roc_auc"] == pytest.approx(roc_auc_score(LABELS, SCORES))
    predicted = (np.array(SCORES) >= 0.5).astype(int)
    assert row["bacc_fixed05"] == pytest.approx(balanced_accuracy_score(LABELS, predicted))
    # hand: at 0.5, positives 0.9 0.8 0.55 hit and 0.35 misses (TPR 3/4); negatives 0.2 0.1 rejected (TNR 2/4)
    assert row["bacc_fixed05"] == pytest.approx((3 / 4 + 2 / 4) / 2)
    assert row["roc_auc_ci_low"] <= row["roc_auc"] <= row["roc_auc_ci_high"]
    assert row["overlaps_tuning"] is True
    assert row["n"] == 8


def test_validation_threshold_maximises_balanced_accuracy() -> None:
    # hand: t = 0.35 accepts every positive (TPR 1) and rejects 0.2 and 0.1 (TNR 2/4): 0.75; t = 0.8 gives
    # TPR 2/4, TNR 1: also 0.75; every other candidate is lower (0.55: (3/4 + 2/4)/2). Ties go to the lowest.
    assert validation_threshold({"v": frame()}) == pytest.approx(0.35)


def test_unknown_scored_example_is_an_error() -> None:
    data = frame().drop(columns="score")
    scores = pd.DataFrame({"example_id": ["e0", "zz"], "score": [0.1, 0.2]})
    with pytest.raises(Exception, match="'zz' is not in the benchmark"):
        labelled_scores(data, scores)
