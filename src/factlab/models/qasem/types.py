"""The QASem parse format shared by every parser (trained here or loaded from a hub).

Token spans are [start, end) over the sentence's tokens. A question is the QA-SRL slot template
(wh, aux, subj, verb, obj, prep, obj2) rendered as text; `role` is the coarse semantic role used
for labelled matching (see factlab.models.qasem.evaluation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Predicate:
    index: int  # token index in the sentence
    text: str
    is_verbal: bool  # True: a verb (QA-SRL); False: an event noun (QANom)
    verb_form: str = ""  # the verb the questions use (for nominal predicates, its verbal form)


@dataclass(frozen=True)
class QuestionSlots:
    wh: str
    aux: str
    subj: str
    verb: str  # the verb slot as QA-SRL writes it (e.g. "past", "presentSingular3rd", "being past")
    obj: str
    prep: str
    obj2: str


@dataclass(frozen=True)
class QAPair:
    predicate: Predicate
    question: str
    answer: str
    answer_start: int
    answer_end: int
    slots: QuestionSlots | None = None
    role: str | None = None
    source: str = "model"  # "model", "hub", "copular_rule" …


@dataclass
class SentenceParse:
    tokens: list[str]
    qas: list[QAPair] = field(default_factory=list)


class QASemParser(Protocol):
    def parse(self, sentences: Sequence[Sequence[str]]) -> list[SentenceParse]:
        """Parse tokenised sentences; one SentenceParse per input, in order."""
        ...
