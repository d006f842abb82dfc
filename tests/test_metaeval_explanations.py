"""Whether explanations point at unsupported gold QAs (factlab.metaeval.explanations): offsets, chance and shares
worked by hand, and on QAs cut from QASemConsistency (tests/fixtures/qasem_consistency_cut) spans read from the
annotators' own answer strings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from factlab.checker.pipeline.explanation_command import chosen_responses, pointing_frames
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.explanations import (
    QaElements,
    answer_range,
    chance_hit,
    qa_elements,
    response_rows,
    summary_rows,
    token_offsets,
)

CUT = Path(__file__).parent / "fixtures" / "qasem_consistency_cut" / "qas.parquet"
RESPONSE = 'Laura Muir says she is " gutted "'  # tokens: Laura 0, Muir 1, says 2, she 3, is 4, " 5, gutted 6, " 7


def test_token_offsets_by_hand():
    assert token_offsets("a bb c") == [(0, 1), (2, 4), (5, 6)]
    offsets = token_offsets(RESPONSE)
    assert [RESPONSE[start:end] for start, end in offsets] == RESPONSE.split(" ")


def test_answer_range_is_exclusive_and_rejects_bad_values():
    assert answer_range("0-2") == (0, 2)
    for bad in ("2-2", "a-b", "3"):
        with pytest.raises(StatisticsError):
            answer_range(bad)
    with pytest.raises(StatisticsError):
        qa_elements(9, "0-2", n_tokens=8)


def test_chance_by_hand():
    assert chance_hit(1, {2}, 4) == pytest.approx(1 / 4)
    assert chance_hit(2, {2}, 4) == pytest.approx(2 / 3)  # windows 0-1, 1-2, 2-3: two hold token 2
    assert chance_hit(9, {2}, 4) == 1.0
    assert chance_hit(1, set(), 4) == 0.0


def test_response_rows_by_hand():
    said = QaElements(predicate=2, answer=(0, 2))  # who says something? Laura Muir: unsupported
    gutted = QaElements(predicate=6, answer=(3, 4))  # who is gutted? she: supported
    muir = (RESPONSE.index("Muir"), RESPONSE.index("Muir") + 4)
    quote = (RESPONSE.index("gutted"), RESPONSE.index("gutted") + 6)
    qas, spans = response_rows(RESPONSE, [quote, muir], [(said, False), (gutted, True)])
    assert qas[0] == {"supported": False, "span": 1, "pointed": True, "pointed_predicate": False, "pointed_answer": True}
    assert qas[1]["supported"] and not qas[1]["pointed"]
    # tokens 0, 1, 2 are an unsupported QA's: one-token windows hit 3 of 8 positions
    assert spans == [{"on_unsupported": 0.0, "chance": 3 / 8}, {"on_unsupported": 1.0, "chance": 3 / 8}]


def test_summary_rows_by_hand():
    responses = pd.DataFrame({"split": ["test"] * 3, "task": ["a", "a", "b"], "response": ["r1", "r2", "r3"]})
    qas = pd.DataFrame(
        {
            "split": "test",
            "task": ["a", "a", "a", "b", "b"],
            "response": ["r1", "r1", "r2", "r3", "r3"],
            "supported": [False, False, False, False, True],
            "pointed": [True, False, True, False, False],
            "pointed_predicate": [True, False, False, False, False],
            "pointed_answer": [False, False, True, False, False],
        }
    )
    spans = pd.DataFrame(
        {
            "split": "test",
            "task": ["a", "a", "b"],
            "response": ["r1", "r2", "r3"],
            "on_unsupported": [1.0, 0.0, 0.0],
            "chance": [0.5, 0.25, 0.75],
        }
    )
    rows = summary_rows(responses, qas, spans, resamples=200, confidence=0.95, seed=1).set_index("task")
    assert rows.loc["a", ["n_responses", "n_unsupported_qas", "n_explanations"]].tolist() == [2, 3, 2]
    assert rows.loc["a", "coverage"] == pytest.approx(2 / 3)
    assert rows.loc["a", "coverage_predicate"] == pytest.approx(1 / 3)
    assert rows.loc["all", "n_unsupported_qas"] == 4  # the supported QA of r3 is not counted
    assert rows.loc["all", "coverage"] == pytest.approx(2 / 4)
    assert rows.loc["all", "precision"] == pytest.approx(1 / 3)
    assert rows.loc["all", "chance_precision"] == pytest.approx(0.5)
    assert rows.loc["all", "coverage_ci_low"] <= 0.5 <= rows.loc["all", "coverage_ci_high"]
    assert np.isnan(rows.loc["b", "coverage_ci_low"])  # one response: no interval


def test_spans_on_the_annotators_answers_point_at_every_unsupported_qa():
    """Spans at the characters of each unsupported QA's answer string (found in the response by text, not by the
    token indices the module reads; answers the response holds once) point at those QAs and are all on one."""
    qas = pd.read_parquet(CUT)
    responses = chosen_responses(qas, None)
    spans = {}
    for response in responses.itertuples(index=False):
        unsupported = qas[(qas["doc_id"] == response.doc_id) & (qas["label"] == 0)]
        found = []
        for qa in unsupported.itertuples(index=False):
            padded = f" {response.response} "
            start = padded.find(f" {qa.answer} ")
            if start >= 0 and padded.count(f" {qa.answer} ") == 1:
                found.append({"start": start, "end": start + len(qa.answer), "text": qa.answer, "explanation": "x"})
        spans[response.doc_id] = found
    qa_frame, span_frame = pointing_frames(responses, qas, spans, str(CUT))
    assert len(qa_frame) == len(qas)
    assert span_frame["on_unsupported"].eq(1.0).all() and len(span_frame) > 0
    unsupported = qa_frame[~qa_frame["supported"]]
    marked = {(doc_id, span["text"]) for doc_id, found in spans.items() for span in found}
    pointed_at = {(row.response, row.answer) for row in unsupported.itertuples() if row.pointed}
    assert len(marked) >= 10 and marked <= pointed_at


def test_bad_token_indices_are_named_all_at_once():
    qas = pd.read_parquet(CUT)
    qas.loc[qas.index[:2], "answer_idx"] = "900-901"
    responses = chosen_responses(qas, None)
    with pytest.raises(Exception, match=r"2 QA\(s\) with tokens outside") as error:
        pointing_frames(responses, qas, {doc_id: [] for doc_id in responses["doc_id"]}, str(CUT))
    assert str(CUT) in str(error.value)


def test_chosen_responses_take_the_first_of_each_split():
    qas = pd.read_parquet(CUT)
    chosen = chosen_responses(qas, 1)
    assert chosen.groupby("split").size().to_dict() == {split: 1 for split in sorted(qas["split"].unique())}
    assert chosen["doc_id"].tolist() == [qas[qas["split"] == split]["doc_id"].min() for split in sorted(qas["split"].unique())]
