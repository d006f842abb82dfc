"""UA/LA argument matching and coverage on hand-worked cases, and the matching against networkx."""

from __future__ import annotations

import random

import networkx as nx
import pandas as pd
import pytest

from factlab.errors import DataError
from factlab.models.qasem.evaluation import (
    Argument,
    ArgumentCounts,
    covered_gold,
    iou,
    match_spans,
    score_arguments,
    score_predicate,
)


def test_iou_by_hand() -> None:
    assert iou((0, 4), (2, 6)) == pytest.approx(2 / 6)
    assert iou((0, 2), (2, 4)) == 0.0
    assert iou((3, 5), (3, 5)) == 1.0
    assert iou((0, 10), (0, 3)) == pytest.approx(0.3)


def test_threshold_is_inclusive() -> None:
    # IOU exactly 0.3 matches (the QASem papers' ">= 0.3"); just below does not.
    assert match_spans([(0, 3)], [(0, 10)]) == [(0, 0)]
    assert match_spans([(0, 3)], [(0, 11)]) == []


def test_matching_is_one_to_one_and_maximises_matches() -> None:
    # gold g0=(0,4), g1=(2,5); predicted p0=(1,4): IOU 3/4 with g0, 2/4 with g1; p1=(0,2): 2/4 with g0.
    # Greedy by IOU takes p0-g0 and leaves p1 unmatched; the maximum matching pairs both.
    assert sorted(match_spans([(1, 4), (0, 2)], [(0, 4), (2, 5)])) == [(0, 1), (1, 0)]
    # Two predictions on one gold argument: one match only.
    assert len(match_spans([(0, 2), (0, 3)], [(0, 2)])) == 1


def test_matching_size_equals_networkx_maximum_cardinality_matching() -> None:
    rng = random.Random(7)
    for _ in range(200):

        def spans(n: int) -> list[tuple[int, int]]:
            starts = [rng.randrange(0, 12) for _ in range(n)]
            return list(dict.fromkeys((s, s + rng.randrange(1, 6)) for s in starts))

        predicted, gold = spans(rng.randrange(0, 6)), spans(rng.randrange(0, 6))
        graph = nx.Graph()
        graph.add_edges_from(
            (("p", i), ("g", j)) for i, p in enumerate(predicted) for j, g in enumerate(gold) if iou(p, g) >= 0.3
        )
        expected = len(nx.max_weight_matching(graph, maxcardinality=True))
        pairs = match_spans(predicted, gold)
        assert len(pairs) == expected
        assert len({p for p, _ in pairs}) == len(pairs) == len({g for _, g in pairs})


def test_score_predicate_by_hand() -> None:
    gold = [Argument(0, 2, "R0"), Argument(3, 6, "R1"), Argument(7, 9, "when")]
    predicted = [Argument(0, 2, "R0"), Argument(3, 5, "R2"), Argument(10, 12, "where")]
    counts = score_predicate(predicted, gold)
    # (0,2) exact, (3,5)~(3,6) IOU 2/3, (10,12) unmatched; labels agree for (0,2) only.
    assert counts == ArgumentCounts(n_gold=3, n_pred=3, matched=2, matched_labeled=1)
    assert counts.unlabeled_precision == pytest.approx(2 / 3)
    assert counts.unlabeled_recall == pytest.approx(2 / 3)
    assert counts.unlabeled_f1 == pytest.approx(2 / 3)
    assert counts.labeled_f1 == pytest.approx(1 / 3)


def test_a_span_answering_two_questions_is_one_argument_with_both_roles() -> None:
    gold = [Argument(0, 2, "R0"), Argument(0, 2, "R1")]
    assert score_predicate([Argument(0, 2, "R1")], gold) == ArgumentCounts(1, 1, 1, 1)


def test_score_arguments_uses_gold_predicates_only() -> None:
    gold = {("s1", 3): [Argument(0, 2, "R0"), Argument(4, 6, "R1")], ("s2", 1): [Argument(2, 3, "R1")]}
    predicted = {
        ("s1", 3): [Argument(0, 2, "R0"), Argument(4, 5, "R1")],  # IOU 1/2: both match, both labelled
        ("s1", 7): [Argument(0, 1, "R0")],  # not a gold predicate: ignored
    }  # ("s2", 1) has no prediction: one miss
    counts = score_arguments(predicted, gold)
    assert counts == ArgumentCounts(n_gold=3, n_pred=2, matched=2, matched_labeled=2)
    row = counts.as_row()
    assert row["unlabeled_precision"] == 1.0
    assert row["unlabeled_recall"] == pytest.approx(2 / 3)
    assert row["unlabeled_f1"] == pytest.approx(0.8)
    assert row["labeled_f1"] == pytest.approx(0.8)


def test_empty_denominators_give_zero() -> None:
    counts = score_arguments({}, {("s", 0): [Argument(0, 1, "R0")]})
    assert (counts.unlabeled_precision, counts.unlabeled_recall, counts.unlabeled_f1) == (0.0, 0.0, 0.0)


def test_bad_span_is_an_error() -> None:
    with pytest.raises(DataError):
        score_predicate([Argument(3, 3, "R0")], [])


def test_covered_gold_by_hand() -> None:
    gold = [(("r", 2), (0, 2)), (("r", 2), (0, 2)), (("r", 2), (5, 8)), (("r", 9), (0, 2))]
    predicted = {("r", 2): [(0, 3), (20, 22)], ("r", 4): [(0, 2)]}
    # (0,3)~(0,2): both QAs with that span covered; (5,8) not; predicate 9 has no prediction.
    assert covered_gold(predicted, gold) == [True, True, False, False]


def test_scores_table_puts_the_published_parser_beside() -> None:
    from factlab.paper.qasem_parser_command import qasem_parser_layout as scores_table

    scores = pd.DataFrame(
        {
            "dataset": ["qasrl_gs_test", "qanom_test", "custom"],
            "unlabeled_precision": [0.8, 0.5, 0.1],
            "unlabeled_recall": [0.6, 0.7, 0.2],
            "unlabeled_f1": [0.686, 0.583, 0.133],
            "labeled_f1": [0.5, 0.4, 0.1],
            "n_gold": [10, 20, 3],
            "n_pred": [8, 28, 6],
        }
    )
    detection = pd.DataFrame({"dataset": ["qanom_test", "qasrl_gs_test"], "f1": [0.75, 0.93]})
    bootstrap = pd.DataFrame(  # in another order than the scores, and no interval for the custom set
        {
            "dataset": ["qanom_test", "qanom_test", "qasrl_gs_test", "qasrl_gs_test"],
            "statistic": ["labeled_f1", "unlabeled_f1", "unlabeled_f1", "labeled_f1"],
            "low": [0.35, 0.55, 0.6601, 0.47],
            "high": [0.45, 0.61, 0.7104, 0.53],
        }
    )
    table = scores_table(scores, detection, bootstrap)
    assert list(table["UA-F1 95% CI"]) == ["[0.660, 0.710]", "[0.550, 0.610]", ""]
    assert list(table["LA-F1 95% CI"]) == ["[0.470, 0.530]", "[0.350, 0.450]", ""]
    assert list(table.columns[3:7]) == ["UA-F1", "UA-F1 95% CI", "LA-F1", "LA-F1 95% CI"]
    with pytest.raises(DataError, match=r"key \{'dataset': 'qanom_test', 'statistic': 'labeled_f1'\} \(file table bootstrap.csv"):
        scores_table(scores, detection, pd.concat([bootstrap, bootstrap.head(1)]))
    assert list(table["Test set"]) == ["QA-SRL GS test (verbal)", "QANom test (nominal)", "custom"]
    assert list(table["Predicate F1"][:2]) == [0.93, 0.75] and pd.isna(table["Predicate F1"][2])  # matched by name, not order
    assert list(table["T5-small UA-F1"][:2]) == [0.686, 0.592] and pd.isna(table["T5-small UA-F1"][2])
    assert list(table["Predicted args"]) == [8, 28, 6]
