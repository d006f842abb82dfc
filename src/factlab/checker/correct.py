"""A suggested fix per unsupported span, kept only where the checker itself then finds the sentence supported.

For each span (factlab.checker.api: the token head's phrases) the candidates are edits of its output sentence:
- replacements from the sentence's evidence sentences (the best source sentences of its best chunk): their
  numbers where the span holds a number, their capitalised names where it holds a name
  (factlab.checker.explain's patterns), each not already in the output;
- deletion of the span (with the space before it), where no replacement is offered, the span does not open its
  sentence, and at least `MIN_WORDS_LEFT` words remain.

Every candidate sentence is scored against the sentence's best chunk by the checker's own reading (one engine
call for all of a batch's candidates); the best candidate is kept when its support reaches the decision
threshold and beats the sentence's own, so an output the checker finds consistent is never changed. The
corrected output applies the kept edits (one per span, non-overlapping, left to right) with their character
offsets in the original output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from factlab.checker.explain import NAME, NUMBER, alternatives

MIN_WORDS_LEFT = 3  # a deletion that leaves fewer words leaves no claim to check


@dataclass(frozen=True)
class Candidate:
    row: int  # the output's position in the batch
    span: int  # the span's index in that output's spans
    start: int  # character offsets in the output of the text replaced
    end: int
    replacement: str
    premise: str  # the sentence's best chunk, as it lies in the source
    sentence: str  # the edited sentence
    original: str  # the sentence as it is


def span_candidates(
    row: int, index: int, span: dict[str, Any], output: str, source: str, sentence: dict[str, Any]
) -> list[Candidate]:
    """The edits of one span's sentence: replacements from its evidence sentences, and the span's deletion."""
    start, end = int(span["start"]), int(span["end"])
    s_start, s_end = int(sentence["start"]), int(sentence["end"])
    premise = source[int(sentence["chunk_start"]) : int(sentence["chunk_end"])]
    original = output[s_start:s_end]
    text = output[start:end]
    options: list[tuple[int, int, str]] = []
    evidence = " ".join(source[int(e["start"]) : int(e["end"])] for e in sentence.get("evidence", []))
    for pattern in (NUMBER, NAME):
        matches = list(pattern.finditer(text))
        if matches and evidence:
            # the span's own number or name is what changes: replace that part, keep the rest of the span
            first = matches[0]
            for option in alternatives(pattern, text, evidence, output):
                options.append((start + first.start(), start + first.end(), option))
    # deletion, the fallback for content no evidence sentence offers a replacement for (not a sentence's opening
    # words, its subject as a rule): the span and the space before it
    a, b = start, end
    if not options and a > s_start and output[a - 1] == " ":
        a -= 1
        if len((output[s_start:a] + output[b:s_end]).split()) >= MIN_WORDS_LEFT:
            options.append((a, b, ""))
    candidates = []
    for a, b, replacement in options:
        edited = output[s_start:a] + replacement + output[b:s_end]
        candidates.append(Candidate(row, index, a, b, replacement, premise, edited, original))
    return candidates


def choose_edits(
    candidates: Sequence[Candidate], supports: Sequence[float], originals: dict[tuple[str, str], float], threshold: float
) -> dict[tuple[int, int], tuple[Candidate, float, float]]:
    """(row, span) -> (the best candidate, its support, the sentence's own), where it reaches `threshold` and beats the
    sentence's own support."""
    best: dict[tuple[int, int], tuple[Candidate, float]] = {}
    for candidate, support in zip(candidates, supports, strict=True):
        key = (candidate.row, candidate.span)
        if key not in best or support > best[key][1]:
            best[key] = (candidate, float(support))
    chosen = {}
    for key, (candidate, support) in best.items():
        before = originals[(candidate.premise, candidate.original)]
        if support >= threshold and support > before:
            chosen[key] = (candidate, support, before)
    return chosen


def apply_edits(output: str, edits: Sequence[tuple[Candidate, float, float]]) -> tuple[str, list[dict[str, Any]]]:
    """The output with the edits applied (left to right, an edit overlapping an earlier one skipped), and the edits."""
    pieces, records, position = [], [], 0
    for candidate, support, before in sorted(edits, key=lambda item: item[0].start):
        if candidate.start < position:
            continue
        pieces += [output[position : candidate.start], candidate.replacement]
        records.append(
            {
                "start": candidate.start,
                "end": candidate.end,
                "text": output[candidate.start : candidate.end],
                "replacement": candidate.replacement,
                "support_before": before,
                "support_after": support,
            }
        )
        position = candidate.end
    pieces.append(output[position:])
    return "".join(pieces), records
