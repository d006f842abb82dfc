"""Calibration of a binary consistency scorer: expected calibration error and reliability diagrams.

Definition used throughout: the score is read as P(consistent), the *confidence* of a bin is the
mean score in it, and its *accuracy* is the observed share of label 1 (consistent) in it. So ECE
measures the calibration of P(y = 1), not of the max-class probability of Guo et al. (2017):

    ECE = Σ_k |B_k| / n · |acc(B_k) − conf(B_k)|

Binning (`binning=`):

* ``"equal_width"`` — K bins of width 1/K on [0, 1], right-closed as in Guo et al. and
  sklearn.calibration.calibration_curve: (e_{k−1}, e_k], the first bin also holds 0.
* ``"equal_mass"`` — K bins holding (as nearly as possible) the same number of items: the scores
  sorted (stable), split into K consecutive runs with numpy.array_split; a bin's bounds are its
  smallest and largest score. Less sensitive than equal width to scores piled up near 0 or 1.
* ``"scale_minmax"`` — SCALE's calibration notebook (Lattimer et al., 2023), reproduced only as a
  named variant: scores are min-max rescaled to [0, 1] first (sklearn MinMaxScaler arithmetic;
  the "confidence" is the rescaled score), bins are left-closed [e_{k−1}, e_k) via
  numpy.digitize, and therefore every item whose rescaled score is 1.0 (the top value, ties
  included) falls outside all bins and is dropped from the sum — while n in the denominator still
  counts it. `n_excluded` reports them. Quirk within the quirk: MinMaxScaler computes x·scale +
  offset, which can round the maximum to 1 − 2⁻⁵³; the top value then stays in the last bin
  (n_excluded = 0), exactly as in SCALE's notebook.

"equal_width" and "equal_mass" require scores in [0, 1]; "scale_minmax" accepts any range.
`as_probabilities` decides whether a scorer's scores can be read as probabilities at all: a cosine
computed in float32 can come out as 1.0000001, which is rounding, not a score outside [0, 1].

Post-hoc calibration (`isotonic_calibrator`): an isotonic map from score to P(consistent) fitted on
validation data only, applied to the evaluated scores; reported as a named variant beside the raw ECE.
Empty bins have count 0 and NaN confidence/accuracy, and contribute nothing to ECE.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import (
    FloatArray,
    as_float_vector,
    require_min_n,
    require_no_nan,
    require_not_constant,
    require_same_length,
)

Binning = Literal["equal_width", "equal_mass", "scale_minmax"]
BINNINGS: tuple[Binning, ...] = ("equal_width", "equal_mass", "scale_minmax")
DEFAULT_BINS = 15


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability diagram: score bounds, item count, mean score, share of label 1."""

    lower: float
    upper: float
    count: int
    mean_confidence: float
    accuracy: float


@dataclass(frozen=True)
class CalibrationResult:
    """ECE under a named binning, with the per-bin data for a reliability diagram.

    `n` is the number of items (the ECE denominator); `n_excluded` the items outside every bin
    (non-zero only for "scale_minmax", whose top value is dropped).
    """

    ece: float
    binning: Binning
    n_bins: int
    n: int
    n_excluded: int
    bins: tuple[ReliabilityBin, ...]


def _labels_and_probabilities(y_true: ArrayLike, y_score: ArrayLike) -> tuple[NDArray[np.int64], FloatArray]:
    labels = as_float_vector(y_true, "y_true")
    scores = as_float_vector(y_score, "y_score")
    require_same_length(y_true=labels, y_score=scores)
    require_no_nan(labels, "y_true")
    require_no_nan(scores, "y_score")
    require_min_n(len(labels), 1, "a calibration error")
    if not np.isin(labels, (0.0, 1.0)).all():
        raise StatisticsError("y_true must hold only 0 and 1 (1 = consistent)")
    return labels.astype(np.int64), scores


PROBABILITY_TOLERANCE = 1e-6  # float32 rounding of a similarity of 1 is about 1.2e-7


def as_probabilities(y_score: ArrayLike, *, tolerance: float = PROBABILITY_TOLERANCE) -> FloatArray | None:
    """The scores clipped into [0, 1] when all of them lie within `tolerance` of it, else None.

    None means the scorer's range is not [0, 1] (a cosine of -0.3, a log-probability) and ECE does not apply.
    """
    scores = as_float_vector(y_score, "y_score")
    require_no_nan(scores, "y_score")
    if len(scores) == 0 or scores.min() < -tolerance or scores.max() > 1.0 + tolerance:
        return None
    return np.clip(scores, 0.0, 1.0)


def _require_probabilities(scores: FloatArray, binning: Binning) -> None:
    if scores.min() < 0.0 or scores.max() > 1.0:
        raise StatisticsError(
            f"binning {binning!r} reads scores as P(consistent) and needs them in [0, 1]; "
            f"got [{scores.min():g}, {scores.max():g}] (calibrate or rescale the scorer first)"
        )


def _make_bin(lower: float, upper: float, labels: NDArray[np.int64], confidences: FloatArray) -> ReliabilityBin:
    if len(labels) == 0:
        return ReliabilityBin(lower, upper, 0, float("nan"), float("nan"))
    return ReliabilityBin(lower, upper, len(labels), float(confidences.mean()), float(labels.mean()))


def _equal_width_bins(labels: NDArray[np.int64], scores: FloatArray, n_bins: int) -> list[ReliabilityBin]:
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    # side="left" on the inner edges gives right-closed bins (e_{k-1}, e_k], like sklearn's calibration_curve.
    ids = np.searchsorted(edges[1:-1], scores, side="left")
    return [_make_bin(float(edges[k]), float(edges[k + 1]), labels[ids == k], scores[ids == k]) for k in range(n_bins)]


def _equal_mass_bins(labels: NDArray[np.int64], scores: FloatArray, n_bins: int) -> list[ReliabilityBin]:
    if n_bins > len(scores):
        raise StatisticsError(f"equal-mass binning needs at least one item per bin: {len(scores)} items, {n_bins} bins")
    runs = np.array_split(np.argsort(scores, kind="stable"), n_bins)
    return [_make_bin(float(scores[run].min()), float(scores[run].max()), labels[run], scores[run]) for run in runs]


def _scale_minmax_bins(labels: NDArray[np.int64], scores: FloatArray, n_bins: int) -> list[ReliabilityBin]:
    require_not_constant(scores, "y_score")
    # sklearn MinMaxScaler's arithmetic (x·scale + offset), kept bit-for-bit so that which items
    # land on the rescaled value 1.0 (and are dropped) is exactly as in SCALE's notebook.
    scale = 1.0 / (scores.max() - scores.min())
    rescaled = scores * scale + (0.0 - scores.min() * scale)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ids = np.digitize(rescaled, edges)  # 1..n_bins for [e_{k-1}, e_k); n_bins + 1 for the top value
    return [_make_bin(float(edges[k - 1]), float(edges[k]), labels[ids == k], rescaled[ids == k]) for k in range(1, n_bins + 1)]


def reliability_bins(
    y_true: ArrayLike, y_score: ArrayLike, *, n_bins: int = DEFAULT_BINS, binning: Binning = "equal_width"
) -> tuple[ReliabilityBin, ...]:
    """Per-bin data for a reliability diagram (lower, upper, count, mean confidence, accuracy)."""
    return expected_calibration_error(y_true, y_score, n_bins=n_bins, binning=binning).bins


def reliability_records(y_true: ArrayLike, y_score: ArrayLike, *, n_bins: int = DEFAULT_BINS) -> list[dict[str, float]]:
    """Equal-width reliability bins as table rows (bin, lower, upper, count, mean_score, consistent_share): the
    columns of every reliability.csv, which `factlab paper reliability-figure` draws."""
    return [
        {
            "bin": index,
            "lower": b.lower,
            "upper": b.upper,
            "count": b.count,
            "mean_score": b.mean_confidence,
            "consistent_share": b.accuracy,
        }
        for index, b in enumerate(reliability_bins(y_true, y_score, n_bins=n_bins))
    ]


def expected_calibration_error(
    y_true: ArrayLike, y_score: ArrayLike, *, n_bins: int = DEFAULT_BINS, binning: Binning = "equal_width"
) -> CalibrationResult:
    """ECE of P(consistent) = score against labels (1 = consistent), see the module docstring."""
    if binning not in BINNINGS:
        raise StatisticsError(f"unknown binning {binning!r}; choose one of {BINNINGS}")
    if n_bins < 1:
        raise StatisticsError(f"n_bins must be positive, got {n_bins}")
    labels, scores = _labels_and_probabilities(y_true, y_score)
    if binning == "equal_width":
        _require_probabilities(scores, binning)
        bins = _equal_width_bins(labels, scores, n_bins)
    elif binning == "equal_mass":
        _require_probabilities(scores, binning)
        bins = _equal_mass_bins(labels, scores, n_bins)
    else:
        bins = _scale_minmax_bins(labels, scores, n_bins)
    n = len(labels)
    ece = sum(b.count / n * abs(b.accuracy - b.mean_confidence) for b in bins if b.count)
    return CalibrationResult(
        ece=float(ece),
        binning=binning,
        n_bins=n_bins,
        n=n,
        n_excluded=n - sum(b.count for b in bins),
        bins=tuple(bins),
    )


def isotonic_calibrator(val_true: ArrayLike, val_score: ArrayLike) -> Callable[[ArrayLike], FloatArray]:
    """A monotone map score -> P(consistent) fitted on validation data (scikit-learn's isotonic regression).

    Scores outside the validation range are clipped to it, so the map is defined everywhere.
    """
    from sklearn.isotonic import IsotonicRegression

    labels, scores = _labels_and_validation_scores(val_true, val_score)
    model = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(scores, labels)

    def calibrate(y_score: ArrayLike) -> FloatArray:
        values = as_float_vector(y_score, "y_score")
        require_no_nan(values, "y_score")
        return np.asarray(model.predict(values), dtype=np.float64)

    return calibrate


def _labels_and_validation_scores(y_true: ArrayLike, y_score: ArrayLike) -> tuple[NDArray[np.int64], FloatArray]:
    labels, scores = _labels_and_probabilities(y_true, y_score)
    if len(np.unique(labels)) < 2:
        raise StatisticsError("isotonic calibration needs both labels in the validation data")
    return labels, scores
