"""Document-level bootstrap: resampling groups, not rows; reproducible; degenerate resamples counted."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from factlab.metaeval import StatisticsError, bootstrap_ci, bootstrap_distribution, correlation_coefficient


@pytest.fixture(scope="module")
def documents() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    human = rng.normal(size=60)
    metric = 0.5 * human + rng.normal(size=60)
    return metric, human


def test_grouped_bootstrap_worked_by_hand():
    # Document d1 has rows 0, 0 and d2 the row 1. Drawing 2 documents with replacement gives
    # {d1, d1} -> mean 0 (prob. 1/4), {d1, d2} in either order -> (0 + 0 + 1)/3 (1/2), {d2, d2} -> 1 (1/4).
    # A row bootstrap (3 rows drawn) would give 0, 1/3, 2/3, 1 with probabilities 8/27, 12/27, 6/27, 1/27;
    # resampling documents, 2/3 cannot occur.
    values = np.array([0.0, 0.0, 1.0])
    distribution = bootstrap_distribution(
        np.mean, values, groups=["d1", "d1", "d2"], n_resamples=4000, rng=np.random.default_rng(0)
    )
    observed, counts = np.unique(distribution.values, return_counts=True)
    np.testing.assert_allclose(observed, [0.0, 1 / 3, 1.0])
    np.testing.assert_allclose(counts / 4000, [0.25, 0.5, 0.25], atol=0.03)  # binomial sd <= 0.008
    assert (distribution.n_groups, distribution.n_invalid) == (2, 0)
    # The 95% percentile interval of that distribution runs from 0 to 1; the estimate is the plain mean 1/3.
    ci = bootstrap_ci(np.mean, values, groups=["d1", "d1", "d2"], n_resamples=4000, rng=np.random.default_rng(0))
    assert (ci.estimate, ci.low, ci.high) == (pytest.approx(1 / 3), 0.0, 1.0)


def test_grouped_bootstrap_over_duplicated_rows_equals_row_bootstrap(documents):
    # Each document has 3 identical outputs: resampling documents must behave exactly like the
    # plain bootstrap of one row per document (same seed, same draws, Pearson unchanged by duplication).
    metric, human = documents
    doc_ids = np.repeat([f"d{i:03d}" for i in range(60)], 3)
    pearson_r = correlation_coefficient("pearson")
    grouped = bootstrap_ci(
        pearson_r, np.repeat(metric, 3), np.repeat(human, 3), groups=doc_ids, n_resamples=300, rng=np.random.default_rng(1)
    )
    plain = bootstrap_ci(pearson_r, metric, human, n_resamples=300, rng=np.random.default_rng(1))
    assert (grouped.low, grouped.high) == pytest.approx((plain.low, plain.high), abs=1e-12)
    assert grouped.estimate == pytest.approx(plain.estimate)
    assert (grouped.n, grouped.n_groups, plain.n_groups) == (180, 60, 60)
    # Resampling the duplicated rows as if independent gives a too-narrow interval.
    naive = bootstrap_ci(pearson_r, np.repeat(metric, 3), np.repeat(human, 3), n_resamples=300, rng=np.random.default_rng(1))
    assert (naive.high - naive.low) < 0.8 * (grouped.high - grouped.low)


def test_row_bootstrap_agrees_with_scipy_percentile_bootstrap(documents):
    metric, _ = documents
    ours = bootstrap_ci(np.mean, metric, n_resamples=2000, rng=np.random.default_rng(2))
    reference = stats.bootstrap((metric,), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(3))
    assert ours.low == pytest.approx(reference.confidence_interval.low, abs=0.04)
    assert ours.high == pytest.approx(reference.confidence_interval.high, abs=0.04)
    assert ours.low < ours.estimate < ours.high


def test_same_seed_same_interval(documents):
    metric, human = documents
    spearman_r = correlation_coefficient("spearman")
    first = bootstrap_ci(spearman_r, metric, human, n_resamples=100, rng=np.random.default_rng(9))
    second = bootstrap_ci(spearman_r, metric, human, n_resamples=100, rng=np.random.default_rng(9))
    assert first == second


def test_undefined_resamples_are_counted_or_raise():
    # One row differs from the rest; resamples that miss it have a constant score.
    metric = np.array([1.0] + [0.0] * 7)
    human = np.arange(8.0)
    pearson_r = correlation_coefficient("pearson")
    with pytest.raises(StatisticsError, match="undefined on"):
        bootstrap_ci(pearson_r, metric, human, n_resamples=200, rng=np.random.default_rng(0))
    tolerant = bootstrap_ci(pearson_r, metric, human, n_resamples=2000, rng=np.random.default_rng(0), max_invalid_share=1.0)
    # a resample misses the one row with probability (7/8)^8 = 0.3436 (binomial sd over 2,000 draws: 0.011)
    assert tolerant.n_invalid / 2000 == pytest.approx((7 / 8) ** 8, abs=0.04)


def test_bootstrap_input_errors(documents):
    metric, human = documents
    pearson_r = correlation_coefficient("pearson")
    with pytest.raises(StatisticsError, match="numpy.random.Generator"):
        bootstrap_ci(pearson_r, metric, human, rng=42)  # type: ignore[arg-type]
    with pytest.raises(StatisticsError, match="length mismatch"):
        bootstrap_ci(pearson_r, metric, human[:-1], rng=np.random.default_rng(0))
    with pytest.raises(StatisticsError, match="length mismatch"):
        bootstrap_ci(pearson_r, metric, human, groups=np.arange(10), rng=np.random.default_rng(0))
    with pytest.raises(StatisticsError, match="at least 2"):
        bootstrap_ci(pearson_r, metric, human, groups=["one"] * 60, rng=np.random.default_rng(0))
    with pytest.raises(StatisticsError, match="confidence"):
        bootstrap_ci(pearson_r, metric, human, confidence=95, n_resamples=10, rng=np.random.default_rng(0))


def test_document_bootstrap_on_frank(raw):
    # FRANK: up to 9 system summaries per article; resampling the 499 articles.
    human = pd.DataFrame(json.loads(raw.path("frank", "data/human_annotations.json").read_text()))
    metrics = pd.DataFrame(json.loads(raw.path("frank", "data/baseline_factuality_metrics_outputs.json").read_text()))
    frame = human.merge(metrics[["hash", "model_name", "FactCC"]], on=["hash", "model_name"], validate="one_to_one")
    result = bootstrap_ci(
        correlation_coefficient("pearson"),
        frame["FactCC"],
        frame["Factuality"],
        groups=frame["hash"],
        n_resamples=200,
        rng=np.random.default_rng(2022),
    )
    assert (result.n, result.n_groups, result.n_invalid) == (2246, 499, 0)
    assert result.low < result.estimate < result.high
    assert result.estimate == pytest.approx(stats.pearsonr(frame["FactCC"], frame["Factuality"]).statistic)
