"""QANom QA statements: a QA-SRL-style question with its right or a wrong answer, against its sentence.

QASemConsistency scores hypotheses of the form `question + " " + answer` ("Who was arrested? a
man"); the aligner's other training pairs hold few of that form (HaluEval's HotpotQA questions,
MCTest's). This training benchmark makes them from QANom's train split (the parser's training
data; never an evaluated text): per predicate with QAs, one QA (chosen by the crc32 of the
predicate's key, so the build is deterministic without a seed) gives two rows, both with the
sentence as `source`:

- `right`: its question and its first answer, label 1 / `entailment`;
- `swapped`: the same question with the answer of another QA of the same sentence, label 0 /
  `not_entailment` -- mostly a predicate-argument error, the kind QASemConsistency localises. A
  candidate answer must share no token with any of the QA's own answer ranges, differ from its
  answer texts, and not make a statement that some QA of the sentence makes (the same question
  roles, `QUESTION_ROLES`, with the same answer; answers compared casefolded, without a leading
  article); the same predicate's other QAs are preferred, then those of the sentence's predicates of
  another verb (two nouns of one verb ask its questions twice). The labels are near, not exactly,
  right: a coreferent mention in other words can still make a swapped statement true (of a sample
  of 30 swapped rows read by hand, 26 are clearly false, 1 true and 3 arguable).

Predicates are grouped by sentence text (QANom lists a few sentences under two ids), and a
(sentence, statement) pair met again -- two nouns of one verb giving the same QA -- is dropped and
counted (`dropped_duplicate`); the same pair with both labels would be an error, which the
statement check above rules out. A predicate whose QA has no candidate gives neither row
(`dropped_no_wrong_answer`), so the labels stay balanced but for the duplicates.
Only QANom's train split is read (`split` "train").
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any

import pandas as pd

from factlab.data.adapters.halueval import qa_statement
from factlab.data.adapters.nli import is_repeat, nli_row, nli_spec
from factlab.data.adapters.qasrl import QANOM_ZIP, adapt_qanom
from factlab.data.spec import Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

NAME = "qanom_qa"
DATASET = "qanom"


def covered_tokens(ranges: Sequence[Sequence[int]]) -> set[int]:
    """The sentence tokens inside [start, end) answer ranges."""
    return {token for start, end in ranges for token in range(int(start), int(end))}


def pick(candidates: Sequence[Any], key: str) -> Any:
    """A deterministic choice among `candidates`, by the crc32 of `key`."""
    return candidates[zlib.crc32(key.encode()) % len(candidates)]


# A QA-SRL question's roles: its slots without the auxiliary and the verb's inflection, so that "Who is
# supported?" and "Who can be supported?" ask the same thing
QUESTION_ROLES = ("verb_form", "wh", "subj", "obj", "prep", "obj2", "is_passive", "is_negated")
ARTICLES = ("the ", "a ", "an ")


def question_roles(qa: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(qa[slot]).casefold() for slot in QUESTION_ROLES)


def answer_text(answer: str) -> str:
    """An answer compared casefolded, without a leading article ("the police" is "police")."""
    folded = answer.casefold().strip()
    for article in ARTICLES:
        if folded.startswith(article):
            return folded[len(article) :]
    return folded


def statements(qas: Iterable[Mapping[str, Any]]) -> set[tuple[tuple[str, ...], str]]:
    """What `qas` state: (question roles, answer text) of each of their answers."""
    return {(question_roles(qa), answer_text(answer)) for qa in qas for answer in qa["answers"]}


def wrong_answers(
    qa: Mapping[str, Any], others: Iterable[Mapping[str, Any]], made: Set[tuple[tuple[str, ...], str]] = frozenset()
) -> list[str]:
    """First answers of `others` that share no token with `qa`'s answers, differ from them in text, and do not
    make with `qa`'s question a statement of `made` (`statements` of the sentence's QAs)."""
    own_tokens = covered_tokens(qa["answer_ranges"])
    own_texts = {answer_text(text) for text in qa["answers"]}
    roles = question_roles(qa)
    found: list[str] = []
    seen: set[str] = set()
    for other in others:
        first = other["answers"][0]
        text = answer_text(first)
        if covered_tokens(other["answer_ranges"]) & own_tokens or text in own_texts or text in seen or (roles, text) in made:
            continue
        found.append(first)
        seen.add(text)
    return found


def qa_statement_rows(qas: pd.DataFrame, *, file: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The right and swapped rows of QANom QA rows (one split, QAs only), and the counts."""
    by_sentence: dict[str, dict[str, list[dict[str, Any]]]] = {}
    in_table_order: dict[str, list[dict[str, Any]]] = {}
    for qa in qas.to_dict("records"):  # plain records: pandas row access would dominate the build
        by_sentence.setdefault(qa["sentence"], {}).setdefault(qa["key"], []).append(qa)
        in_table_order.setdefault(qa["sentence"], []).append(qa)
    rows: list[dict[str, Any]] = []
    first: dict[tuple[str, str], dict[str, Any]] = {}
    counts = {"predicates": 0, "dropped_no_wrong_answer": 0, "dropped_duplicate": 0}
    for sentence in sorted(by_sentence):
        predicates = by_sentence[sentence]
        made = statements(in_table_order[sentence])
        for key in sorted(predicates):
            counts["predicates"] += 1
            qa = pick(predicates[key], key)
            same_predicate = [other for other in predicates[key] if other["qa_id"] != qa["qa_id"]]
            # two nouns of one verb ask its questions twice, often of one argument in other words
            other_predicates = [other for other in in_table_order[sentence] if other["verb_form"] != qa["verb_form"]]
            candidates = wrong_answers(qa, same_predicate, made) or wrong_answers(qa, other_predicates, made)
            if not candidates:
                counts["dropped_no_wrong_answer"] += 1
                continue
            wrong = pick(candidates, f"{qa['qa_id']}:wrong")
            for kind, answer, nli_label in (("right", qa["answers"][0], "entailment"), ("swapped", wrong, "not_entailment")):
                record = f"{qa['qa_id']} ({kind})"
                row = nli_row(
                    f"{NAME}-{qa['qa_id']}-{kind}",
                    DATASET,
                    "train",
                    sentence,
                    qa_statement(qa["question"], answer),
                    nli_label,
                    file=file,
                    record=record,
                )
                pair = (row["source"], row["output"])
                if is_repeat(first, pair, nli_label, "sentence and statement", file=file, record=record, field="answers"):
                    counts["dropped_duplicate"] += 1
                    continue
                first[pair] = row
                rows.append(row | {"question": qa["question"], "answer": answer, "answer_kind": kind, "qa_id": qa["qa_id"]})
    return rows, counts


def adapt_qanom_qa(raw: RawFiles) -> Built:
    table = adapt_qanom(raw).frame
    qas = table[(table["split"] == "train") & (table["question"] != "")]
    file = f"{raw.path(DATASET, QANOM_ZIP)}::annot.train.csv"
    rows, counts = qa_statement_rows(qas, file=file)
    if not rows:
        raise DataError("no QA of the train split gives a right and a swapped statement", file=file, record="all rows")
    frame = pd.DataFrame(rows)
    counts = {"read_qas": len(qas), **counts, "kept_right": int((frame["answer_kind"] == "right").sum())}
    counts["kept_swapped"] = len(frame) - counts["kept_right"]
    return Built(frame, counts)


SPECS = [
    nli_spec(NAME, (DATASET,), adapt_qanom_qa, "QANom train: sentence vs a QA-SRL question + its right or another QA's answer")
]
