"""The parser evaluation's statistics, against values worked by hand: argument counts per sentence,
and the sentence bootstrap of F1 over pooled counts."""

from __future__ import annotations

import pandas as pd
import pytest

from factlab.metaeval.analyses.qasem_parser_command import bootstrap_rows, sentence_counts
from factlab.models.qasem.evaluation import Argument


def argument(start: int, end: int, role: str = "who") -> Argument:
    return Argument(start, end, role)


def test_sentence_counts_pool_the_predicates_of_each_sentence():
    gold = {
        ("s1", 1): [argument(0, 1), argument(3, 5, "what")],
        ("s1", 4): [argument(5, 7)],
        ("s2", 0): [argument(1, 2)],
    }
    predicted = {
        ("s1", 1): [argument(0, 1), argument(3, 5, "when")],  # both spans match; one role does
        ("s2", 0): [argument(6, 8)],  # no overlap
    }
    counts = sentence_counts(predicted, gold, threshold=0.3).set_index("sentence_id")
    # s1: gold 2 + 1 = 3, predicted 2, matched 2, labelled 1; s2: gold 1, predicted 1, nothing matched
    assert counts.loc["s1"].tolist() == [3, 2, 2, 1]
    assert counts.loc["s2"].tolist() == [1, 1, 0, 0]


def test_bootstrap_over_two_sentences():
    # s1 alone: F1 1; s2 alone: F1 0; one of each: matched 2 of 4 predicted and 4 gold, F1 0.5.
    # Resampling 2 sentences: F1 = 1 with probability 1/4, 0.5 with 1/2, 0 with 1/4.
    per_sentence = pd.DataFrame(
        {"sentence_id": ["s1", "s2"], "n_gold": [2, 2], "n_pred": [2, 2], "matched": [2, 0], "matched_labeled": [2, 0]}
    )
    rows = {row["statistic"]: row for row in bootstrap_rows("qanom_test", per_sentence, 4000, 0.95, seed=7)}
    unlabeled = rows["unlabeled_f1"]
    assert unlabeled["estimate"] == 0.5
    assert (unlabeled["low"], unlabeled["high"]) == (0.0, 1.0)  # both tails hold 1/4 > 2.5%
    # above the published 0.592 only when both draws are s1: 1/4
    assert unlabeled["published_t5_small"] == 0.592
    assert unlabeled["share_above_published"] == pytest.approx(0.25, abs=0.03)
    assert pd.isna(rows["labeled_f1"]["share_above_published"])
