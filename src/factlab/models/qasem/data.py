"""Gold sentences for training and evaluating factlab's QASem parser, from the `qasrl_gs` and
`qanom` tables (factlab.data.adapters.qasrl: one row per QA, spans [start, end) over tokens).

A `GoldSentence` holds the sentence's predicates, each with its QAs (one `GoldArgument` per answer
span: a QA with two answers gives two arguments sharing the question), and predicate-detection
labels per token:
- QA-SRL GS: its predicates are verbal; other tokens are "none", except nouns (`noun_mask`, from
  spaCy) which are left unlabelled: GS does not annotate event nouns, so a noun's "none" is unknown.
- QANom: each candidate noun is nominal (`is_verbal`) or "none"; other tokens are unlabelled
  (QANom annotates no verbs).
Predicates of QANom are its `is_verbal` candidates (with or without QAs: a predicate without QAs
teaches "no argument"). The splits are the table's; which split trains and which evaluates is the
caller's choice (factlab trains on QANom train and dev + GS dev, evaluates on GS test + QANom test).
QANom annotated event nouns on GS's sentences (830 of the 1,000 GS dev sentences are QANom dev
sentences): `merge_annotations` puts both annotations of one sentence together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from factlab.errors import DataError
from factlab.models.qasem.templates import SLOT_NAMES
from factlab.models.qasem.types import QuestionSlots

DETECT_NONE, DETECT_VERBAL, DETECT_NOMINAL = 0, 1, 2
DETECTION_LABELS = ("none", "verbal", "nominal")
IGNORE = -100  # no label: left out of the loss
QASRL_GS = "qasrl_gs"
QANOM = "qanom"
SOURCES = (QASRL_GS, QANOM)


@dataclass(frozen=True)
class GoldArgument:
    start: int
    end: int  # exclusive
    question: str
    slots: QuestionSlots


@dataclass
class GoldPredicate:
    key: str
    index: int
    is_verbal: bool  # True: a verb (QA-SRL GS); False: an event noun (QANom)
    verb_form: str | None  # QANom's verb; None for GS (the parser lemmatises the verb)
    arguments: list[GoldArgument] = field(default_factory=list)


@dataclass
class GoldSentence:
    sentence_id: str
    source: str
    tokens: list[str]
    predicates: list[GoldPredicate]
    detection: list[int]  # per token: DETECT_* or IGNORE


def question_slots(row: Mapping[str, Any]) -> QuestionSlots:
    return QuestionSlots(*(str(row[name]) for name in SLOT_NAMES))


def gold_sentences(table: pd.DataFrame, source: str, split: str | Sequence[str]) -> tuple[list[GoldSentence], dict[str, int]]:
    """The table's sentences of `split` (one split or several), in order of first appearance.

    Counts: `dropped_qas_on_non_verbal_predicate` — QANom QAs written for a candidate its
    annotators labelled non-verbal (a predicate of no parse, so its QAs cannot be used).
    """
    if source not in SOURCES:
        raise DataError(f"unknown QA-SRL source {source!r}; expected one of {SOURCES}", field="source")
    splits = [split] if isinstance(split, str) else list(split)
    rows = table[table["split"].isin(splits)]
    if rows.empty:
        raise DataError(f"{source} has no rows in split(s) {splits}", field="split")
    # Plain records grouped in file order (pandas groupby per sentence is slow at 30k rows).
    grouped: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for record in rows.to_dict("records"):
        grouped.setdefault(str(record["sentence_id"]), {}).setdefault(str(record["key"]), []).append(record)
    sentences = []
    counts = {"dropped_qas_on_non_verbal_predicate": 0}
    for sentence_id, keys in grouped.items():
        first_row = next(iter(keys.values()))[0]
        tokens = [str(token) for token in first_row["tokens"]]
        detection = [IGNORE if source == QANOM else DETECT_NONE] * len(tokens)
        predicates = []
        for key, qas in keys.items():
            first = qas[0]
            index = int(first["predicate_idx"])
            with_questions = [row for row in qas if row["question"] != ""]
            if source == QANOM:
                detection[index] = DETECT_NOMINAL if bool(first["is_verbal"]) else DETECT_NONE
                if not bool(first["is_verbal"]):
                    counts["dropped_qas_on_non_verbal_predicate"] += len(with_questions)
                    continue  # a candidate noun that is not an event: no predicate
            else:
                detection[index] = DETECT_VERBAL
            verb_form = None if pd.isna(first["verb_form"]) else str(first["verb_form"])
            predicate = GoldPredicate(key=key, index=index, is_verbal=source == QASRL_GS, verb_form=verb_form)
            for row in with_questions:
                slots = question_slots(row)
                predicate.arguments.extend(
                    GoldArgument(int(s), int(e), str(row["question"]), slots) for s, e in row["answer_ranges"]
                )
            predicates.append(predicate)
        sentences.append(GoldSentence(sentence_id, source, tokens, predicates, detection))
    return sentences, counts


def unlabel_nouns(sentence: GoldSentence, noun_mask: Sequence[bool]) -> None:
    """GS sentences: a noun that is not a GS predicate gets no detection label (see module doc)."""
    if len(noun_mask) != len(sentence.tokens):
        raise DataError(f"noun mask has {len(noun_mask)} entries for {len(sentence.tokens)} tokens", record=sentence.sentence_id)
    for index, is_noun in enumerate(noun_mask):
        if is_noun and sentence.detection[index] == DETECT_NONE:
            sentence.detection[index] = IGNORE


def merge_annotations(verbal: GoldSentence, nominal: GoldSentence, counts: Counter[str]) -> GoldSentence:
    """One sentence with GS's verbal and QANom's nominal predicates (GS tokens: QANom writes brackets
    as -LRB-/-RSB-). Detection: QANom's label where it has one (its candidate nouns), GS's elsewhere,
    a GS verb kept over QANom. A QANom predicate on a GS verb is dropped and counted."""
    if len(verbal.tokens) != len(nominal.tokens):
        raise DataError(
            f"QA-SRL GS has {len(verbal.tokens)} tokens and QANom {len(nominal.tokens)}: not one sentence",
            record=verbal.sentence_id,
            field="tokens",
        )
    verbs = {predicate.index for predicate in verbal.predicates}
    nouns = [predicate for predicate in nominal.predicates if predicate.index not in verbs]
    counts["dropped_nominal_predicates_on_verbs"] += len(nominal.predicates) - len(nouns)
    detection = [
        mine if theirs == IGNORE or mine == DETECT_VERBAL else theirs
        for mine, theirs in zip(verbal.detection, nominal.detection, strict=True)
    ]
    predicates = sorted([*verbal.predicates, *nouns], key=lambda predicate: predicate.index)
    return GoldSentence(verbal.sentence_id, verbal.source, list(verbal.tokens), predicates, detection)


def count_arguments(sentences: Sequence[GoldSentence]) -> dict[str, int]:
    predicates = [predicate for sentence in sentences for predicate in sentence.predicates]
    return {
        "sentences": len(sentences),
        "predicates": len(predicates),
        "arguments": sum(len(predicate.arguments) for predicate in predicates),
        "predicates_without_arguments": sum(not predicate.arguments for predicate in predicates),
    }
