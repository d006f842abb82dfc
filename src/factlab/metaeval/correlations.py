"""Correlation between metric scores and human judgments (Pearson, Spearman, Kendall) with p-values.

Conventions: two-sided p-values from scipy.stats — Pearson's exact t-test (n−2 df), Spearman's
t approximation (n−2 df), Kendall's tau-b (exact p for small n without ties, else the normal
approximation; scipy's `method="auto"`). Inputs must be NaN-free (see `dropna_pairs`), equally
long, non-constant and have n >= 3; otherwise `StatisticsError` is raised.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from numpy.typing import ArrayLike
from scipy import stats

from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import paired_vectors

CorrelationMethod = Literal["pearson", "spearman", "kendall"]
CORRELATION_METHODS: tuple[CorrelationMethod, ...] = ("pearson", "spearman", "kendall")


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient `r`, its two-sided p-value `p`, the number of pairs `n` and the method."""

    r: float
    p: float
    n: int
    method: CorrelationMethod


def pearson(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Pearson's r with the two-sided t-test p-value (n−2 df), as scipy.stats.pearsonr."""
    xs, ys = paired_vectors(x, y)
    result = stats.pearsonr(xs, ys)
    return Correlation(float(result.statistic), float(result.pvalue), len(xs), "pearson")


def spearman(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Spearman's rho (average ranks for ties) with scipy's two-sided t-approximation p-value (n−2 df)."""
    xs, ys = paired_vectors(x, y)
    result = stats.spearmanr(xs, ys)
    return Correlation(float(result.statistic), float(result.pvalue), len(xs), "spearman")


def kendall(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Kendall's tau-b with scipy's two-sided p-value (`method="auto"`)."""
    xs, ys = paired_vectors(x, y)
    result = stats.kendalltau(xs, ys)
    return Correlation(float(result.statistic), float(result.pvalue), len(xs), "kendall")


_BY_NAME: dict[str, Callable[[ArrayLike, ArrayLike], Correlation]] = {
    "pearson": pearson,
    "spearman": spearman,
    "kendall": kendall,
}


def correlation(x: ArrayLike, y: ArrayLike, method: CorrelationMethod) -> Correlation:
    """Dispatch to `pearson`, `spearman` or `kendall` by name (for configuration-driven rules)."""
    try:
        function = _BY_NAME[method]
    except KeyError:
        raise StatisticsError(f"unknown correlation method {method!r}; choose one of {CORRELATION_METHODS}") from None
    return function(x, y)


def correlation_coefficient(method: CorrelationMethod) -> Callable[[ArrayLike, ArrayLike], float]:
    """A function (x, y) -> r for `method`, e.g. as the statistic of `bootstrap_ci`."""
    if method not in _BY_NAME:  # fail now rather than inside a bootstrap loop
        raise StatisticsError(f"unknown correlation method {method!r}; choose one of {CORRELATION_METHODS}")

    def coefficient(x: ArrayLike, y: ArrayLike) -> float:
        return correlation(x, y, method).r

    coefficient.__name__ = f"{method}_r"
    return coefficient
