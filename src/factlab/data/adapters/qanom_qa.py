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
  candidate answer must share no token with any of the QA's own answer ranges and differ from its
  answer texts (case-insensitively); the same predicate's other QAs are preferred, then the
  sentence's other predicates'. The labels are near, not exactly, right: a coreferent mention in
  other words, or another predicate asking the same question, can make a swapped statement true
  (docs/experiments.md, session 43).

A predicate whose QA has no such candidate gives neither row (`dropped_no_wrong_answer`), so
the table stays balanced. Only QANom's train split is read (`split` "train").
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from factlab.data.adapters.halueval import qa_statement
from factlab.data.adapters.nli import nli_row, nli_spec
from factlab.data.adapters.qasrl import QANOM_ZIP, adapt_qanom
from factlab.data.spec import Built
from factlab.download.manifest import RawFiles

NAME = "qanom_qa"


def covered_tokens(ranges: Sequence[Sequence[int]]) -> set[int]:
    """The sentence tokens inside [start, end) answer ranges."""
    return {token for start, end in ranges for token in range(int(start), int(end))}


def pick(candidates: Sequence[Any], key: str) -> Any:
    """A deterministic choice among `candidates`, by the crc32 of `key`."""
    return candidates[zlib.crc32(key.encode()) % len(candidates)]


def wrong_answers(qa: Mapping[str, Any], others: Iterable[Mapping[str, Any]]) -> list[str]:
    """First answers of `others` that share no token with `qa`'s answers and differ from them in text."""
    own_tokens = covered_tokens(qa["answer_ranges"])
    own_texts = {text.casefold() for text in qa["answers"]}
    found: list[str] = []
    for other in others:
        first = other["answers"][0]
        if covered_tokens(other["answer_ranges"]) & own_tokens or first.casefold() in own_texts or first in found:
            continue
        found.append(first)
    return found


def qa_statement_rows(qas: pd.DataFrame, *, file: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The right and swapped rows of QANom QA rows (one split, QAs only), and the counts."""
    by_sentence: dict[str, dict[str, list[dict[str, Any]]]] = {}
    in_table_order: dict[str, list[dict[str, Any]]] = {}
    for qa in qas.to_dict("records"):  # plain records: pandas row access would dominate the build
        by_sentence.setdefault(qa["sentence_id"], {}).setdefault(qa["key"], []).append(qa)
        in_table_order.setdefault(qa["sentence_id"], []).append(qa)
    rows: list[dict[str, Any]] = []
    counts = {"predicates": 0, "dropped_no_wrong_answer": 0}
    for sentence_id in sorted(by_sentence):
        predicates = by_sentence[sentence_id]
        for key in sorted(predicates):
            counts["predicates"] += 1
            qa = pick(predicates[key], key)
            same_predicate = [other for other in predicates[key] if other["qa_id"] != qa["qa_id"]]
            other_predicates = [other for other in in_table_order[sentence_id] if other["key"] != key]
            candidates = wrong_answers(qa, same_predicate) or wrong_answers(qa, other_predicates)
            if not candidates:
                counts["dropped_no_wrong_answer"] += 1
                continue
            wrong = pick(candidates, f"{qa['qa_id']}:wrong")
            for kind, answer, nli_label in (("right", qa["answers"][0], "entailment"), ("swapped", wrong, "not_entailment")):
                record = f"{qa['qa_id']} ({kind})"
                row = nli_row(
                    f"{NAME}-{qa['qa_id']}-{kind}",
                    NAME,
                    "train",
                    qa["sentence"],
                    qa_statement(qa["question"], answer),
                    nli_label,
                    file=file,
                    record=record,
                )
                rows.append(row | {"question": qa["question"], "answer": answer, "answer_kind": kind, "qa_id": qa["qa_id"]})
    return rows, counts


def adapt_qanom_qa(raw: RawFiles) -> Built:
    table = adapt_qanom(raw).frame
    qas = table[(table["split"] == "train") & (table["question"] != "")]
    rows, counts = qa_statement_rows(qas, file=f"{raw.path('qanom', QANOM_ZIP)}::annot.train.csv")
    frame = pd.DataFrame(rows)
    counts = {"read_qas": len(qas), **counts, "kept_right": int((frame["answer_kind"] == "right").sum())}
    counts["kept_swapped"] = len(frame) - counts["kept_right"]
    return Built(frame, counts)


SPECS = [
    nli_spec(NAME, ("qanom",), adapt_qanom_qa, "QANom train: sentence vs a QA-SRL question + its right or another QA's answer")
]
