"""A checker's decisions chosen on a user's own labelled pairs: the threshold, its expected balanced accuracy, and the
band of scores where neither verdict is trustworthy.

- threshold: the score maximising balanced accuracy on the sample (factlab.metaeval.detection.tune_threshold), what
  the checker then applies;
- expected balanced accuracy: stratified k-fold cross-validation, each fold judged at the threshold tuned on the
  others, so the number is not read off the examples that chose it; its interval is a percentile bootstrap of the
  pooled out-of-fold verdicts (factlab.metaeval.bootstrap);
- uncertain band [low, high): a score at or above `high` is called consistent, below `low` inconsistent, in between
  `uncertain`; `high` is the lowest score at or above the threshold from which the sample's outputs are consistent
  with at least the target precision, `low` the highest score at or below it under which they are inconsistent with
  at least that precision. Where no score reaches the precision on one side, that side's verdict is never given
  (high = 1 or low = 0, inclusive), and the coverage (the share given a verdict) says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

MIN_PER_CLASS = 50  # fewer labelled examples of either class: the threshold and band are noisy (a warning)


@dataclass(frozen=True)
class Calibration:
    threshold: float
    band_low: float
    band_high: float
    cv_balanced_accuracy: float
    cv_low: float
    cv_high: float
    coverage: float  # share of the sample outside the uncertain band
    precision_consistent: float | None  # of the sample's consistent verdicts (None: none given)
    precision_inconsistent: float | None
    n: int
    n_consistent: int
    n_inconsistent: int

    def as_json(self) -> dict[str, Any]:
        """Rounded to 6 decimals, but for the band: a bound just above 1 means "never consistent"."""
        exact = ("band_low", "band_high", "threshold")
        return {
            key: (round(value, 6) if isinstance(value, float) and key not in exact else value)
            for key, value in self.__dict__.items()
        }


def uncertain_band(labels: ArrayLike, scores: ArrayLike, threshold: float, precision: float) -> tuple[float, float]:
    """[low, high) around `threshold` outside which each verdict reaches `precision` on the sample (module doc)."""
    y, s = np.asarray(labels, dtype=np.int64), np.asarray(scores, dtype=np.float64)
    order = np.argsort(s, kind="stable")
    y, s = y[order], s[order]
    candidates = np.unique(s)
    high = 1.0
    for cut in candidates[candidates >= threshold]:  # ascending: the lowest cut that reaches the precision
        above = y[s >= cut]
        if above.mean() >= precision:
            high = float(cut)
            break
    else:
        high = float(np.nextafter(1.0, 2.0))  # no score reaches it: never consistent
    low = 0.0
    for cut in candidates[candidates <= threshold][::-1]:  # descending: the highest cut that reaches it
        below = y[s < cut]
        if len(below) and (1 - below.mean()) >= precision:
            low = float(cut)
            break
    return low, high


def verdicts(scores: ArrayLike, threshold: float, band: tuple[float, float] | None) -> np.ndarray:
    """1 consistent, 0 inconsistent, -1 uncertain, per score (no band: every score gets a verdict at `threshold`)."""
    s = np.asarray(scores, dtype=np.float64)
    out = (s >= threshold).astype(np.int64)
    if band is not None:
        low, high = band
        out = np.where(s >= high, 1, np.where(s < low, 0, -1))
    return out


def stratified_folds(labels: np.ndarray, folds: int, rng: np.random.Generator) -> np.ndarray:
    """A fold number per example: each class shuffled and dealt round-robin, so every fold holds both classes."""
    fold = np.empty(len(labels), dtype=np.int64)
    for value in (0, 1):
        members = rng.permutation(np.flatnonzero(labels == value))
        fold[members] = np.arange(len(members)) % folds
    return fold


def calibrate(
    labels: ArrayLike,
    scores: ArrayLike,
    *,
    precision: float,
    folds: int,
    seed: int,
    confidence: float = 0.95,
    resamples: int = 1000,
) -> Calibration:
    """The threshold, its cross-validated balanced accuracy with a bootstrap interval, and the uncertain band."""
    from factlab.metaeval.bootstrap import bootstrap_ci
    from factlab.metaeval.detection import balanced_accuracy, tune_threshold
    from factlab.metaeval.errors import StatisticsError

    y, s = np.asarray(labels, dtype=np.int64), np.asarray(scores, dtype=np.float64)
    counts = int((y == 1).sum()), int((y == 0).sum())
    if min(counts) < folds:
        raise StatisticsError(
            f"calibration needs at least {folds} examples of each class, got {counts[0]} consistent and {counts[1]} inconsistent"
        )
    rng = np.random.default_rng(seed)
    fold = stratified_folds(y, folds, rng)
    held_out = np.empty(len(y), dtype=np.int64)
    for k in range(folds):
        train = fold != k
        held_out[~train] = (s[~train] >= tune_threshold(y[train], s[train])).astype(np.int64)
    ci = bootstrap_ci(balanced_accuracy, y, held_out, n_resamples=resamples, confidence=confidence, rng=rng)
    threshold = tune_threshold(y, s)
    band = uncertain_band(y, s, threshold, precision)
    given = verdicts(s, threshold, band)
    consistent, inconsistent = given == 1, given == 0
    return Calibration(
        threshold=threshold,
        band_low=band[0],
        band_high=band[1],
        cv_balanced_accuracy=ci.estimate,
        cv_low=ci.low,
        cv_high=ci.high,
        coverage=float((given >= 0).mean()),
        precision_consistent=float(y[consistent].mean()) if consistent.any() else None,
        precision_inconsistent=float(1 - y[inconsistent].mean()) if inconsistent.any() else None,
        n=len(y),
        n_consistent=counts[0],
        n_inconsistent=counts[1],
    )


def kind_correction_bar(rewrite_supports: ArrayLike, consistent_outputs: int, floor: float, max_share: float) -> float:
    """The lowest bar, at least `floor`, at which at most `max_share` of a kind's `consistent_outputs` (consistent
    validation outputs) are rewritten; `rewrite_supports` holds, per output whose correction has an edit that beats its
    sentence, the highest such edit's support (factlab.checker.api.Checker.rewrite_supports): the output is rewritten
    at bar b iff that support >= b."""
    values = np.sort(np.asarray(rewrite_supports, dtype=np.float64))[::-1]
    if consistent_outputs < len(values):
        raise ValueError(f"{len(values)} rewritable outputs among {consistent_outputs} consistent ones")
    allowed = int(np.floor(max_share * consistent_outputs + 1e-9))
    if (values >= floor).sum() <= allowed:
        return float(floor)
    return float(np.nextafter(values[allowed], np.inf))  # just above the (allowed + 1)-th highest: `allowed` remain


def correction_bar(kinds: dict[str, tuple[ArrayLike, int]], floor: float, max_share: float) -> tuple[float, dict[str, float]]:
    """The bar every kind of validation data meets (`kind_correction_bar` of each kind's (rewrite supports, consistent
    outputs), their highest), and each kind's own: how far the right bar moves between kinds of text."""
    each = {name: kind_correction_bar(values, n, floor, max_share) for name, (values, n) in kinds.items() if n}
    return (max(each.values()) if each else float(floor)), each
