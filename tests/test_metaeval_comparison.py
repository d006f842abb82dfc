"""Paired bootstrap and permutation test of a correlation difference (permutation checked against scipy)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from factlab.metaeval import StatisticsError, paired_bootstrap_difference, pearson, permutation_test_difference


@pytest.fixture(scope="module")
def three_scores() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(21)
    human = rng.normal(size=120)
    good = human + 0.7 * rng.normal(size=120)
    poor = human + 2.5 * rng.normal(size=120)
    return human, good, poor


def test_paired_bootstrap_finds_a_clear_difference(three_scores):
    human, good, poor = three_scores
    result = paired_bootstrap_difference(human, good, poor, n_resamples=300, rng=np.random.default_rng(0))
    assert result.difference == pytest.approx(pearson(good, human).r - pearson(poor, human).r)
    assert 0 < result.low < result.difference < result.high
    assert result.p_value < 0.01 and result.test == "paired_bootstrap"


def test_paired_bootstrap_of_a_metric_against_itself(three_scores):
    human, good, _ = three_scores
    result = paired_bootstrap_difference(human, good, good, n_resamples=50, rng=np.random.default_rng(0))
    assert result.difference == 0 and result.low == result.high == 0 and result.p_value == 1.0


def test_permutation_matches_scipy_exact_paired_permutation():
    rng = np.random.default_rng(4)
    human = rng.normal(size=10)
    a = human + 0.5 * rng.normal(size=10)
    b = human + 1.5 * rng.normal(size=10)
    za, zb = (a - a.mean()) / a.std(), (b - b.mean()) / b.std()

    def difference(x: np.ndarray, y: np.ndarray) -> float:
        return stats.pearsonr(x, human).statistic - stats.pearsonr(y, human).statistic

    # permutation_type="samples" swaps the two values of each pair: all 2^10 swaps, exactly.
    exact = stats.permutation_test((za, zb), difference, permutation_type="samples", n_resamples=np.inf)
    ours = permutation_test_difference(human, a, b, n_resamples=4000, rng=np.random.default_rng(8))
    assert ours.difference == pytest.approx(exact.statistic)
    assert ours.p_value == pytest.approx(exact.pvalue, abs=0.03)


def test_permutation_swaps_whole_documents():
    # Duplicating every row inside its document must not change the permutation p-value.
    rng = np.random.default_rng(6)
    human = rng.normal(size=40)
    a, b = human + rng.normal(size=40), human + 2 * rng.normal(size=40)
    docs = np.repeat([f"d{i:02d}" for i in range(40)], 2)
    grouped = permutation_test_difference(
        np.repeat(human, 2), np.repeat(a, 2), np.repeat(b, 2), groups=docs, n_resamples=500, rng=np.random.default_rng(1)
    )
    plain = permutation_test_difference(human, a, b, n_resamples=500, rng=np.random.default_rng(1))
    assert grouped.p_value == pytest.approx(plain.p_value)
    assert (grouped.n, grouped.n_groups) == (80, 40)


@pytest.mark.parametrize("method", ["spearman", "kendall"])
def test_rank_methods_run_and_report_their_method(three_scores, method):
    human, good, poor = three_scores
    result = permutation_test_difference(human, good, poor, method=method, n_resamples=100, rng=np.random.default_rng(0))
    assert result.method == method and result.p_value < 0.05
    assert np.isnan(result.low) and np.isnan(result.high)


def test_comparison_input_errors(three_scores):
    human, good, poor = three_scores
    with pytest.raises(StatisticsError, match="length mismatch"):
        paired_bootstrap_difference(human, good, poor[:-1], rng=np.random.default_rng(0))
    with pytest.raises(StatisticsError, match="constant"):
        permutation_test_difference(human, good, np.zeros_like(poor), rng=np.random.default_rng(0))
    with pytest.raises(StatisticsError, match="numpy.random.Generator"):
        permutation_test_difference(human, good, poor, rng=None)  # type: ignore[arg-type]
