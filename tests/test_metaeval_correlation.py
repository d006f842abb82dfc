"""Correlations and NaN handling, checked against scipy and pingouin."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

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


def test_correlations_match_scipy(scores):
    metric, human = scores
    for ours, reference in ((pearson, stats.pearsonr), (spearman, stats.spearmanr), (kendall, stats.kendalltau)):
        result = ours(metric, human)
        expected = reference(metric, human)
        assert result.r == pytest.approx(expected.statistic, abs=1e-12)
        assert result.p == pytest.approx(expected.pvalue, rel=1e-9)
        assert result.n == 80


def test_correlations_match_pingouin(scores):
    metric, human = scores
    for method in ("pearson", "spearman", "kendall"):
        expected = pg.corr(metric, human, method=method)
        result = correlation(metric, human, method)
        assert result.method == method
        assert result.r == pytest.approx(float(expected["r"].iloc[0]), abs=1e-9)
        assert result.p == pytest.approx(float(expected["p_val"].iloc[0]), rel=1e-6)


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
    assert correlation_coefficient("kendall")([1, 2, 3], [1, 3, 2]) == pytest.approx(stats.kendalltau([1, 2, 3], [1, 3, 2]).statistic)


def test_dropna_pairs_drops_and_counts_every_incomplete_row():
    x = [0.1, np.nan, 0.3, 0.4, np.nan, 0.6]
    y = pd.Series([1.0, 2.0, None, 4.0, np.nan, 6.0], dtype="Float64")
    docs = ["d1", "d1", "d2", "d3", "d3", None]
    kept = dropna_pairs(x, y, docs)
    assert kept.n_dropped == 4 and kept.n_kept == 2
    assert kept.n_missing_per_array == (2, 2, 1)
    assert kept.counts == {"dropped_nan": 4, "kept": 2}
    np.testing.assert_array_equal(kept.arrays[0], [0.1, 0.4])
    np.testing.assert_array_equal(kept.arrays[1], [1.0, 4.0])
    np.testing.assert_array_equal(kept.arrays[2], ["d1", "d3"])
    with pytest.raises(StatisticsError, match="length mismatch"):
        dropna_pairs([1.0, 2.0], [1.0])
