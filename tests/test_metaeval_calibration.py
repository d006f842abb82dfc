"""ECE and reliability diagrams: values worked by hand, sklearn's calibration_curve, SCALE's notebook recipe and quirk."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.preprocessing import MinMaxScaler

from factlab.metaeval import StatisticsError, expected_calibration_error, reliability_bins


def test_equal_width_ece_worked_by_hand():
    # Bins (0, .5] and (.5, 1]: {0.1, 0.2} conf .15 acc .5; {0.7, 0.9} conf .8 acc 1.
    # ECE = 2/4·|.5 − .15| + 2/4·|1 − .8| = .175 + .1 = .275
    result = expected_calibration_error([0, 1, 1, 1], [0.1, 0.2, 0.7, 0.9], n_bins=2)
    assert result.ece == pytest.approx(0.275)
    assert (result.binning, result.n_bins, result.n, result.n_excluded) == ("equal_width", 2, 4, 0)
    low, high = result.bins
    assert (low.lower, low.upper, low.count, low.mean_confidence, low.accuracy) == pytest.approx((0.0, 0.5, 2, 0.15, 0.5))
    assert (high.lower, high.upper, high.count, high.mean_confidence, high.accuracy) == pytest.approx((0.5, 1.0, 2, 0.8, 1.0))


def test_equal_width_bins_are_right_closed_and_hold_zero_and_one():
    bins = reliability_bins([0, 1, 1, 0], [0.0, 0.5, 1.0, 0.5], n_bins=2)
    assert [b.count for b in bins] == [3, 1]  # 0.0 and both 0.5s in (0, .5]; 1.0 in (.5, 1]


def test_equal_width_matches_sklearn_calibration_curve():
    rng = np.random.default_rng(17)
    scores = rng.beta(2, 1.5, size=400)
    labels = (rng.random(400) < scores**1.5).astype(int)  # over-confident scorer
    prob_true, prob_pred = calibration_curve(labels, scores, n_bins=15, strategy="uniform")
    counts = np.histogram(scores, bins=np.linspace(0, 1, 16))[0]  # no score sits exactly on an edge
    expected = float(np.sum(counts[counts > 0] / 400 * np.abs(prob_true - prob_pred)))
    result = expected_calibration_error(labels, scores)  # default K = 15
    assert result.n_bins == 15 and result.ece == pytest.approx(expected, abs=1e-12)
    assert [b.count for b in result.bins] == counts.tolist()


def test_scale_minmax_drops_the_top_value_but_keeps_it_in_n():
    # Scores 1, 2, 3, 5 rescale to 0, .25, .5, 1. Bins [0, .5) and [.5, 1): {0, .25} conf .125 acc .5;
    # {.5} conf .5 acc 1; the rescaled 1.0 is in no bin. ECE = (2·.375 + 1·.5) / 4 = .3125 (n stays 4).
    result = expected_calibration_error([0, 1, 1, 1], [1.0, 2.0, 3.0, 5.0], n_bins=2, binning="scale_minmax")
    assert result.ece == pytest.approx(0.3125)
    assert (result.n, result.n_excluded) == (4, 1)
    assert [b.count for b in result.bins] == [2, 1]


def test_scale_minmax_matches_scale_notebook_recipe():
    # SCALE's notebook: sklearn MinMaxScaler, then np.digitize on 0, 0.1, ..., 1 (bins 1..10; 11 is dropped).
    rng = np.random.default_rng(23)
    scores = rng.normal(size=300)  # any range: SCALE rescales
    labels = (rng.random(300) < 0.6).astype(int)
    rescaled = MinMaxScaler().fit_transform(scores.reshape(-1, 1)).ravel()
    which = np.digitize(rescaled, np.linspace(0, 1, 11))
    expected = sum(
        abs(labels[which == k].mean() - rescaled[which == k].mean()) * np.sum(which == k)
        for k in range(1, 11)
        if np.any(which == k)
    ) / len(scores)
    result = expected_calibration_error(labels, scores, n_bins=10, binning="scale_minmax")
    assert result.ece == pytest.approx(expected, abs=1e-15)
    # Here MinMaxScaler rounds the maximum to 1 − 2⁻⁵³, so (as in SCALE's notebook) nothing is dropped.
    assert rescaled.max() < 1.0 and result.n_excluded == int(np.sum(which == 11)) == 0
    # With a maximum that rescales to exactly 1.0 the top value is dropped.
    shifted = scores - scores.min()
    assert expected_calibration_error(labels, shifted / shifted.max(), n_bins=10, binning="scale_minmax").n_excluded == 1


def test_empty_bins_are_nan_and_do_not_count():
    bins = reliability_bins([1, 0], [0.95, 0.9], n_bins=4)
    assert [b.count for b in bins] == [0, 0, 0, 2]
    assert np.isnan(bins[0].mean_confidence) and np.isnan(bins[0].accuracy)
    assert expected_calibration_error([1, 0], [0.95, 0.9], n_bins=4).ece == pytest.approx(abs(0.5 - 0.925))


def test_calibration_input_errors():
    with pytest.raises(StatisticsError, match=r"in \[0, 1\]"):
        expected_calibration_error([0, 1], [-0.5, 0.9])
    with pytest.raises(StatisticsError, match=r"in \[0, 1\]"):
        expected_calibration_error([0, 1], [0.5, 1.2])
    with pytest.raises(StatisticsError, match="NaN"):
        expected_calibration_error([0, 1], [np.nan, 0.9])
    with pytest.raises(StatisticsError, match="only 0 and 1"):
        expected_calibration_error([0, 2], [0.1, 0.9])
    with pytest.raises(StatisticsError, match="length mismatch"):
        expected_calibration_error([0, 1, 1], [0.1, 0.9])
    with pytest.raises(StatisticsError, match="positive"):
        expected_calibration_error([0, 1], [0.1, 0.9], n_bins=0)
    with pytest.raises(StatisticsError, match="constant"):
        expected_calibration_error([0, 1], [0.7, 0.7], binning="scale_minmax")
    for unknown in ("quantile", "equal_count"):
        with pytest.raises(StatisticsError, match="unknown binning"):
            expected_calibration_error([0, 1], [0.1, 0.9], binning=unknown)  # type: ignore[arg-type]


def test_equal_mass_bins_worked_by_hand() -> None:
    from factlab.metaeval.calibration import expected_calibration_error

    # 6 scores in 3 bins of 2 (sorted): {0.1, 0.2} labels {0, 0}: |0 - 0.15|; {0.4, 0.6} labels {1, 0}: |0.5 - 0.5|;
    # {0.8, 0.9} labels {1, 1}: |1 - 0.85|. ECE = (2 * 0.15 + 0 + 2 * 0.15) / 6 = 0.1.
    result = expected_calibration_error([0, 1, 0, 1, 0, 1], [0.1, 0.4, 0.2, 0.9, 0.6, 0.8], n_bins=3, binning="equal_mass")
    assert result.ece == pytest.approx(0.1)
    assert [b.count for b in result.bins] == [2, 2, 2]
    assert (result.bins[1].lower, result.bins[1].upper) == (0.4, 0.6)


def test_equal_mass_needs_an_item_per_bin() -> None:
    from factlab.metaeval.calibration import expected_calibration_error

    with pytest.raises(StatisticsError, match="at least one item per bin"):
        expected_calibration_error([0, 1], [0.2, 0.7], n_bins=3, binning="equal_mass")


def test_isotonic_calibrator_pools_adjacent_violators_by_hand() -> None:
    from factlab.metaeval.calibration import isotonic_calibrator

    # Labels 0, 1, 0, 1 at 0.1 … 0.4: the violating middle pair pools to 0.5; the ends stay 0 and 1.
    calibrate = isotonic_calibrator([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(calibrate([0.1, 0.25, 0.4]), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(calibrate([-3.0, 9.0]), [0.0, 1.0])  # clipped outside the fitted range
    with pytest.raises(StatisticsError, match="both labels"):
        isotonic_calibrator([1, 1], [0.1, 0.2])


def test_scores_within_rounding_of_the_unit_interval_read_as_probabilities() -> None:
    from factlab.metaeval.calibration import as_probabilities

    assert as_probabilities([-1e-7, 0.5, float(np.float32(1.0000001))]).tolist() == [0.0, 0.5, 1.0]
    assert as_probabilities([-0.3, 0.5, 0.9]) is None  # a cosine below 0: not a probability
    assert as_probabilities([0.5, 1.001]) is None
