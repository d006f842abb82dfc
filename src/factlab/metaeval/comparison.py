"""Non-parametric comparison of two metrics' correlations with the same human scores.

The statistic is d = corr(metric A, human) − corr(metric B, human) (Pearson, Spearman or Kendall).

* `paired_bootstrap_difference`: resample documents (groups) with replacement, recompute d on the
  same rows for both metrics (paired); percentile CI, and the two-sided bootstrap p-value
  p = min(1, 2·min(share(d* ≤ 0), share(d* ≥ 0))).
* `permutation_test_difference`: under H0 the two metrics are exchangeable, so each document's
  A and B scores are swapped with probability 1/2 (all rows of a document together). Scores are
  z-scored per metric first so that swapping is meaningful for metrics on different scales (this
  does not change either correlation). p = (1 + #{|d*| ≥ |d|}) / (1 + n_resamples).

To compare *partial* correlations, pass scores residualised with `partial.residualize`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from factlab.metaeval.bootstrap import GroupResampler, bootstrap_distribution, percentile_interval, require_generator
from factlab.metaeval.correlation import CorrelationMethod, correlation
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import FloatArray, paired_vectors, require_same_length

ComparisonTest = Literal["paired_bootstrap", "permutation"]


@dataclass(frozen=True)
class CorrelationDifference:
    """d = r(A, human) − r(B, human) with a p-value; `low`/`high` are the bootstrap CI (NaN for the permutation test)."""

    test: ComparisonTest
    method: CorrelationMethod
    r_a: float
    r_b: float
    difference: float
    p_value: float
    low: float
    high: float
    confidence: float
    n: int
    n_groups: int
    n_resamples: int
    n_invalid: int


def _three_vectors(human: ArrayLike, metric_a: ArrayLike, metric_b: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
    h, a = paired_vectors(human, metric_a, ("human", "metric_a"))
    _, b = paired_vectors(human, metric_b, ("human", "metric_b"))
    require_same_length(human=h, metric_a=a, metric_b=b)
    return h, a, b


class DifferenceStatistic:
    """Callable (human, a, b) -> corr(a, human) − corr(b, human)."""

    def __init__(self, method: CorrelationMethod) -> None:
        self.method = method

    def __call__(self, human: FloatArray, a: FloatArray, b: FloatArray) -> float:
        return correlation(a, human, self.method).r - correlation(b, human, self.method).r


def paired_bootstrap_difference(
    human: ArrayLike,
    metric_a: ArrayLike,
    metric_b: ArrayLike,
    *,
    method: CorrelationMethod = "pearson",
    groups: ArrayLike | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> CorrelationDifference:
    """Paired bootstrap over documents of the correlation difference (see the module docstring)."""
    h, a, b = _three_vectors(human, metric_a, metric_b)
    r_a, r_b = correlation(a, h, method).r, correlation(b, h, method).r
    distribution = bootstrap_distribution(DifferenceStatistic(method), h, a, b, groups=groups, n_resamples=n_resamples, rng=rng)
    values = distribution.values
    low, high = percentile_interval(values, confidence)
    p = min(1.0, 2.0 * min(float(np.mean(values <= 0)), float(np.mean(values >= 0))))
    return CorrelationDifference(
        test="paired_bootstrap",
        method=method,
        r_a=r_a,
        r_b=r_b,
        difference=r_a - r_b,
        p_value=p,
        low=low,
        high=high,
        confidence=confidence,
        n=len(h),
        n_groups=distribution.n_groups,
        n_resamples=n_resamples,
        n_invalid=distribution.n_invalid,
    )


def _standardize(values: FloatArray) -> FloatArray:
    standardized: FloatArray = (values - values.mean()) / values.std()
    return standardized


def _rowwise_correlation(matrix: FloatArray, human: FloatArray, method: CorrelationMethod) -> FloatArray:
    """corr(row, human) for every row of `matrix` (vectorised for Pearson and Spearman)."""
    if method == "kendall":
        return np.array([stats.kendalltau(row, human).statistic for row in matrix])
    if method == "spearman":
        matrix, human = stats.rankdata(matrix, axis=1), stats.rankdata(human)
    centered = matrix - matrix.mean(axis=1, keepdims=True)
    h = human - human.mean()
    norms = np.sqrt((centered**2).sum(axis=1) * (h**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        result: FloatArray = centered @ h / norms
    return result


def permutation_test_difference(
    human: ArrayLike,
    metric_a: ArrayLike,
    metric_b: ArrayLike,
    *,
    method: CorrelationMethod = "pearson",
    groups: ArrayLike | None = None,
    n_resamples: int = 1000,
    rng: np.random.Generator,
) -> CorrelationDifference:
    """Paired permutation test of the correlation difference, swapping A/B per document (see module docstring)."""
    require_generator(rng)
    if n_resamples < 1:
        raise StatisticsError(f"n_resamples must be positive, got {n_resamples}")
    h, a, b = _three_vectors(human, metric_a, metric_b)
    r_a, r_b = correlation(a, h, method).r, correlation(b, h, method).r
    observed = r_a - r_b
    za, zb = _standardize(a), _standardize(b)
    resampler = GroupResampler(groups, len(h))
    group_of_row = np.empty(len(h), dtype=np.intp)
    for index, rows in enumerate(resampler.members):
        group_of_row[rows] = index
    swap: NDArray[np.bool_] = rng.random((n_resamples, resampler.n_groups)) < 0.5
    swap_rows = swap[:, group_of_row]
    permuted_a = np.where(swap_rows, zb, za)
    permuted_b = np.where(swap_rows, za, zb)
    differences = _rowwise_correlation(permuted_a, h, method) - _rowwise_correlation(permuted_b, h, method)
    valid = np.isfinite(differences)
    n_invalid = int((~valid).sum())
    if n_invalid > 0.1 * n_resamples:
        raise StatisticsError(f"the correlation was undefined on {n_invalid} of {n_resamples} permutations")
    # A tiny tolerance keeps permutations that reproduce |d| exactly (up to rounding) in the count.
    extreme = np.abs(differences[valid]) >= abs(observed) - 1e-12
    p = (1 + int(extreme.sum())) / (1 + int(valid.sum()))
    return CorrelationDifference(
        test="permutation",
        method=method,
        r_a=r_a,
        r_b=r_b,
        difference=observed,
        p_value=float(p),
        low=float("nan"),
        high=float("nan"),
        confidence=float("nan"),
        n=len(h),
        n_groups=resampler.n_groups,
        n_resamples=n_resamples,
        n_invalid=n_invalid,
    )
