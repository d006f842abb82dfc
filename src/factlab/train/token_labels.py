"""Token supervision for the aligner's token head: which characters of each training claim are unsupported.

Every mixture row gets `unsupported_spans`: a JSON list of [start, end) character spans of `text_b`
its premise does not support, `[]` when the whole claim is supported, or null when the row says
nothing about its tokens (a negative NLI pair: some words are unsupported, which is unknown). The
sources, all by construction or by annotation, never from an evaluated benchmark:
- supported pairs of any corpus (entailment, a kept or paraphrased synthetic claim): `[]`;
- synthetic edits (factlab.train.synthetic): the characters the transform changed, found as the
  span between the longest common prefix and suffix of the original and the edited claim, grown to
  whole words (a deletion, e.g. a removed "not", marks the words on either side of it); a claim
  from another document, or one removed from its premise, is unsupported whole;
- WiCE's annotated subclaims: the tokens flagged `non_supported_spans` at their `token_offsets`;
- HaluEval's hallucinated answers: the answer inside the question + answer statement.

`piece_labels` reads spans onto word pieces: 1 where a piece overlaps an unsupported span, 0 elsewhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import numpy as np

WHOLE_CLAIM_TRANSFORMS = ("other_document", "claim_removed")
SUPPORTED_TRANSFORMS = ("keep", "paraphrase")
NON_SPACE = re.compile(r"\S+")

Span = tuple[int, int]


def to_words(text: str, start: int, end: int) -> Span | None:
    """The smallest run of whole words of `text` covering [start, end); for an empty range (a deletion) the words
    touching it on either side. None when `text` has no word there."""
    words = [(m.start(), m.end()) for m in NON_SPACE.finditer(text)]
    if start < end:
        covering = [(s, e) for s, e in words if s < end and e > start]
    else:
        covering = [(s, e) for s, e in words if s <= start <= e]
        if not covering:  # a deletion in a run of spaces: the words before and after
            before = [(s, e) for s, e in words if e <= start][-1:]
            after = [(s, e) for s, e in words if s >= start][:1]
            covering = before + after
    if not covering:
        return None
    return covering[0][0], covering[-1][1]


def edited_span(original: str, edited: str) -> Span | None:
    """The words of `edited` that differ from `original`: between their common prefix and common suffix."""
    if original == edited:
        return None
    prefix = 0
    limit = min(len(original), len(edited))
    while prefix < limit and original[prefix] == edited[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and original[-1 - suffix] == edited[-1 - suffix]:
        suffix += 1
    return to_words(edited, prefix, len(edited) - suffix)


def synthetic_spans(transform: str, original: str, claim: str) -> list[Span] | None:
    """The unsupported spans of a synthetic claim; None when the edit cannot be located."""
    if transform in SUPPORTED_TRANSFORMS:
        return []
    if transform in WHOLE_CLAIM_TRANSFORMS:
        return [(0, len(claim))] if claim.strip() else None
    span = edited_span(original, claim)
    return [span] if span is not None else None


def flagged_token_spans(token_offsets: Sequence[Sequence[int]], flags: Sequence[bool]) -> list[Span]:
    """The spans of the flagged tokens (WiCE's `non_supported_spans` at `token_offsets`)."""
    return [(int(start), int(end)) for (start, end), flag in zip(token_offsets, flags, strict=True) if flag]


def answer_span(statement: str, answer: str) -> list[Span] | None:
    """The last occurrence of `answer` in the question + answer `statement` (HaluEval's `qa_statement`)."""
    start = statement.rfind(answer.strip())
    return [(start, start + len(answer.strip()))] if start >= 0 and answer.strip() else None


def dumps(spans: list[Span] | None) -> str | None:
    return None if spans is None else json.dumps([list(span) for span in spans])


def loads(value: object) -> list[Span] | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return [(int(start), int(end)) for start, end in json.loads(str(value))]


def piece_labels(offsets: np.ndarray, spans: list[Span] | None) -> np.ndarray:
    """1 for each word piece ([start, end) `offsets`) overlapping an unsupported span, else 0; all -100 when unknown."""
    if spans is None:
        return np.full(len(offsets), -100, dtype=np.int64)
    labels = np.zeros(len(offsets), dtype=np.int64)
    for start, end in spans:
        labels |= ((offsets[:, 0] < end) & (offsets[:, 1] > start)).astype(np.int64) if len(offsets) else labels
    return labels
