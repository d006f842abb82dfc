"""The correction analysis (factlab.metaeval.correction): per-system shares, over-correction and ROUGE-L worked by
hand, and the exact-restore counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from factlab.metaeval.correction import restore_rows, rouge_l, system_rows, wilson_interval
from factlab.metaeval.errors import StatisticsError


def test_rouge_l_worked_by_hand():
    # longest common subsequence "the cat sat on mat": 5 of 6 words on each side
    assert rouge_l("the cat sat on the mat", "the cat sat on a mat") == pytest.approx(5 / 6)
    assert rouge_l("Smith won in 2013.", "Smith won in 2013.") == pytest.approx(1.0)


def test_system_rows_worked_by_hand():
    frame = pd.DataFrame(
        {
            "system": ["a", "a", "a", "b", "b"],
            "label": [1, 1, 0, 0, 1],
            "changed": [True, False, True, False, False],
            "judge_before": [0.2, 0.9, 0.1, 0.3, 0.8],
            "judge_after": [0.7, 0.9, 0.4, 0.3, 0.8],
            "rouge_l": [0.8, 1.0, 0.6, 1.0, 1.0],
        }
    )
    rows = system_rows(frame, judge_threshold=0.5).set_index("system")
    # a: consistent before 1 of 3 (0.9), after 2 of 3 (0.7, 0.9); one of its two human-consistent outputs changed
    assert rows.loc["a", ["judge_consistent_before", "judge_consistent_after"]].tolist() == pytest.approx([1 / 3, 2 / 3])
    assert rows.loc["a", "over_correction"] == pytest.approx(0.5)
    assert rows.loc["a", "n_over_corrected"] == 1
    # Wilson's 95% interval of 1 in 2 by hand: centre (0.5 + z²/4) / (1 + z²/2) = 0.5, half-width
    # z / (1 + z²/2) * sqrt(0.25/2 + z²/16) = 0.4055 with z = 1.95996
    assert rows.loc["a", ["over_correction_ci_low", "over_correction_ci_high"]].tolist() == pytest.approx(
        [0.0945, 0.9055], abs=1e-4
    )
    assert rows.loc["a", "rouge_l_changed"] == pytest.approx(0.7)  # mean of the two changed outputs
    assert rows.loc["b", "n_changed"] == 0 and np.isnan(rows.loc["b", "rouge_l_changed"])
    assert rows.loc["all", ["n_outputs", "n_changed", "n_human_consistent"]].tolist() == [5, 2, 3]
    assert rows.loc["all", "over_correction"] == pytest.approx(1 / 3)
    with pytest.raises(StatisticsError, match="lacks"):
        system_rows(frame.drop(columns="rouge_l"), 0.5)


@pytest.mark.parametrize(("successes", "n"), [(2, 10), (10, 41), (0, 7), (7, 7), (45, 567)])
def test_wilson_interval_matches_scipy(successes, n):
    from scipy.stats import binomtest

    expected = binomtest(successes, n).proportion_ci(confidence_level=0.9, method="wilson")
    assert wilson_interval(successes, n, 0.9) == pytest.approx((expected.low, expected.high), abs=1e-12)


def test_wilson_interval_without_outputs_is_nan():
    assert all(np.isnan(wilson_interval(0, 0, 0.95)))


def test_restore_counts():
    rows = restore_rows(
        ["entity_swap", "entity_swap", "number_swap"],
        ["EntE", "EntE", "CircE"],
        [True, True, False],
        ["Jones won.", "Jones  won in 2013.", "Smith won in 2015."],
        ["Smith won.", "Brown won in 2013.", "Smith won in 2015."],
        ["Smith  won.", "Smith won in 2013.", "Smith won in 2013."],
    )
    by_transform = {row.transform: row for row in rows}
    # the first restored (whitespace aside), the second changed to a wrong name, the number not flagged
    assert (by_transform["entity_swap"].n_changed, by_transform["entity_swap"].n_restored) == (2, 1)
    assert by_transform["entity_swap"].restore_rate == pytest.approx(0.5)
    assert (by_transform["number_swap"].n_flagged, by_transform["number_swap"].n_restored) == (0, 0)
