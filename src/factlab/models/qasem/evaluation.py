"""QASem parser evaluation: unlabelled (UA) and labelled (LA) argument detection, and coverage.

The measures of the QASem papers (Roit et al. 2020; Klein et al. 2020, 2022), made exact here:

- Unit: per predicate (a sentence id and a predicate token index), the *arguments* are the
  distinct answer spans [start, end) of its QAs; a span answering several questions is one
  argument carrying all their roles. Predicates are those of the gold standard (the parser is
  given gold predicates, as in the papers' argument evaluation); predictions for other
  predicates are ignored, a gold predicate without predictions contributes only misses.
- Matching: a predicted and a gold argument of the same predicate may match when their token
  IOU = |overlap| / |union| >= `threshold` (0.3). Matches are one-to-one: a maximum-cardinality
  matching that, among those, maximises the summed IOU (the qasrl-gs evaluation's
  `max_weight_matching(maxcardinality=True)`; QANom's code matches greedily by IOU with a strict
  "> 0.3" — the two differ only on ties and rare chains of overlaps).
- UA: precision = matched / predicted arguments, recall = matched / gold arguments, F1 their
  harmonic mean (0 when a denominator is 0).
- LA: a match counts when the predicted argument's role is among the gold argument's roles;
  roles come from the question slots (templates.semantic_role: He et al. 2015's R0/R1/R2/adjunct
  mapping, as QANom's `question_to_sem_role`), computed the same way for both sides. Unlike the
  QASem repository's evaluation, which sets `is_passive` to False for every question (a TODO
  there), voice is derived from the slots, so "Who was shot?" is R1, not R0.
- Unmatched predicted arguments are each a false positive (no merging of overlapping ones, which
  the qasrl-gs code does for redundant parsers; factlab's parser never predicts overlapping
  spans for one predicate).

Coverage (QASemConsistency): the share of gold QAs whose (predicate, answer span) is matched, by
the same matching, to an argument the parser produced for the same predicate token.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from factlab.errors import DataError

IOU_THRESHOLD = 0.3
Span = tuple[int, int]
PredicateKey = tuple[str, int]  # (sentence id, predicate token index)


@dataclass(frozen=True)
class Argument:
    start: int
    end: int  # exclusive
    role: str | None = None


def iou(a: Span, b: Span) -> float:
    """Token intersection over union of two [start, end) spans."""
    overlap = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    union = (a[1] - a[0]) + (b[1] - b[0]) - overlap
    return overlap / union if union else 0.0


def spans_with_roles(arguments: Iterable[Argument]) -> dict[Span, frozenset[str]]:
    """Distinct spans, each with the roles of every QA it answers."""
    roles: dict[Span, set[str]] = {}
    for argument in arguments:
        if not 0 <= argument.start < argument.end:
            raise DataError(f"argument span {argument.start}:{argument.end} is empty or negative", field="span")
        roles.setdefault((argument.start, argument.end), set())
        if argument.role is not None:
            roles[(argument.start, argument.end)].add(argument.role)
    return {span: frozenset(values) for span, values in roles.items()}


def match_spans(predicted: Sequence[Span], gold: Sequence[Span], threshold: float = IOU_THRESHOLD) -> list[tuple[int, int]]:
    """One-to-one (predicted index, gold index) pairs with IOU >= threshold: the most pairs, and
    among those the largest total IOU."""
    if not predicted or not gold:
        return []
    overlaps = np.array([[iou(p, g) for g in gold] for p in predicted])
    allowed = overlaps >= threshold
    # Each allowed pair weighs more than any sum of IOUs, so cardinality comes first.
    weights = np.where(allowed, overlaps + (min(len(predicted), len(gold)) + 1), 0.0)
    rows, columns = linear_sum_assignment(weights, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, columns, strict=True) if allowed[r, c]]


@dataclass(frozen=True)
class ArgumentCounts:
    n_gold: int = 0
    n_pred: int = 0
    matched: int = 0
    matched_labeled: int = 0

    def __add__(self, other: ArgumentCounts) -> ArgumentCounts:
        return ArgumentCounts(
            self.n_gold + other.n_gold,
            self.n_pred + other.n_pred,
            self.matched + other.matched,
            self.matched_labeled + other.matched_labeled,
        )

    @staticmethod
    def ratio(numerator: int, denominator: int) -> float:
        return numerator / denominator if denominator else 0.0

    @staticmethod
    def harmonic(precision: float, recall: float) -> float:
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0

    @property
    def unlabeled_precision(self) -> float:
        return self.ratio(self.matched, self.n_pred)

    @property
    def unlabeled_recall(self) -> float:
        return self.ratio(self.matched, self.n_gold)

    @property
    def unlabeled_f1(self) -> float:
        return self.harmonic(self.unlabeled_precision, self.unlabeled_recall)

    @property
    def labeled_precision(self) -> float:
        return self.ratio(self.matched_labeled, self.n_pred)

    @property
    def labeled_recall(self) -> float:
        return self.ratio(self.matched_labeled, self.n_gold)

    @property
    def labeled_f1(self) -> float:
        return self.harmonic(self.labeled_precision, self.labeled_recall)

    def as_row(self) -> dict[str, float | int]:
        return {
            "unlabeled_precision": self.unlabeled_precision,
            "unlabeled_recall": self.unlabeled_recall,
            "unlabeled_f1": self.unlabeled_f1,
            "labeled_f1": self.labeled_f1,
            "n_gold": self.n_gold,
            "n_pred": self.n_pred,
        }


def score_predicate(predicted: Iterable[Argument], gold: Iterable[Argument], threshold: float = IOU_THRESHOLD) -> ArgumentCounts:
    predicted_roles = spans_with_roles(predicted)
    gold_roles = spans_with_roles(gold)
    predicted_spans, gold_spans = list(predicted_roles), list(gold_roles)
    pairs = match_spans(predicted_spans, gold_spans, threshold)
    labeled = sum(bool(predicted_roles[predicted_spans[p]] & gold_roles[gold_spans[g]]) for p, g in pairs)
    return ArgumentCounts(n_gold=len(gold_spans), n_pred=len(predicted_spans), matched=len(pairs), matched_labeled=labeled)


def score_arguments(
    predicted: Mapping[PredicateKey, Sequence[Argument]],
    gold: Mapping[PredicateKey, Sequence[Argument]],
    threshold: float = IOU_THRESHOLD,
) -> ArgumentCounts:
    """UA/LA counts over the gold predicates (see the module docstring)."""
    total = ArgumentCounts()
    for key, gold_arguments in gold.items():
        total = total + score_predicate(predicted.get(key, ()), gold_arguments, threshold)
    return total


def covered_gold(
    predicted: Mapping[PredicateKey, Sequence[Span]],
    gold: Sequence[tuple[PredicateKey, Span]],
    threshold: float = IOU_THRESHOLD,
) -> list[bool]:
    """Per gold (predicate, span) item: is its span matched to a predicted argument of the same
    predicate? Items sharing a predicate and span are covered together."""
    by_predicate: dict[PredicateKey, list[Span]] = {}
    for key, span in gold:
        spans = by_predicate.setdefault(key, [])
        if span not in spans:
            spans.append(span)
    covered: set[tuple[PredicateKey, Span]] = set()
    for key, gold_spans in by_predicate.items():
        predicted_spans = list(dict.fromkeys(predicted.get(key, ())))
        for _, g in match_spans(predicted_spans, gold_spans, threshold):
            covered.add((key, gold_spans[g]))
    return [(key, span) in covered for key, span in gold]
