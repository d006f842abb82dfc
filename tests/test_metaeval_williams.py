"""Williams test: a value worked by hand, the one-/two-sided relation, FRANK's swap, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from factlab.metaeval import StatisticsError, pearson, residualize, williams_from_scores, williams_test


def _hand_williams_t(r12: float, r13: float, r23: float, n: int) -> float:
    """The formula of methods.md §2, written out independently of the implementation."""
    k = 1 - r12 * r12 - r13 * r13 - r23 * r23 + 2 * r12 * r13 * r23
    top = (r12 - r13) * math.sqrt((n - 1) * (1 + r23))
    bottom = math.sqrt(2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
    return top / bottom


def test_williams_matches_hand_computation():
    # K = 1 − .25 − .09 − .16 + 2·.5·.3·.4 = 0.62
    # t = 0.2·√(99·1.4) / √(2·0.62·99/97 + (0.8²/4)·0.6³) = 2.35458 / 1.14023 ≈ 2.0650
    result = williams_test(0.5, 0.3, 0.4, 100)
    assert result.t == pytest.approx(_hand_williams_t(0.5, 0.3, 0.4, 100), rel=1e-12)
    assert result.t == pytest.approx(2.0650, abs=5e-4)
    assert result.df == 97
    assert result.p == pytest.approx(2 * (1 - stats.t.cdf(2.0649936, 97)), rel=1e-5)
    assert result.variant == "two_sided" and not result.swapped


def test_frank_one_sided_is_half_the_two_sided_p_and_swaps():
    two_sided = williams_test(0.3, 0.5, 0.4, 100)
    assert two_sided.t == pytest.approx(-2.0649936, rel=1e-6)  # sign of r12 − r13 kept
    frank = williams_test(0.3, 0.5, 0.4, 100, variant="frank_one_sided")
    assert frank.swapped and (frank.r12, frank.r13) == (0.5, 0.3)
    assert frank.t == pytest.approx(-two_sided.t)
    assert frank.p == pytest.approx(1 - stats.t.cdf(frank.t, 97))  # FRANK: p = 1 − T.cdf(t)
    assert frank.p == pytest.approx(two_sided.p / 2)
    assert williams_test(0.5, 0.3, 0.4, 100, variant="frank_one_sided").p == pytest.approx(frank.p)


def test_equal_correlations_give_t_zero():
    result = williams_test(0.4, 0.4, 0.6, 50)
    assert result.t == 0.0 and result.p == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0.5, 0.3, 0.4, 3), "n > 3"),
        ((1.2, 0.3, 0.4, 50), r"in \[-1, 1\]"),
        ((0.5, float("nan"), 0.4, 50), r"in \[-1, 1\]"),
        ((0.9, -0.9, 0.9, 50), "positive-definite"),
    ],
)
def test_invalid_williams_inputs_raise(args, message):
    with pytest.raises(StatisticsError, match=message):
        williams_test(*args)
    with pytest.raises(StatisticsError, match="unknown Williams variant"):
        williams_test(0.5, 0.3, 0.4, 100, variant="one_sided")  # type: ignore[arg-type]


def test_williams_from_scores_uses_pearson_and_frank_residuals():
    rng = np.random.default_rng(3)
    n = 90
    system = rng.choice(["a", "b", "c"], n)
    human = rng.normal(size=n) + (system == "a")
    metric_a = human + rng.normal(size=n)
    metric_b = human + 2 * rng.normal(size=n) - (system == "b")
    result = williams_from_scores(human, metric_a, metric_b)
    r12, r13, r23 = pearson(metric_a, human).r, pearson(metric_b, human).r, pearson(metric_a, metric_b).r
    assert result.t == pytest.approx(_hand_williams_t(r12, r13, r23, n))
    partial = williams_from_scores(human, metric_a, metric_b, confounders=[system], variant="frank_one_sided")
    h, a, b = (residualize(v, [system]) for v in (human, metric_a, metric_b))
    r12, r13, r23 = pearson(a, h).r, pearson(b, h).r, pearson(a, b).r
    assert partial.t == pytest.approx(abs(_hand_williams_t(r12, r13, r23, n)))
    with pytest.raises(StatisticsError, match="length mismatch"):
        williams_from_scores(human, metric_a, metric_b[:-1])
