"""How often a checker's decisions go wrong for a user, from its per-output decisions and the human labels.

Per set of outputs: how many consistent outputs it flags (verdict inconsistent), how many inconsistent ones it
catches, the share it gives a verdict at all (coverage: not `uncertain`, and scored), how many consistent outputs
it marks a span in, how many consistent outputs it would offer a correction for (the checker offers one for an
output it finds inconsistent and marks spans in: factlab.checker.api.failing), and how many of them the correction
then rewrites (an edit the checker accepts changes the text). Each share's denominator is every
output of its class, those without a verdict included, so that an uncertain band cannot make the alarms look rarer
than a user meets them; each comes with a Wilson score interval (`wilson_interval`), which stays informative at a
handful of outputs and at 0 or n.

And what calibrating on a user's own sample gains (`calibration_gain`): the test split's balanced accuracy at the
checker's global threshold against that at thresholds tuned on draws of a benchmark's validation examples, as
`factlab calibrate` tunes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from factlab.metaeval.correction import wilson_interval
from factlab.metaeval.errors import StatisticsError

# factlab.checker.calibration.verdicts' codes; any other code (uncertain, unscored) is no verdict
CONSISTENT_VERDICT, INCONSISTENT_VERDICT = 1, 0

# Each share, the column counting its outputs, and the class of outputs it is a share of (1 consistent,
# 0 inconsistent, None every output).
SHARES: dict[str, tuple[str, int | None]] = {
    "consistent_flagged": ("n_consistent_flagged", 1),  # the verdict inconsistent
    "inconsistent_caught": ("n_inconsistent_caught", 0),  # the verdict inconsistent
    "coverage": ("n_with_verdict", None),  # a verdict at all
    "consistent_with_span": ("n_consistent_with_span", 1),  # at least one span
    "consistent_correction_offered": ("n_consistent_correction_offered", 1),  # the verdict inconsistent and a span
    "consistent_rewritten": ("n_consistent_rewritten", 1),  # offered a correction that changes the text
}
DECISION_COLUMNS = (
    "n",
    "n_consistent",
    "n_inconsistent",
    *(column for name, (count, _) in SHARES.items() for column in (count, name, f"{name}_ci_low", f"{name}_ci_high")),
)


def share_columns(name: str, count: str, successes: int, n: int, confidence: float) -> dict[str, Any]:
    """The count `count`, the share `name` (NaN for n = 0) and its Wilson interval at `confidence`."""
    low, high = wilson_interval(successes, n, confidence)
    return {count: successes, name: successes / n if n else np.nan, f"{name}_ci_low": low, f"{name}_ci_high": high}


def decision_row(
    labels: ArrayLike, verdicts: ArrayLike, spans: ArrayLike, rewritten: ArrayLike, confidence: float = 0.95
) -> dict[str, Any]:
    """`DECISION_COLUMNS` of one set of outputs: `labels` 1 consistent / 0 inconsistent (humans), `verdicts` the
    checker's codes (1 consistent, 0 inconsistent, anything else no verdict), `spans` how many spans it marks in each
    output, `rewritten` whether its correction changes the output (only an output offered one can be rewritten)."""
    y = np.asarray(labels, dtype=np.int64)
    given = np.asarray(verdicts, dtype=np.int64)
    marked = np.asarray(spans, dtype=np.int64) > 0
    changed = np.asarray(rewritten, dtype=bool)
    if not len(y) == len(given) == len(marked) == len(changed):
        raise StatisticsError(
            f"labels, verdicts, spans and rewritten differ in length ({len(y)}, {len(given)}, {len(marked)}, {len(changed)})"
        )
    if not np.isin(y, (0, 1)).all():
        raise StatisticsError("labels must be 0 (inconsistent) or 1 (consistent)")
    flagged = given == INCONSISTENT_VERDICT
    if (changed & ~(flagged & marked)).any():
        raise StatisticsError("an output is rewritten that was not offered a correction (inconsistent, with a span)")
    counted = {
        "consistent_flagged": flagged,
        "inconsistent_caught": flagged,
        "coverage": np.isin(given, (CONSISTENT_VERDICT, INCONSISTENT_VERDICT)),
        "consistent_with_span": marked,
        "consistent_correction_offered": flagged & marked,
        "consistent_rewritten": changed,
    }
    row: dict[str, Any] = {"n": len(y), "n_consistent": int((y == 1).sum()), "n_inconsistent": int((y == 0).sum())}
    for name, (count, of_class) in SHARES.items():
        members = np.ones(len(y), dtype=bool) if of_class is None else y == of_class
        row.update(share_columns(name, count, int((counted[name] & members).sum()), int(members.sum()), confidence))
    return row


# Calibration on a user's sample, measured: what `factlab calibrate` on `sample` labelled validation examples of a
# benchmark gains over the checker's global threshold, judged on the benchmark's test split.
CALIBRATION_GAIN_COLUMNS = (
    "n_validation",
    "n_test",
    "n_test_consistent",
    "n_test_inconsistent",
    "calibration_examples",
    "draws",
    "threshold_global",
    "balanced_accuracy_global",
    "threshold_calibrated_median",
    "balanced_accuracy_calibrated",
    "balanced_accuracy_calibrated_low",
    "balanced_accuracy_calibrated_high",
    "gain",
    "gain_low",
    "gain_high",
    "share_of_draws_better",
    "threshold_validation",
    "balanced_accuracy_validation",
)


def stratified_draw(labels: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """`size` indices of `labels` drawn without replacement, each class in proportion to its share (rounded; at
    least one of each class, so that a threshold can be tuned on the draw)."""
    consistent, inconsistent = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    n_consistent = int(round(size * len(consistent) / len(labels)))
    n_consistent = min(max(n_consistent, 1), size - 1, len(consistent))
    n_inconsistent = min(size - n_consistent, len(inconsistent))
    return np.concatenate(
        [rng.choice(consistent, n_consistent, replace=False), rng.choice(inconsistent, n_inconsistent, replace=False)]
    )


def calibration_gain(
    validation_labels: ArrayLike,
    validation_scores: ArrayLike,
    test_labels: ArrayLike,
    test_scores: ArrayLike,
    global_threshold: float,
    *,
    sample: int,
    draws: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """`CALIBRATION_GAIN_COLUMNS` of one benchmark: the test split's balanced accuracy at `global_threshold`, and at
    the threshold tuned (factlab.metaeval.detection.tune_threshold, as `factlab calibrate` tunes it) on each of
    `draws` stratified draws of `sample` validation examples: its mean and percentile interval over the draws, the
    mean gain over the global threshold with its interval, the share of draws that beat it; and, as the ceiling of
    calibrating on this benchmark, the threshold tuned on its whole validation split. A validation split of at most
    `sample` examples is one draw of all of them."""
    from factlab.metaeval.bootstrap import percentile_interval
    from factlab.metaeval.detection import balanced_accuracies, labels_and_scores, tune_threshold

    y_val, s_val = labels_and_scores(validation_labels, validation_scores)
    y_test, s_test = labels_and_scores(test_labels, test_scores)
    if sample < 2 or draws < 1:
        raise StatisticsError(f"calibration needs a sample of at least 2 and at least 1 draw, got {sample} and {draws}")
    whole = len(y_val) <= sample
    validation_threshold = tune_threshold(y_val, s_val)
    thresholds = np.array(
        [validation_threshold]
        if whole
        else [tune_threshold(y_val[d], s_val[d]) for d in (stratified_draw(y_val, sample, rng) for _ in range(draws))]
    )
    calibrated = balanced_accuracies(y_test, s_test, thresholds)
    global_accuracy, validation_accuracy = balanced_accuracies(y_test, s_test, np.array([global_threshold, validation_threshold]))
    gains = calibrated - global_accuracy
    low, high = percentile_interval(calibrated, confidence)
    gain_low, gain_high = percentile_interval(gains, confidence)
    return {
        "n_validation": len(y_val),
        "n_test": len(y_test),
        "n_test_consistent": int((y_test == 1).sum()),
        "n_test_inconsistent": int((y_test == 0).sum()),
        "calibration_examples": len(y_val) if whole else sample,
        "draws": len(thresholds),
        "threshold_global": float(global_threshold),
        "balanced_accuracy_global": float(global_accuracy),
        "threshold_calibrated_median": float(np.median(thresholds)),
        "balanced_accuracy_calibrated": float(calibrated.mean()),
        "balanced_accuracy_calibrated_low": low,
        "balanced_accuracy_calibrated_high": high,
        "gain": float(gains.mean()),
        "gain_low": gain_low,
        "gain_high": gain_high,
        "share_of_draws_better": float((gains > 0).mean()),
        "threshold_validation": float(validation_threshold),
        "balanced_accuracy_validation": float(validation_accuracy),
    }
