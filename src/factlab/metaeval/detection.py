"""Binary detection quality of a consistency scorer: ROC AUC, balanced accuracy and macro-F1.

Conventions: labels are 1 = consistent, 0 = inconsistent; the positive class is 1 (consistent),
and a higher score means "more consistent". An output is predicted consistent iff
``score >= threshold``. Every thresholded number carries the name of its threshold policy:

* ``"fixed05"`` — threshold 0.5, no tuning (QASemConsistency's protocol). Applied to the raw
  score whatever its range (e.g. SummaC-ZS scores lie in [−1, 1]).
* ``"val_tuned"`` — the threshold maximising balanced accuracy on the *validation* scores/labels,
  frozen and applied to the evaluated (test) data.
* ``"oracle"`` — the threshold maximising balanced accuracy on the evaluated data itself
  (SummaC's notebook, SCALE's F1). Optimistic; tables must label it "oracle".

Threshold tuning considers every distinct observed score as a threshold (each gives a distinct
prediction) and breaks ties towards the lowest threshold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from sklearn.metrics import balanced_accuracy_score, f1_score

from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import FloatArray, as_float_vector, binary_labels, require_no_nan, require_same_length
from factlab.metaeval.variants import THRESHOLD_POLICIES, ThresholdPolicy

if TYPE_CHECKING:
    import pandas as pd

FIXED_THRESHOLD = 0.5


@dataclass(frozen=True)
class ThresholdResult:
    """Balanced accuracy and macro-F1 at `threshold`, chosen by the named `policy`, on `n` items."""

    policy: ThresholdPolicy
    threshold: float
    balanced_accuracy: float
    macro_f1: float
    n: int


def labels_and_scores(y_true: ArrayLike, y_score: ArrayLike) -> tuple[NDArray[np.int64], FloatArray]:
    """Validated (labels, scores): both classes present, no NaN, same length."""
    labels = binary_labels(y_true)
    scores = as_float_vector(y_score, "y_score")
    require_same_length(y_true=labels, y_score=scores)
    require_no_nan(scores, "y_score")
    return labels, scores


def roc_auc(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """ROC AUC with positive class 1 (consistent): U / (n_pos · n_neg), U = scipy's Mann–Whitney U of the positives.

    Ties count 1/2, as in sklearn.metrics.roc_auc_score. U is a sum of half-integer ranks, so it
    is exact and the AUC is the exact ratio correctly rounded; roc_auc_score integrates the ROC
    curve with the trapezoid rule instead and can differ from it in the last 1–2 bits.
    """
    labels, scores = labels_and_scores(y_true, y_score)
    positives, negatives = scores[labels == 1], scores[labels == 0]
    u = stats.mannwhitneyu(positives, negatives, method="asymptotic").statistic  # the p-value is not used
    return float(u) / (len(positives) * len(negatives))


def _predict(scores: FloatArray, threshold: float) -> NDArray[np.int64]:
    return (scores >= threshold).astype(np.int64)


def balanced_accuracy(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """(TPR + TNR) / 2 for 0/1 predictions (1 = predicted consistent): sklearn's balanced_accuracy_score."""
    labels = binary_labels(y_true)
    predictions = _binary_predictions(y_pred, len(labels))
    return float(balanced_accuracy_score(labels, predictions))


def macro_f1(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Unweighted mean over both classes of F1 = 2TP / (2TP + FP + FN): sklearn's f1_score(average="macro").

    A class never predicted has F1 0 (TP = 0); the denominator is never 0 since both classes occur in y_true.
    """
    labels = binary_labels(y_true)
    predictions = _binary_predictions(y_pred, len(labels))
    return float(f1_score(labels, predictions, labels=[0, 1], average="macro", zero_division=0.0))


def _binary_predictions(y_pred: ArrayLike, n: int) -> NDArray[np.int64]:
    predictions = as_float_vector(y_pred, "y_pred")
    require_same_length(y_true=np.empty(n), y_pred=predictions)
    require_no_nan(predictions, "y_pred")
    if not np.isin(predictions, (0.0, 1.0)).all():
        raise StatisticsError("y_pred must hold only 0 and 1")
    return predictions.astype(np.int64)


def tune_threshold(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """The threshold (a distinct observed score) maximising balanced accuracy; ties → lowest threshold."""
    labels, scores = labels_and_scores(y_true, y_score)
    candidates = np.unique(scores)
    return float(candidates[int(np.argmax(balanced_accuracies(labels, scores, candidates)))])


def balanced_accuracies(labels: NDArray[np.int64], scores: FloatArray, thresholds: FloatArray) -> FloatArray:
    """Balanced accuracy of `score >= t` for each t of `thresholds`, in one pass (validated labels with both classes,
    as labels_and_scores gives them)."""
    positives = np.sort(scores[labels == 1])
    negatives = np.sort(scores[labels == 0])
    # Predicted consistent iff score >= t: positives at or above t are hits, negatives below t are correct rejections.
    tpr = (len(positives) - np.searchsorted(positives, thresholds, side="left")) / len(positives)
    tnr = np.searchsorted(negatives, thresholds, side="left") / len(negatives)
    return (tpr + tnr) / 2


def evaluate_at_threshold(y_true: ArrayLike, y_score: ArrayLike, threshold: float, policy: ThresholdPolicy) -> ThresholdResult:
    """Balanced accuracy and macro-F1 of `score >= threshold`, labelled with the `policy` that chose it."""
    if policy not in THRESHOLD_POLICIES:
        raise StatisticsError(f"unknown threshold policy {policy!r}; choose one of {THRESHOLD_POLICIES}")
    labels, scores = labels_and_scores(y_true, y_score)
    predictions = _predict(scores, threshold)
    return ThresholdResult(
        policy=policy,
        threshold=float(threshold),
        balanced_accuracy=balanced_accuracy(labels, predictions),
        macro_f1=macro_f1(labels, predictions),
        n=len(labels),
    )


def fixed05(y_true: ArrayLike, y_score: ArrayLike) -> ThresholdResult:
    """Policy "fixed05": predict consistent iff score >= 0.5."""
    return evaluate_at_threshold(y_true, y_score, FIXED_THRESHOLD, "fixed05")


def val_tuned(val_true: ArrayLike, val_score: ArrayLike, y_true: ArrayLike, y_score: ArrayLike) -> ThresholdResult:
    """Policy "val_tuned": tune on (val_true, val_score), freeze, evaluate on (y_true, y_score)."""
    return evaluate_at_threshold(y_true, y_score, tune_threshold(val_true, val_score), "val_tuned")


def oracle(y_true: ArrayLike, y_score: ArrayLike) -> ThresholdResult:
    """Policy "oracle": tune on the evaluated data itself (optimistic; reported as "oracle")."""
    return evaluate_at_threshold(y_true, y_score, tune_threshold(y_true, y_score), "oracle")


def threshold_policy_result(
    policy: ThresholdPolicy,
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    val_true: ArrayLike | None = None,
    val_score: ArrayLike | None = None,
) -> ThresholdResult:
    """Apply a policy chosen by name (e.g. `threshold_policy: val_tuned` in params.yaml).

    Validation data is required by "val_tuned" and refused by the other policies, so that a
    configuration cannot silently ignore it.
    """
    has_validation = val_true is not None or val_score is not None
    if policy == "val_tuned":
        if val_true is None or val_score is None:
            raise StatisticsError("policy 'val_tuned' needs val_true and val_score")
        return val_tuned(val_true, val_score, y_true, y_score)
    if has_validation:
        raise StatisticsError(f"policy {policy!r} does not use validation data; pass it only with 'val_tuned'")
    if policy == "fixed05":
        return fixed05(y_true, y_score)
    if policy == "oracle":
        return oracle(y_true, y_score)
    raise StatisticsError(f"unknown threshold policy {policy!r}; choose one of {THRESHOLD_POLICIES}")


def pooled_validation(tuning: Mapping[str, pd.DataFrame]) -> pd.DataFrame | None:
    """The scored validation examples of every tuning benchmark, pooled; None without both labels."""
    import pandas as pd

    frames = [frame.dropna(subset=["score"]) for frame in tuning.values()]
    pooled = pd.concat(frames) if frames else pd.DataFrame()
    if pooled.empty or pooled["label"].nunique() < 2:
        return None
    return pooled


def validation_threshold(tuning: Mapping[str, pd.DataFrame]) -> float | None:
    """The threshold that maximises balanced accuracy on the pooled validation examples (tune_threshold); None without
    both labels."""
    pooled = pooled_validation(tuning)
    if pooled is None:
        return None
    return tune_threshold(pooled["label"].astype(int).to_numpy(), pooled["score"].to_numpy())
