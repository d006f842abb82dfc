"""QANom QA statements (training benchmark qanom_qa), checked against the QANom table itself."""

from __future__ import annotations

import pandas as pd
import pytest
from damaged_copies import check_nli_schema

from factlab.data.adapters import qanom_qa
from factlab.data.adapters.qanom_qa import adapt_qanom_qa, covered_tokens, qa_statement_rows, statements, wrong_answers
from factlab.data.adapters.qasrl import adapt_qanom
from factlab.data.registry import builtin_specs
from factlab.data.spec import Built
from factlab.errors import DataError

SENTENCE = "Wiki1k:wikipedia:19022:24:0"  # "Since accurate measurement is essential in many fields , ..."


@pytest.fixture(scope="module")
def qanom_train(raw) -> pd.DataFrame:
    table = adapt_qanom(raw).frame
    return table[(table["split"] == "train") & (table["question"] != "")]


@pytest.fixture(scope="module")
def built(raw):
    return adapt_qanom_qa(raw)


def test_spec_is_a_training_benchmark_on_qanom():
    spec = builtin_specs()["qanom_qa"]
    assert (spec.role, spec.kind, spec.datasets) == ("training", "benchmark", ("qanom",))


def test_rows_are_balanced_pairs_and_counted(built, qanom_train):
    frame = check_nli_schema(built.frame, "qanom_qa", {"entailment", "not_entailment"})
    counts = built.counts
    assert counts["read_qas"] == len(qanom_train) == 15_871
    assert counts["predicates"] == qanom_train["key"].nunique()
    kept = counts["predicates"] - counts["dropped_no_wrong_answer"]
    assert counts["kept_right"] + counts["kept_swapped"] + counts["dropped_duplicate"] == 2 * kept
    assert len(frame) == counts["kept_right"] + counts["kept_swapped"] and frame["example_id"].is_unique
    # the duplicates: two nouns of one verb giving the same QA (a few dozen)
    assert 0 < counts["dropped_duplicate"] < 100
    assert set(frame["split"]) == {"train"} and set(frame["system"]) == {"qanom"}
    # no (sentence, statement) twice, so none with both labels
    assert not frame.duplicated(["source", "output"]).any()
    pairs = frame.groupby("qa_id")
    assert (pairs.size() <= 2).all() and (pairs["source"].nunique() == 1).all() and (pairs["question"].nunique() == 1).all()
    assert (frame["label"] == (frame["answer_kind"] == "right")).all()
    # one QA per predicate: the qa_id's predicate key is never repeated across pairs
    keys = frame["qa_id"].str.rsplit("_q", n=1).str[0]
    assert keys.groupby(frame["qa_id"]).first().is_unique


def test_answers_come_from_the_qanom_annotation(built, qanom_train):
    """Right answers are the QA's own first answer; swapped ones another QA's of the sentence, on other tokens."""
    by_qa = qanom_train.set_index("qa_id")
    by_sentence = {sentence: list(rows.itertuples()) for sentence, rows in qanom_train.groupby("sentence")}
    roles = ["verb_form", "wh", "subj", "obj", "prep", "obj2", "is_passive", "is_negated"]  # the question without its tense
    made = {
        sentence: {
            (tuple(str(getattr(r, k)).lower() for k in roles), a.lower().removeprefix("the ")) for r in rows for a in r.answers
        }
        for sentence, rows in by_sentence.items()
    }
    frame = built.frame
    for row in frame.itertuples():
        qa = by_qa.loc[row.qa_id]
        assert row.source == qa["sentence"] and row.question == qa["question"]
        assert row.output == f"{qa['question']} {row.answer}"
        if row.answer_kind == "right":
            assert row.answer == qa["answers"][0]
            continue
        donors = [r for r in by_sentence[qa["sentence"]] if r.qa_id != row.qa_id and r.answers[0] == row.answer]
        assert donors, row.qa_id
        own = {t for start, end in qa["answer_ranges"] for t in range(start, end)}
        assert any(not own & {t for start, end in d.answer_ranges for t in range(start, end)} for d in donors)
        assert row.answer.casefold() not in {a.casefold() for a in qa["answers"]}
        # a donor from another predicate is of another verb
        assert any(d.key == qa["key"] or d.verb_form != qa["verb_form"] for d in donors)
        # no QA of the sentence makes the swapped statement
        statement = (tuple(str(qa[k]).lower() for k in roles), row.answer.lower().removeprefix("the "))
        assert statement not in made[qa["sentence"]], row.qa_id


def test_a_worked_sentence(built):
    """Tokens: Since(0) accurate(1) measurement(2) is(3) essential(4) in(5) many(6) fields(7) , ... measurements(12)."""
    rows = built.frame[built.frame["qa_id"].str.startswith(f"{SENTENCE}_")]
    outputs = dict(zip(rows["qa_id"] + "/" + rows["answer_kind"], rows["output"], strict=True))
    # predicate 15 ("approximations") has one QA: its wrong answer comes from predicate 2's QAs
    assert outputs[f"{SENTENCE}_15_q0/right"] == "What is approximated? measurements"
    wrong = outputs[f"{SENTENCE}_15_q0/swapped"]
    assert wrong in {"What is approximated? accurate measurement", "What is approximated? in many fields"}
    # predicate 2 ("measurement") has two QAs on disjoint tokens: the chosen one takes the other's answer
    pair = {outputs[k] for k in outputs if k.startswith(f"{SENTENCE}_2_")}
    assert pair in (
        {"Where is something measured? in many fields", "Where is something measured? accurate measurement"},
        {"How is something measured? accurate measurement", "How is something measured? in many fields"},
    )


def test_an_overlapping_answer_is_never_wrong(qanom_train):
    """Two QAs of a real sentence whose answers overlap: neither is offered as the other's wrong answer."""
    rows = {row["qa_id"]: row for row in qanom_train[qanom_train["sentence_id"] == SENTENCE].to_dict("records")}
    qa = dict(rows[f"{SENTENCE}_2_q0"])  # answer tokens [1, 3): "accurate measurement"
    assert covered_tokens(qa["answer_ranges"]) == {1, 2}
    others = [rows[f"{SENTENCE}_2_q1"], rows[f"{SENTENCE}_15_q0"]]
    assert wrong_answers(qa, others) == ["in many fields", "measurements"]
    qa["answer_ranges"] = [[5, 6]]  # now sharing token 5 with "in many fields" [5, 8)
    assert wrong_answers(qa, others) == ["measurements"]
    qa["answers"] = ["Measurements"]  # the same text, in another case
    assert wrong_answers(qa, others) == []


def test_a_statement_of_the_sentence_is_never_wrong_and_a_candidate_is_offered_once(qanom_train):
    """A candidate whose statement some QA of the sentence makes, in any tense, is true, so not wrong; the same
    answer in another case or with an article is the same candidate."""
    sentence = "Wiki1k:wikinews:1781588:1:10"  # "This is support that Iberocoop gets and all other Wikimedians can get ."
    rows = {row["qa_id"]: row for row in qanom_train[qanom_train["sentence_id"] == sentence].to_dict("records")}
    present, modal = rows[f"{sentence}_2_q1"], rows[f"{sentence}_2_q0"]
    assert (present["question"], present["answers"], modal["question"]) == (
        "Who is supported?",
        ["Iberocoop"],
        "Who can be supported?",
    )
    assert wrong_answers(present, [modal]) == ["all other Wikimedians"]
    assert wrong_answers(present, [modal], statements([present, modal])) == []  # "Who can be supported? all other Wikimedians"
    rows = {row["qa_id"]: row for row in qanom_train[qanom_train["sentence_id"] == SENTENCE].to_dict("records")}
    qa = rows[f"{SENTENCE}_2_q0"]
    others = [rows[f"{SENTENCE}_2_q1"], rows[f"{SENTENCE}_15_q0"]]
    shouted = dict(rows[f"{SENTENCE}_15_q0"], answers=["The MEASUREMENTS"])
    assert wrong_answers(qa, [*others, shouted]) == ["in many fields", "measurements"]
    assert wrong_answers(qa, others, statements([dict(qa, answers=["the in many fields"])])) == ["measurements"]


def test_a_sentence_under_two_ids_is_one_sentence(qanom_train):
    """QANom lists a few sentences under two ids: their predicates are pooled, so a wrong answer may come from
    the other id's QAs, and what the sentence states is checked across both."""
    qas = qanom_train[qanom_train["sentence_id"] == SENTENCE]
    rows, counts = qa_statement_rows(qas, file="annot.train.csv")
    split = qas.assign(sentence_id=qas["sentence_id"].where(qas["predicate_idx"] != 15, "another id"))
    rows_split, counts_split = qa_statement_rows(split, file="annot.train.csv")
    assert counts_split == counts and [r["output"] for r in rows_split] == [r["output"] for r in rows]
    assert any(r["qa_id"] == f"{SENTENCE}_15_q0" and r["answer_kind"] == "swapped" for r in rows)


def test_no_statement_at_all_is_a_data_error_naming_the_file(raw, monkeypatch):
    table = adapt_qanom(raw)
    monkeypatch.setattr(qanom_qa, "adapt_qanom", lambda _raw: Built(table.frame.head(0), table.counts))
    with pytest.raises(DataError, match=r"^no QA of the train split.*annot\.train\.csv, record all rows"):
        adapt_qanom_qa(raw)
