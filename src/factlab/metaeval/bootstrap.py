"""Bootstrap confidence intervals that resample documents (groups), not rows.

When a document has several outputs (FRANK: up to 9 system summaries per article; QAGS: several
summary sentences), rows of one document are dependent. Resampling rows then understates the
variance; here a bootstrap sample draws *documents* with replacement and takes all their rows.
With `groups=None` every row is its own group (the ordinary bootstrap).

Conventions: percentile intervals (the α/2 and 1 − α/2 quantiles of the bootstrap
distribution, numpy's default linear interpolation); an explicit, seeded
`numpy.random.Generator` is required so that results are reproducible. A resample on which the
statistic is undefined (raises `StatisticsError`, e.g. a constant resampled score) is skipped
and counted in `n_invalid`; more than `max_invalid_share` of them raises.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import as_category_vector, require_min_n

Statistic = Callable[..., float]


@dataclass(frozen=True)
class BootstrapCI:
    """Estimate on the full data and its percentile bootstrap interval [low, high]."""

    estimate: float
    low: float
    high: float
    confidence: float
    n: int
    n_groups: int
    n_resamples: int
    n_invalid: int


@dataclass(frozen=True)
class BootstrapDistribution:
    """The statistic on each valid resample, and how many resamples were skipped as undefined."""

    values: NDArray[np.float64]
    n_groups: int
    n_resamples: int
    n_invalid: int


class GroupResampler:
    """Draws bootstrap row indices by resampling groups (documents) with replacement."""

    def __init__(self, groups: ArrayLike | None, n: int) -> None:
        if groups is None:
            self.members: list[NDArray[np.intp]] = [np.array([i], dtype=np.intp) for i in range(n)]
        else:
            labels = as_category_vector(groups, "groups")
            if len(labels) != n:
                raise StatisticsError(f"length mismatch: groups has {len(labels)} rows, the data {n}")
            _, codes = np.unique(labels.astype(str), return_inverse=True)
            order = np.argsort(codes, kind="stable")
            boundaries = np.flatnonzero(np.diff(codes[order])) + 1
            self.members = list(np.split(order.astype(np.intp), boundaries))
        require_min_n(len(self.members), 2, "a bootstrap over groups")

    @property
    def n_groups(self) -> int:
        return len(self.members)

    def draw(self, rng: np.random.Generator) -> NDArray[np.intp]:
        """Row indices of one bootstrap sample: n_groups groups drawn with replacement, all their rows."""
        chosen = rng.integers(0, self.n_groups, size=self.n_groups)
        return np.concatenate([self.members[g] for g in chosen])


def require_generator(rng: Any) -> np.random.Generator:
    """Raise unless `rng` is a numpy Generator (seeded by the caller, e.g. np.random.default_rng(2022))."""
    if not isinstance(rng, np.random.Generator):
        raise StatisticsError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    return rng


def _aligned_arrays(arrays: tuple[ArrayLike, ...]) -> tuple[NDArray[Any], ...]:
    if not arrays:
        raise StatisticsError("bootstrap needs at least one data array")
    converted = tuple(np.asarray(a.to_numpy() if hasattr(a, "to_numpy") else a) for a in arrays)  # type: ignore[union-attr]
    lengths = {len(a) for a in converted}
    if len(lengths) > 1:
        raise StatisticsError(f"length mismatch between bootstrap arrays: {[len(a) for a in converted]}")
    return converted


def bootstrap_distribution(
    statistic: Statistic,
    *arrays: ArrayLike,
    groups: ArrayLike | None = None,
    n_resamples: int = 1000,
    rng: np.random.Generator,
    max_invalid_share: float = 0.1,
) -> BootstrapDistribution:
    """`statistic(*resampled_arrays)` on `n_resamples` group-bootstrap samples of the aligned `arrays`."""
    require_generator(rng)
    if n_resamples < 1:
        raise StatisticsError(f"n_resamples must be positive, got {n_resamples}")
    data = _aligned_arrays(arrays)
    resampler = GroupResampler(groups, len(data[0]))
    values: list[float] = []
    n_invalid = 0
    for _ in range(n_resamples):
        rows = resampler.draw(rng)
        try:
            values.append(float(statistic(*(a[rows] for a in data))))
        except StatisticsError:
            n_invalid += 1
    if n_invalid > max_invalid_share * n_resamples:
        raise StatisticsError(
            f"the statistic was undefined on {n_invalid} of {n_resamples} bootstrap resamples "
            f"(more than {max_invalid_share:.0%}); the data are too degenerate for a bootstrap interval"
        )
    return BootstrapDistribution(np.asarray(values), resampler.n_groups, n_resamples, n_invalid)


def percentile_interval(values: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    """The (α/2, 1 − α/2) quantiles of `values` for α = 1 − confidence."""
    if not 0.0 < confidence < 1.0:
        raise StatisticsError(f"confidence must be in (0, 1), got {confidence}")
    alpha = 1.0 - confidence
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def bootstrap_ci(
    statistic: Statistic,
    *arrays: ArrayLike,
    groups: ArrayLike | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    rng: np.random.Generator,
    max_invalid_share: float = 0.1,
) -> BootstrapCI:
    """Percentile bootstrap CI of `statistic(*arrays)`, resampling `groups` (documents) when given.

    Example: ``bootstrap_ci(correlation_coefficient("pearson"), metric, human, groups=doc_id,
    rng=np.random.default_rng(2022))``.
    """
    data = _aligned_arrays(arrays)
    estimate = float(statistic(*data))
    distribution = bootstrap_distribution(
        statistic, *data, groups=groups, n_resamples=n_resamples, rng=rng, max_invalid_share=max_invalid_share
    )
    low, high = percentile_interval(distribution.values, confidence)
    return BootstrapCI(
        estimate=estimate,
        low=low,
        high=high,
        confidence=confidence,
        n=len(data[0]),
        n_groups=distribution.n_groups,
        n_resamples=n_resamples,
        n_invalid=distribution.n_invalid,
    )
