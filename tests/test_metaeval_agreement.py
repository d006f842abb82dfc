"""Agreement statistics against published worked examples (Fleiss 1971; Krippendorff 2011), values
worked by hand, and, on real QAGS votes, the identity that links Fleiss' κ and Krippendorff's α."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from factlab.data.adapters.qags import adapt_qags
from factlab.metaeval import StatisticsError, fleiss_kappa, krippendorff_alpha_nominal, majority_agreement_share

# Fleiss' κ example (Fleiss 1971; the worked example of Wikipedia's "Fleiss' kappa" article):
# 10 subjects, 14 raters, 5 categories; row i = how many raters put subject i in each category.
FLEISS_COUNTS = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers (rows)
# × 12 units (columns), values 1–5, NaN = not rated. Published nominal α = 0.743.
KRIPPENDORFF_DATA = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
        [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
    ]
)


def _ratings_from_counts(counts: np.ndarray, labels: list[object]) -> np.ndarray:
    """(subjects × raters) labels with the given category counts per subject."""
    return np.array([np.repeat(labels, row) for row in counts])


def test_fleiss_kappa_reproduces_fleiss_1971_example():
    # Column totals 20, 28, 39, 21, 32 of 140 ratings: P_e = (20² + 28² + 39² + 21² + 32²) / 140² = 4170/19600.
    # Per subject P_i = (Σ_j n_ij² − 14) / (14·13): numerators 182, 46, 56, 80, 60, 84, 44, 32, 52, 52
    # sum to 688, so P̄ = 688 / (10·182). κ = (P̄ − P_e) / (1 − P_e) = 0.20993 (published: 0.210).
    p_mean, p_e = Fraction(688, 1820), Fraction(4170, 19600)
    expected = float((p_mean - p_e) / (1 - p_e))
    for labels in ([1, 2, 3, 4, 5], ["a", "b", "c", "d", "e"]):
        ratings = _ratings_from_counts(FLEISS_COUNTS, labels)
        assert ratings.shape == (10, 14)
        assert fleiss_kappa(ratings) == pytest.approx(expected, rel=1e-12)
        assert round(fleiss_kappa(ratings), 3) == 0.210


def test_krippendorff_alpha_reproduces_krippendorff_2011_example():
    # Unit 12 has one value (not pairable). Ordered pairs of different values within a unit, over
    # (m_u − 1): unit 2 (2,2,3,2) 6/3, unit 6 (1,2,3,4) 12/3, unit 8 (1,1,2,1) 6/3: Σ o_ck (c≠k) = 8.
    # Pairable values n = 40 with n_c = 9, 13, 10, 5, 3: Σ_{c≠k} n_c·n_k = 40² − 384 = 1216.
    # α = 1 − (n − 1)·8 / 1216 = 1 − 312/1216 = 113/152 = 0.74342 (published: 0.743).
    ratings = KRIPPENDORFF_DATA.T  # units × observers
    assert krippendorff_alpha_nominal(ratings) == pytest.approx(113 / 152, rel=1e-12)
    # Nominal: the labels' names do not matter, and a missing rating may be None.
    words = np.where(np.isnan(ratings), None, np.array(list("?abcde"), dtype=object)[np.nan_to_num(ratings).astype(int)])
    assert krippendorff_alpha_nominal(words) == pytest.approx(113 / 152, rel=1e-12)
    # Unpairable units (one rating or none) do not count, whatever their value.
    extra = np.array([[9.0, np.nan, np.nan, np.nan], [np.nan] * 4])
    assert krippendorff_alpha_nominal(np.vstack([ratings, extra])) == pytest.approx(113 / 152, rel=1e-12)


def test_small_examples_worked_by_hand():
    # Two raters, items (0,0) (1,1) (1,0) (1,1): of the 8 ratings, 3 are 0 and 5 are 1.
    # Fleiss: P_i = 1, 1, 0, 1 -> P̄ = 3/4; P_e = (3/8)² + (5/8)² = 34/64; κ = (3/4 − 34/64) / (30/64) = 14/30.
    ratings = np.array([[0, 0], [1, 1], [1, 0], [1, 1]])
    assert fleiss_kappa(ratings) == pytest.approx(14 / 30)
    # Krippendorff, complete data: 1 − α = (1 − 1/n)(1 − κ) with n = 8 ratings: α = 1 − (7/8)(16/30) = 8/15.
    assert krippendorff_alpha_nominal(ratings) == pytest.approx(8 / 15)
    # Majority share: 2 + 2 + 1 + 2 of 8 ratings agree with their item's most frequent label.
    assert majority_agreement_share(ratings) == pytest.approx(7 / 8)
    votes = np.array([["yes", "yes", "no"], ["no", "no", "no"], ["yes", "no", "no"]])
    assert majority_agreement_share(votes) == pytest.approx((2 + 3 + 2) / 9)


def test_agreement_on_real_qags_votes(raw):
    for subset, n_rows in (("cnndm", 714), ("xsum", 239)):
        frame = adapt_qags(raw, subset).frame
        votes = np.array(frame["votes"].tolist())
        assert votes.shape == (n_rows, 3)
        kappa, alpha = fleiss_kappa(votes), krippendorff_alpha_nominal(votes)
        # Two libraries (statsmodels, krippendorff), one identity: with every item rated by all m raters,
        # D_o = 1 − P̄ and D_e = n/(n − 1)·(1 − P_e) for n = m·N ratings, so 1 − α = (1 − 1/n)(1 − κ).
        assert 1 - alpha == pytest.approx((1 - 1 / votes.size) * (1 - kappa), rel=1e-12)
        # Binary votes of 3 raters: a unanimous item has P_i = 1, a 2–1 item P_i = 1/3; P_e from the share of 1s.
        yes = votes.sum(axis=1)
        unanimous = np.isin(yes, (0, 3))
        p_mean = (unanimous.sum() + (~unanimous).sum() / 3) / n_rows
        share = yes.sum() / votes.size
        p_e = share**2 + (1 - share) ** 2
        assert kappa == pytest.approx((p_mean - p_e) / (1 - p_e), rel=1e-12)
        # Majority share: 3 of 3 votes for unanimous items, 2 of 3 otherwise.
        assert majority_agreement_share(votes) == pytest.approx((3 * unanimous.sum() + 2 * (~unanimous).sum()) / votes.size)


def test_agreement_degenerate_inputs_raise():
    ratings = np.array([[0, 1, 2], [1, 1, 2], [2, 0, 0]])
    with pytest.raises(StatisticsError, match="one category"):
        fleiss_kappa(np.ones((5, 3)))
    with pytest.raises(StatisticsError, match="one category"):
        krippendorff_alpha_nominal(np.ones((5, 3)))
    # Category 0 occurs only in a unit with one rating: the pairable ratings are all 1.
    with pytest.raises(StatisticsError, match="one category"):
        krippendorff_alpha_nominal(np.array([[1.0, 1.0], [0.0, np.nan]]))
    with pytest.raises(StatisticsError, match="missing"):
        fleiss_kappa(np.array([[1.0, np.nan, 0.0], [1.0, 1.0, 0.0]]))
    with pytest.raises(StatisticsError, match="missing"):
        majority_agreement_share(np.array([["yes", None], ["no", "no"]], dtype=object))
    with pytest.raises(StatisticsError, match="at least 2 raters"):
        fleiss_kappa(ratings[:, :1])
    with pytest.raises(StatisticsError, match="items × raters"):
        fleiss_kappa(ratings[:, 0])
    with pytest.raises(StatisticsError, match="two or more ratings"):
        krippendorff_alpha_nominal(np.array([[1.0, np.nan], [np.nan, 0.0]]))
