"""Williams test for two dependent correlations that share the human score (Williams 1959; Graham & Baldwin 2014).

r12 = corr(metric A, human), r13 = corr(metric B, human), r23 = corr(A, B), n items:

    K = 1 − r12² − r13² − r23² + 2·r12·r13·r23
    t = (r12 − r13)·√((n−1)(1+r23)) / √(2K(n−1)/(n−3) + ((r12+r13)²/4)(1−r23)³),   df = n − 3

Variants (named, `variant=`):

* ``"two_sided"`` (default): p = 2·P(T_{n−3} ≥ |t|); `t` keeps the sign of r12 − r13.
* ``"frank_one_sided"``: FRANK's evaluate.py — swap r12 and r13 so that r12 ≥ r13, then
  p = 1 − T.cdf(t). The swap makes t ≥ 0, so this p is exactly half the two-sided p: it tests
  "the larger correlation is larger" after looking at the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from numpy.typing import ArrayLike
from scipy import stats

from factlab.metaeval.correlations import pearson
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import paired_vectors, require_same_length
from factlab.metaeval.partial import residualize
from factlab.metaeval.variants import WILLIAMS_VARIANTS, WilliamsVariant


@dataclass(frozen=True)
class WilliamsResult:
    """Williams t (df = n − 3), its p-value under `variant`, and the correlations used.

    `swapped` is True when the FRANK variant exchanged r12 and r13 (then `r12`/`r13` are as swapped).
    """

    t: float
    p: float
    df: int
    n: int
    variant: WilliamsVariant
    r12: float
    r13: float
    r23: float
    swapped: bool


def _check_correlation(value: float, name: str) -> None:
    if not math.isfinite(value) or abs(value) > 1.0:
        raise StatisticsError(f"{name} = {value!r} is not a correlation in [-1, 1]")


def williams_test(r12: float, r13: float, r23: float, n: int, *, variant: WilliamsVariant = "two_sided") -> WilliamsResult:
    """Williams test of H0: rho12 = rho13 given r23 and n (see the module docstring for the formula)."""
    if variant not in WILLIAMS_VARIANTS:
        raise StatisticsError(f"unknown Williams variant {variant!r}; choose one of {WILLIAMS_VARIANTS}")
    for value, name in ((r12, "r12"), (r13, "r13"), (r23, "r23")):
        _check_correlation(value, name)
    if n <= 3:
        raise StatisticsError(f"the Williams test needs n > 3 (df = n − 3), got n = {n}")
    swapped = variant == "frank_one_sided" and r12 < r13
    if swapped:
        r12, r13 = r13, r12
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    if k <= 0:
        raise StatisticsError(
            f"r12, r13, r23 = {r12}, {r13}, {r23} do not form a positive-definite correlation matrix (K = {k:.3g})"
        )
    denominator = math.sqrt(2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / denominator
    df = n - 3
    if variant == "two_sided":
        p = float(2 * stats.t.sf(abs(t), df))
    else:
        p = float(stats.t.sf(t, df))  # = 1 − T.cdf(t), without cancellation for large t
    return WilliamsResult(t, p, df, n, variant, r12, r13, r23, swapped)


def williams_from_scores(
    human: ArrayLike,
    metric_a: ArrayLike,
    metric_b: ArrayLike,
    *,
    confounders: Sequence[ArrayLike] | None = None,
    variant: WilliamsVariant = "two_sided",
) -> WilliamsResult:
    """Williams test on Pearson correlations computed from the scores (r12: A–human, r13: B–human).

    With `confounders`, all three scores are first residualised on the confounders' one-hot
    dummies (FRANK's mm-correlation mode) and the test uses n − 3 df as FRANK does, without
    subtracting the confounder parameters.
    """
    h, a = paired_vectors(human, metric_a, ("human", "metric_a"), minimum=4)
    _, b = paired_vectors(human, metric_b, ("human", "metric_b"), minimum=4)
    require_same_length(human=h, metric_a=a, metric_b=b)
    if confounders is not None:
        h, a, b = (residualize(values, confounders) for values in (h, a, b))
    r12, r13, r23 = pearson(a, h).r, pearson(b, h).r, pearson(a, b).r
    return williams_test(r12, r13, r23, len(h), variant=variant)
