"""Whether the checker's explanations point at what annotators found unsupported (QASemConsistency's gold QAs).

QASemConsistency (Cattan et al., 2024) decomposes each response into QA-SRL/QANom QAs, each with a predicate token
and an answer (argument) token range of the response, and annotators vote each QA supported or not. An explanation
points at a QA when the span it explains overlaps the QA's predicate token or its answer tokens. Two shares:
- coverage: of the unsupported gold QAs, those an explanation points at;
- precision: of the explanations, those that point at an unsupported gold QA; beside it the precision of the same
  spans placed anywhere in their response (each span's token count slid over every position, averaged: chance).
Intervals: percentile bootstrap over responses (QAs and spans of one response are not independent).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from factlab.metaeval.bootstrap import bootstrap_ci
from factlab.metaeval.errors import StatisticsError

Span = tuple[int, int]  # character offsets [start, end)

SUMMARY_COLUMNS = (
    "split",
    "task",
    "n_responses",
    "n_unsupported_qas",
    "coverage",
    "coverage_ci_low",
    "coverage_ci_high",
    "coverage_predicate",
    "coverage_answer",
    "n_explanations",
    "precision",
    "precision_ci_low",
    "precision_ci_high",
    "chance_precision",
)


def token_offsets(text: str) -> list[Span]:
    """Character offsets of the space-separated tokens of `text` (QASemConsistency's responses are tokens joined
    by single spaces)."""
    offsets, position = [], 0
    for token in text.split(" "):
        offsets.append((position, position + len(token)))
        position += len(token) + 1
    return offsets


def answer_range(answer_idx: str) -> tuple[int, int]:
    """`"3-5"` -> tokens 3 and 4 (QA-SRL's exclusive end)."""
    start, _, end = str(answer_idx).partition("-")
    try:
        first, last = int(start), int(end)
    except ValueError as error:
        raise StatisticsError(f"answer_idx {answer_idx!r} is not <start>-<end>") from error
    if not 0 <= first < last:
        raise StatisticsError(f"answer_idx {answer_idx!r} is empty")
    return first, last


def overlaps(span: Span, other: Span) -> bool:
    return span[0] < other[1] and other[0] < span[1]


def touched_tokens(span: Span, offsets: Sequence[Span]) -> list[int]:
    return [index for index, token in enumerate(offsets) if overlaps(span, token)]


@dataclass(frozen=True)
class QaElements:
    """One gold QA's predicate token and answer tokens, as indices into its response's tokens."""

    predicate: int
    answer: tuple[int, int]

    @property
    def tokens(self) -> set[int]:
        return {self.predicate, *range(*self.answer)}


def qa_elements(predicate_idx: int, answer_idx: str, n_tokens: int) -> QaElements:
    first, last = answer_range(answer_idx)
    if not 0 <= int(predicate_idx) < n_tokens or last > n_tokens:
        raise StatisticsError(f"QA tokens {predicate_idx}, {answer_idx} lie outside a response of {n_tokens} tokens")
    return QaElements(int(predicate_idx), (first, last))


def first_pointing(span_tokens: Sequence[set[int]], element_tokens: set[int]) -> int:
    """The index of the first span (given as the tokens it touches) that touches one of the tokens, -1 when none
    does."""
    return next((index for index, touched in enumerate(span_tokens) if touched & element_tokens), -1)


def chance_hit(width: int, marked: set[int], n_tokens: int) -> float:
    """The share of the positions of a window of `width` tokens in a response of `n_tokens` that overlap a marked
    token."""
    width = min(max(width, 1), n_tokens)
    positions = range(n_tokens - width + 1)
    return float(np.mean([bool(marked & set(range(start, start + width))) for start in positions]))


def response_rows(
    response: str, spans: Sequence[Span], qas: Sequence[tuple[QaElements, bool]]
) -> tuple[list[dict[str, int | bool]], list[dict[str, float]]]:
    """One response's gold QAs (for an unsupported one: pointed at, by its predicate, by its answer, and the first
    span pointing at it, -1 for none) and its explanations (on an unsupported QA, and the chance of that for the
    span's width). `qas`: (elements, supported) per gold QA."""
    offsets = token_offsets(response)
    span_tokens = [set(touched_tokens(span, offsets)) for span in spans]
    unsupported = [elements for elements, supported in qas if not supported]
    marked = set().union(*(elements.tokens for elements in unsupported)) if unsupported else set()
    qa_rows: list[dict[str, int | bool]] = []
    for elements, supported in qas:
        span = -1 if supported else first_pointing(span_tokens, elements.tokens)
        qa_rows.append(
            {
                "supported": supported,
                "span": span,
                "pointed": span >= 0,
                "pointed_predicate": not supported and first_pointing(span_tokens, {elements.predicate}) >= 0,
                "pointed_answer": not supported and first_pointing(span_tokens, set(range(*elements.answer))) >= 0,
            }
        )
    span_rows = [
        {"on_unsupported": float(bool(marked & touched)), "chance": chance_hit(len(touched), marked, len(offsets))}
        for touched in span_tokens
    ]
    return qa_rows, span_rows


def share_interval(
    values: Sequence[float], groups: Sequence[str], *, resamples: int, confidence: float, rng: np.random.Generator
) -> tuple[float, float, float]:
    """Mean of `values` and its bootstrap interval over `groups` (nan, nan, nan when empty)."""
    if not len(values):
        return np.nan, np.nan, np.nan
    values_array = np.asarray(values, dtype=np.float64)
    if len(set(groups)) < 2:
        return float(values_array.mean()), np.nan, np.nan
    found = bootstrap_ci(np.mean, values_array, groups=np.asarray(groups), n_resamples=resamples, confidence=confidence, rng=rng)
    return found.estimate, found.low, found.high


def summary_rows(
    responses: pd.DataFrame, qa_frame: pd.DataFrame, span_frame: pd.DataFrame, *, resamples: int, confidence: float, seed: int
) -> pd.DataFrame:
    """Per split and task (and `all` tasks): coverage of the unsupported QAs and precision of the explanations.
    `responses`: split, task, response (one row per checked response); `qa_frame`: split, task, response, supported,
    pointed, pointed_predicate, pointed_answer (one row per gold QA); `span_frame`: split, task, response,
    on_unsupported, chance (one row per explanation)."""
    missing = [
        f"{name}.{column}"
        for name, frame, columns in (
            ("responses", responses, ("split", "task", "response")),
            ("qa_frame", qa_frame, ("split", "task", "response", "supported", "pointed", "pointed_predicate", "pointed_answer")),
            ("span_frame", span_frame, ("split", "task", "response", "on_unsupported", "chance")),
        )
        for column in columns
        if column not in frame.columns
    ]
    if missing:
        raise StatisticsError(f"missing column(s) {missing}")
    qa_frame = qa_frame[~qa_frame["supported"].astype(bool)]
    rows = []
    for split in sorted(set(responses["split"])):
        of_split = [frame[frame["split"] == split] for frame in (responses, qa_frame, span_frame)]
        for task in [*sorted(set(of_split[0]["task"])), "all"]:
            checked, qas, spans = (frame if task == "all" else frame[frame["task"] == task] for frame in of_split)
            rng = np.random.default_rng(seed)
            coverage = share_interval(
                qas["pointed"].astype(float).tolist(),
                qas["response"].tolist(),
                resamples=resamples,
                confidence=confidence,
                rng=rng,
            )
            precision = share_interval(
                spans["on_unsupported"].tolist(), spans["response"].tolist(), resamples=resamples, confidence=confidence, rng=rng
            )
            rows.append(
                {
                    "split": split,
                    "task": task,
                    "n_responses": len(checked),
                    "n_unsupported_qas": len(qas),
                    "coverage": coverage[0],
                    "coverage_ci_low": coverage[1],
                    "coverage_ci_high": coverage[2],
                    "coverage_predicate": float(qas["pointed_predicate"].mean()) if len(qas) else np.nan,
                    "coverage_answer": float(qas["pointed_answer"].mean()) if len(qas) else np.nan,
                    "n_explanations": len(spans),
                    "precision": precision[0],
                    "precision_ci_low": precision[1],
                    "precision_ci_high": precision[2],
                    "chance_precision": float(spans["chance"].mean()) if len(spans) else np.nan,
                }
            )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
