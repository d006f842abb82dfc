"""Agreement statistics against statsmodels, sklearn and krippendorff, on synthetic and real QAGS votes."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from factlab.data.adapters.qags import adapt_qags
from factlab.metaeval import (
    StatisticsError,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha_nominal,
    majority_agreement_share,
    majority_vote,
)


@pytest.fixture(scope="module")
def ratings() -> np.ndarray:
    """60 items × 3 raters, 3 categories, raters partly copying a latent label."""
    rng = np.random.default_rng(29)
    truth = rng.integers(0, 3, 60)
    noise = rng.integers(0, 3, (60, 3))
    return np.where(rng.random((60, 3)) < 0.6, truth[:, None], noise)


def test_fleiss_kappa_matches_statsmodels(ratings):
    assert fleiss_kappa(ratings) == pytest.approx(statsmodels_fleiss_kappa(aggregate_raters(ratings)[0]), abs=1e-12)


def test_cohen_kappa_matches_sklearn(ratings):
    assert cohen_kappa(ratings[:, 0], ratings[:, 1]) == pytest.approx(cohen_kappa_score(ratings[:, 0], ratings[:, 1]))
    words = np.array(["yes", "no"])[ratings[:, :2] % 2]
    assert cohen_kappa(words[:, 0], words[:, 1]) == pytest.approx(cohen_kappa_score(words[:, 0], words[:, 1]))


def test_krippendorff_alpha_matches_krippendorff_with_missing(ratings):
    with_missing = ratings.astype(float)
    with_missing[np.random.default_rng(1).random(with_missing.shape) < 0.2] = np.nan
    for data in (ratings.astype(float), with_missing):
        expected = krippendorff.alpha(reliability_data=data.T, level_of_measurement="nominal")
        assert krippendorff_alpha_nominal(data) == pytest.approx(expected, abs=1e-12)


def test_majority_vote_and_share_worked_by_hand():
    votes = np.array([["yes", "yes", "no"], ["no", "no", "no"], ["yes", "no", "no"]])
    np.testing.assert_array_equal(majority_vote(votes), ["yes", "no", "no"])
    assert majority_agreement_share(votes) == pytest.approx((2 + 3 + 2) / 9)


def test_agreement_on_real_qags_votes(raw):
    for subset, n_rows in (("cnndm", 714), ("xsum", 239)):
        frame = adapt_qags(raw, subset).frame
        votes = np.array(frame["votes"].tolist())
        assert votes.shape == (n_rows, 3)
        expected = statsmodels_fleiss_kappa(aggregate_raters(votes)[0])
        assert fleiss_kappa(votes) == pytest.approx(expected, abs=1e-12)
        alpha = krippendorff.alpha(reliability_data=votes.T.astype(float), level_of_measurement="nominal")
        assert krippendorff_alpha_nominal(votes) == pytest.approx(alpha, abs=1e-12)
        np.testing.assert_array_equal(majority_vote(votes), frame["label"].to_numpy())
        assert 2 / 3 <= majority_agreement_share(votes) <= 1


def test_agreement_degenerate_inputs_raise(ratings):
    with pytest.raises(StatisticsError, match="one category"):
        fleiss_kappa(np.ones((5, 3)))
    with pytest.raises(StatisticsError, match="one category"):
        cohen_kappa([1, 1, 1], [1, 1, 1])
    with pytest.raises(StatisticsError, match="one category"):
        krippendorff_alpha_nominal(np.ones((5, 3)))
    with pytest.raises(StatisticsError, match="missing"):
        fleiss_kappa(np.array([[1.0, np.nan, 0.0], [1.0, 1.0, 0.0]]))
    with pytest.raises(StatisticsError, match="no unique majority"):
        majority_vote(np.array([[1, 0], [1, 1]]))
    with pytest.raises(StatisticsError, match="at least 2 raters"):
        fleiss_kappa(ratings[:, :1])
    with pytest.raises(StatisticsError, match="items × raters"):
        fleiss_kappa(ratings[:, 0])
    with pytest.raises(StatisticsError, match="length mismatch"):
        cohen_kappa([1, 0, 1], [1, 0])
    with pytest.raises(StatisticsError, match="two or more ratings"):
        krippendorff_alpha_nominal(np.array([[1.0, np.nan], [np.nan, 0.0]]))
