"""Williams test: values worked by hand (the example of psych::paired.r's documentation, r = .5, .3,
.4, n = 100), the one-/two-sided relation, FRANK's swap, the score-level wrapper, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from factlab.metaeval import StatisticsError, pearson, williams_from_scores, williams_test


def test_williams_matches_hand_computation():
    # K = 1 − .25 − .09 − .16 + 2·.5·.3·.4 = 0.62
    # t = 0.2·√(99·1.4) / √(2·0.62·99/97 + (0.8²/4)·0.6³) = 2.354570 / √(1.265567 + 0.034560) = 2.354570 / 1.140231
    #   = 2.064994, df = 97
    result = williams_test(0.5, 0.3, 0.4, 100)
    assert result.t == pytest.approx(2.064994, abs=2e-6)
    assert result.df == 97
    assert result.p == pytest.approx(2 * stats.t.sf(2.064994, 97), rel=1e-5)
    assert result.variant == "two_sided" and not result.swapped


def test_williams_with_uncorrelated_metrics_worked_by_hand():
    # r23 = 0: K = 1 − .36 − .04 = 0.6; t = 0.4·√27 / √(2·0.6·27/25 + 0.8²/4) = 2.078461 / √1.456 = 1.722508, df 25.
    result = williams_test(0.6, 0.2, 0.0, 28)
    assert (result.t, result.df) == (pytest.approx(1.722508, abs=2e-6), 25)


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
    assert result == williams_test(r12, r13, r23, n)
    # With a confounder: FRANK's residuals are each score minus its system's mean (computed here with pandas).
    partial = williams_from_scores(human, metric_a, metric_b, confounders=[system], variant="frank_one_sided")
    frame = pd.DataFrame({"h": human, "a": metric_a, "b": metric_b, "system": system})
    demeaned = frame[["h", "a", "b"]] - frame.groupby("system")[["h", "a", "b"]].transform("mean")
    r = demeaned.corr()
    expected = williams_test(r.loc["a", "h"], r.loc["b", "h"], r.loc["a", "b"], n, variant="frank_one_sided")
    assert (partial.t, partial.p, partial.df) == (pytest.approx(expected.t, rel=1e-10), pytest.approx(expected.p, rel=1e-8), 87)
    assert partial.t >= 0 and partial.swapped == expected.swapped
    with pytest.raises(StatisticsError, match="length mismatch"):
        williams_from_scores(human, metric_a, metric_b[:-1])
