"""Rule-based copular QAs: hand sentences, and the QASemConsistency gold copular QAs they recover."""

from __future__ import annotations

import pandas as pd

from factlab.data.registry import get_spec
from factlab.models.qasem.analysis import analyse
from factlab.models.qasem.copular import copular_qas
from factlab.models.qasem.evaluation import covered_gold


def questions(sentence: str) -> list[tuple[str, str, int]]:
    (doc,) = analyse([sentence.split(" ")])
    return [(qa.question, qa.answer, qa.predicate.index) for qa in copular_qas(doc)]


def test_nominal_complements_and_their_conjuncts() -> None:
    assert questions("David Wenham is an Australian actor , producer and director .") == [
        ("Who is an Australian actor?", "David Wenham", 2),
        ("Who is a producer?", "David Wenham", 2),
        ("Who is a director?", "David Wenham", 2),
    ]


def test_adverbs_negation_and_auxiliaries_stay_in_the_question() -> None:
    assert questions("She was not happy .") == [("Who was not happy?", "She", 1)]
    assert questions("He has been on the air in Cleveland since 1978 .") == [
        ("Who has been on the air in Cleveland since 1978?", "He", 2)
    ]


def test_no_qa_for_expletives_or_auxiliary_be() -> None:
    assert questions("There is a cat .") == []
    assert questions("The cat was chased by a dog .") == []  # passive auxiliary, not a copula


def test_qa_metadata() -> None:
    (doc,) = analyse(["Paris is a city .".split(" ")])
    (qa,) = copular_qas(doc)
    assert (qa.question, qa.answer, qa.answer_start, qa.answer_end) == ("What is a city?", "Paris", 0, 1)
    assert qa.predicate.verb_form == "be" and qa.predicate.is_verbal
    assert (qa.source, qa.role, qa.slots) == ("copular_rule", "copula", None)


def test_recovers_most_qasem_consistency_copular_qas(raw) -> None:
    """The 174 copular gold QAs (FActScore, 36 responses): same "be" token and an answer span
    matched at IOU >= 0.3. Measured: 152 / 174 = 87.4%."""
    responses = get_spec("qasem_consistency").build(raw).frame
    qas = get_spec("qasem_consistency_qas").build(raw).frame
    copular = qas[qas["copula"].eq(True)]
    assert len(copular) == 174
    responses = responses[responses["example_id"].isin(set(copular["doc_id"]))]
    predicted: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for row in responses.itertuples():
        sentences = [sentence.split(" ") for sentence in row.sentences]
        offset = 0
        for tokens, doc in zip(sentences, analyse(sentences), strict=True):
            for qa in copular_qas(doc):
                predicted.setdefault((row.example_id, offset + qa.predicate.index), []).append(
                    (offset + qa.answer_start, offset + qa.answer_end)
                )
            offset += len(tokens)
    gold = [
        ((row.doc_id, int(row.predicate_idx)), tuple(int(part) for part in row.answer_idx.split("-")))
        for row in copular.itertuples()
    ]
    covered = pd.Series(covered_gold(predicted, gold))
    assert int(covered.sum()) >= 152
