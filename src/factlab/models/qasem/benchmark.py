"""Running a QASem parser on gold sets and scoring it (measures: evaluation.py).

- `score_on_gold`: parse gold sentences given their gold predicates (with QANom's verb forms),
  score UA/LA; also returns the predicted QAs as a table for inspection.
- `detection_scores`: predicate detection against the gold predicates (verbal on QA-SRL GS,
  nominal on QANom's candidates).
- `consistency_coverage`: parse QASemConsistency responses sentence by sentence (predicates
  detected, copular QAs on) and report, per task, the share of gold QAs whose predicate token and
  answer span the parser covers.
The paper's table of these scores is rendered by factlab.paper.qasem_parser_command.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pandas as pd

from factlab.errors import DataError
from factlab.models.qasem.data import DETECT_NOMINAL, DETECT_VERBAL, GoldSentence
from factlab.models.qasem.evaluation import IOU_THRESHOLD, Argument, ArgumentCounts, PredicateKey, covered_gold, score_arguments
from factlab.models.qasem.templates import semantic_role
from factlab.models.qasem.types import Predicate, QASemParser, SentenceParse

PREDICTION_COLUMNS = [
    "sentence_id",
    "predicate_idx",
    "predicate",
    "verb_form",
    "is_verbal",
    "question",
    "answer",
    "answer_start",
    "answer_end",
    "role",
    "source",
]


def gold_predicates(sentence: GoldSentence) -> list[Predicate]:
    return [Predicate(p.index, sentence.tokens[p.index], p.is_verbal, p.verb_form or "") for p in sentence.predicates]


def gold_arguments(sentences: Sequence[GoldSentence]) -> dict[PredicateKey, list[Argument]]:
    return {
        (sentence.sentence_id, predicate.index): [Argument(a.start, a.end, semantic_role(a.slots)) for a in predicate.arguments]
        for sentence in sentences
        for predicate in sentence.predicates
    }


def predicted_arguments(sentence_ids: Sequence[str], parses: Sequence[SentenceParse]) -> dict[PredicateKey, list[Argument]]:
    predicted: dict[PredicateKey, list[Argument]] = {}
    for sentence_id, parse in zip(sentence_ids, parses, strict=True):
        for qa in parse.qas:
            predicted.setdefault((sentence_id, qa.predicate.index), []).append(Argument(qa.answer_start, qa.answer_end, qa.role))
    return predicted


def predictions_table(sentence_ids: Sequence[str], parses: Sequence[SentenceParse]) -> pd.DataFrame:
    rows = [
        {
            "sentence_id": sentence_id,
            "predicate_idx": qa.predicate.index,
            "predicate": qa.predicate.text,
            "verb_form": qa.predicate.verb_form,
            "is_verbal": qa.predicate.is_verbal,
            "question": qa.question,
            "answer": qa.answer,
            "answer_start": qa.answer_start,
            "answer_end": qa.answer_end,
            "role": qa.role,
            "source": qa.source,
        }
        for sentence_id, parse in zip(sentence_ids, parses, strict=True)
        for qa in parse.qas
    ]
    return pd.DataFrame(rows, columns=PREDICTION_COLUMNS)


def score_on_gold(
    parser: QASemParser, sentences: Sequence[GoldSentence], threshold: float = IOU_THRESHOLD
) -> tuple[ArgumentCounts, pd.DataFrame]:
    """UA/LA of `parser` given the gold predicates of `sentences`; and its predicted QAs."""
    parses = parser.parse([s.tokens for s in sentences], predicates=[gold_predicates(s) for s in sentences])  # type: ignore[call-arg]
    ids = [s.sentence_id for s in sentences]
    counts = score_arguments(predicted_arguments(ids, parses), gold_arguments(sentences), threshold)
    return counts, predictions_table(ids, parses)


def detection_scores(detected: Sequence[Sequence[Predicate]], sentences: Sequence[GoldSentence], kind: str) -> dict[str, Any]:
    """Precision/recall/F1 of detected predicates of one kind ("verbal" or "nominal").

    Verbal: against every gold predicate token of QA-SRL GS. Nominal: on QANom's candidate nouns
    only (a detected noun outside the candidates has no gold label and is left out), against
    the candidates labelled `is_verbal`.
    """
    if kind not in ("verbal", "nominal"):
        raise DataError(f"unknown predicate kind {kind!r}", field="kind")
    true_positive = predicted = gold = 0
    for found, sentence in zip(detected, sentences, strict=True):
        positive = DETECT_VERBAL if kind == "verbal" else DETECT_NOMINAL
        gold_indices = {i for i, label in enumerate(sentence.detection) if label == positive}
        scope = (
            range(len(sentence.tokens)) if kind == "verbal" else {i for i, label in enumerate(sentence.detection) if label >= 0}
        )
        found_indices = {p.index for p in found if p.is_verbal == (kind == "verbal") and p.index in scope}
        true_positive += len(found_indices & gold_indices)
        predicted += len(found_indices)
        gold += len(gold_indices)
    precision = ArgumentCounts.ratio(true_positive, predicted)
    recall = ArgumentCounts.ratio(true_positive, gold)
    return {
        "kind": kind,
        "precision": precision,
        "recall": recall,
        "f1": ArgumentCounts.harmonic(precision, recall),
        "n_gold": gold,
        "n_pred": predicted,
    }


# UA-F1 of the original QASem parser (T5-small, Klein et al. 2022, "QASem Parsing"): the target.


COVERAGE_COLUMNS = [
    "task",
    "n_gold_qas",
    "covered_qas",
    "coverage",
    "n_gold_predicates",
    "predicates_found",
    "predicate_recall",
    "n_parser_qas",
]


def sentence_offsets(sentences: Sequence[Sequence[str]]) -> list[int]:
    return [0, *itertools.accumulate(len(tokens) for tokens in sentences)]


def consistency_coverage(
    parser: QASemParser, responses: pd.DataFrame, qas: pd.DataFrame, threshold: float = IOU_THRESHOLD
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per task (and "all"): share of QASemConsistency gold QAs covered by the parser, and the
    per-QA table (`covered`, `predicate_found`).

    `responses`: the `qasem_consistency` table (`sentences`: space-joined token strings);
    `qas`: `qasem_consistency_qas` (`doc_id` = the response's `example_id`, `predicate_idx` and
    `answer_idx` "start-end" as token offsets into the whole response).
    """
    missing = sorted(set(qas["doc_id"]) - set(responses["example_id"]))
    if missing:
        raise DataError(f"{len(missing)} QA responses are not in the responses table (first: {missing[0]})", field="doc_id")
    needed = responses[responses["example_id"].isin(set(qas["doc_id"]))]
    sentence_rows = [(row.example_id, sentence.split(" ")) for row in needed.itertuples() for sentence in row.sentences]
    parses = parser.parse([tokens for _, tokens in sentence_rows])
    predicted: dict[PredicateKey, list[tuple[int, int]]] = {}
    n_parser_qas: dict[str, int] = {}
    position = 0
    for row in needed.itertuples():
        offsets = sentence_offsets([s.split(" ") for s in row.sentences])
        for number in range(len(row.sentences)):
            parse = parses[position]
            position += 1
            base = offsets[number]
            for qa in parse.qas:
                key = (row.example_id, base + qa.predicate.index)
                predicted.setdefault(key, []).append((base + qa.answer_start, base + qa.answer_end))
            n_parser_qas[row.example_id] = n_parser_qas.get(row.example_id, 0) + len(parse.qas)
    gold_items = []
    for row in qas.itertuples():
        start, _, end = str(row.answer_idx).partition("-")
        if not (start.isdigit() and end.isdigit() and int(start) < int(end)):
            raise DataError(f"answer_idx {row.answer_idx!r} is not start-end", record=row.example_id, field="answer_idx")
        gold_items.append(((row.doc_id, int(row.predicate_idx)), (int(start), int(end))))
    per_qa = qas[["example_id", "doc_id", "task", "predicate", "predicate_idx", "predicate_pos", "question", "answer"]].copy()
    per_qa["covered"] = covered_gold(predicted, gold_items, threshold)
    per_qa["predicate_found"] = [key in predicted for key, _ in gold_items]
    tasks = [*sorted(per_qa["task"].unique()), "all"]
    summary = []
    for task in tasks:
        part = per_qa if task == "all" else per_qa[per_qa["task"] == task]
        predicates = part.drop_duplicates(["doc_id", "predicate_idx"])
        docs = set(part["doc_id"])
        summary.append(
            {
                "task": task,
                "n_gold_qas": len(part),
                "covered_qas": int(part["covered"].sum()),
                "coverage": float(part["covered"].mean()),
                "n_gold_predicates": len(predicates),
                "predicates_found": int(predicates["predicate_found"].sum()),
                "predicate_recall": float(predicates["predicate_found"].mean()),
                "n_parser_qas": sum(n_parser_qas.get(doc, 0) for doc in docs),
            }
        )
    return pd.DataFrame(summary, columns=COVERAGE_COLUMNS), per_qa
