"""Correlations and NaN handling: coefficients and p-values worked by hand (closed-form t
distributions with 2 and 3 df, the exact null distribution of Kendall's τ)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from factlab.errors import FactlabError
from factlab.metaeval import (
    StatisticsError,
    correlation,
    correlation_coefficient,
    dropna_pairs,
    kendall,
    pearson,
    spearman,
)


@pytest.fixture(scope="module")
def scores() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    human = rng.normal(size=80)
    metric = 0.4 * human + rng.normal(size=80)
    return metric, np.round(human, 1)  # rounding creates ties for the rank correlations


def test_correlations_worked_by_hand():
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    # Deviations (−2, −1, 0, 1, 2) and (−1, −2, 1, 0, 2): Σ dx·dy = 8, Σ dx² = Σ dy² = 10 -> r = 0.8.
    # t = r·√(n − 2)/√(1 − r²) = 0.8·√3/0.6, so t/√3 = 4/3; Student t with 3 df has
    # P(|T| > t) = 1 − (2/π)·(u/(1 + u²) + atan(u)) with u = t/√3: p = 1 − (2/π)·(12/25 + atan(4/3)).
    p_3df = 1 - 2 / math.pi * (12 / 25 + math.atan(4 / 3))
    result = pearson(x, y)
    assert (result.r, result.n, result.method) == (pytest.approx(0.8), 5, "pearson")
    assert result.p == pytest.approx(p_3df, rel=1e-12)
    # Without ties the ranks are the values: Spearman's rho is 0.8 too, with the same t-test p-value.
    assert (spearman(x, y).r, spearman(x, y).p) == pytest.approx((0.8, p_3df), rel=1e-12)
    # Kendall: of the 10 pairs only (1,2) and (3,4) are discordant -> τ = (8 − 2)/10 = 0.6. Exact p: the
    # numbers of permutations of 5 with 0, 1, 2 inversions are 1, 4, 9 (of 120), so P(D ≤ 2) = 14/120, two-sided 28/120.
    assert (kendall(x, y).r, kendall(x, y).p) == pytest.approx((0.6, 28 / 120), rel=1e-12)


def test_ties_use_average_ranks_and_tau_b():
    x, y = [1, 2, 3, 4], [1, 1, 2, 2]
    # Average ranks of y: 1.5 1.5 3.5 3.5; deviations (−1.5, −.5, .5, 1.5) and (−1, −1, 1, 1):
    # Σ dx·dy = 4, Σ dx² = 5, Σ dy² = 4 -> rho = 4/√20 (Pearson on the raw y gives the same: y is affine in its ranks).
    # t = √8 with 2 df, P(|T| > t) = 1 − t/√(2 + t²) = 1 − √0.8.
    for function in (pearson, spearman):
        assert (function(x, y).r, function(x, y).p) == pytest.approx((4 / math.sqrt(20), 1 - math.sqrt(0.8)), rel=1e-12)
    # Kendall tau-b: 4 concordant pairs, 0 discordant, 2 pairs tied in y only, of 6:
    # τ_b = (4 − 0)/√((6 − 0)(6 − 2)) = 4/√24 (τ_a would be 4/6).
    assert kendall(x, y).r == pytest.approx(4 / math.sqrt(24), rel=1e-12)


def test_dispatch_by_name(scores):
    metric, human = scores
    for method, function in (("pearson", pearson), ("spearman", spearman), ("kendall", kendall)):
        assert correlation(metric, human, method) == function(metric, human)
        assert correlation_coefficient(method)(metric, human) == function(metric, human).r
    # [1, 2, 3] vs [1, 3, 2]: pairs (1,2) and (1,3) concordant, (2,3) discordant -> τ = 1/3.
    assert correlation_coefficient("kendall")([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)


def test_pandas_series_are_accepted(scores):
    metric, human = scores
    assert pearson(pd.Series(metric), pd.Series(human, dtype="Float64")).r == pytest.approx(pearson(metric, human).r)


@pytest.mark.parametrize(
    ("x", "y", "message"),
    [
        ([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0], "constant"),
        ([1.0, np.nan, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], "NaN"),
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0], "length mismatch"),
        ([1.0, 2.0], [2.0, 1.0], "at least 3"),
        ([1.0, np.inf, 3.0], [1.0, 2.0, 3.0], "infinite"),
        ([[1.0, 2.0], [3.0, 4.0]], [1.0, 2.0], "1-dimensional"),
        (["a", "b", "c"], [1.0, 2.0, 3.0], "not numeric"),
    ],
)
def test_degenerate_inputs_raise(x, y, message):
    for function in (pearson, spearman, kendall):
        with pytest.raises(StatisticsError, match=message):
            function(x, y)


def test_statistics_error_is_a_factlab_error():
    assert issubclass(StatisticsError, FactlabError)
    with pytest.raises(StatisticsError, match="unknown correlation method"):
        correlation([1, 2, 3], [1, 2, 4], "cosine")  # type: ignore[arg-type]
    with pytest.raises(StatisticsError, match="unknown correlation method"):
        correlation_coefficient("cosine")  # type: ignore[arg-type]


def test_dropna_pairs_drops_and_counts_every_incomplete_row():
    x = [0.1, np.nan, 0.3, 0.4, np.nan, 0.6]
    y = pd.Series([1.0, 2.0, None, 4.0, np.nan, 6.0], dtype="Float64")
    docs = ["d1", "d1", "d2", "d3", "d3", None]
    kept = dropna_pairs(x, y, docs)
    assert kept.n_dropped == 4 and kept.n_kept == 2
    np.testing.assert_array_equal(kept.keep, [True, False, False, True, False, False])
    np.testing.assert_array_equal(kept.arrays[0], [0.1, 0.4])
    np.testing.assert_array_equal(kept.arrays[1], [1.0, 4.0])
    np.testing.assert_array_equal(kept.arrays[2], ["d1", "d3"])
    with pytest.raises(StatisticsError, match="length mismatch"):
        dropna_pairs([1.0, 2.0], [1.0])
