"""Token supervision for the aligner's token head: which characters of each training claim are unsupported.

Every mixture row gets `unsupported_spans`: a JSON list of [start, end) character spans of `text_b`
its premise does not support, `[]` when the whole claim is supported, or null when the row says
nothing about its tokens (a negative NLI pair: some words are unsupported, which is unknown). The
sources, all by construction or by annotation, never from an evaluated benchmark:
- supported pairs of any corpus (entailment, a kept or paraphrased synthetic claim): `[]`;
- synthetic edits (factlab.train.synthetic.transforms): the words the transform changed, from a word-level diff
  of the original and the edited claim (Python's difflib: each replaced or inserted run of words; a
  deletion, e.g. a removed "not", marks the word after it, or before it at the end), so a swap of two
  arguments marks both and not the words between; a claim from another document, or one removed
  from its premise, is unsupported whole;
- WiCE's annotated subclaims: the tokens flagged `non_supported_spans` at their `token_offsets`;
- HaluEval's hallucinated answers: the answer inside the question + answer statement.

`piece_labels` reads spans onto word pieces: 1 where a piece overlaps an unsupported span, 0 elsewhere.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence

import numpy as np

from factlab.text.words import WHITESPACE_WORD

WHOLE_CLAIM_TRANSFORMS = ("other_document", "claim_removed")
# Each synthetic error's FRANK category (factlab.models.aligner.ERROR_TYPES): what the type head learns. A swapped
# argument or a replaced triple subject/object puts a wrong entity in a role (EntE); a number, date or time is a
# circumstance (CircE); a negation or a replaced relation changes the predicate (RelE); a pronoun its coreference
# (CorefE); an inserted detail, a claim from elsewhere, or one removed from its premise, is out of the article (OutE).
ERROR_TYPE_OF = {
    "entity_swap": "EntE",
    "argument_swap": "EntE",
    "factedit_subject": "EntE",
    "factedit_object": "EntE",
    "number_swap": "CircE",
    "negation": "RelE",
    "factedit_relation": "RelE",
    "pronoun_swap": "CorefE",
    "phrase_insertion": "OutE",
    "sentence_insertion": "OutE",
    "other_document": "OutE",
    "claim_removed": "OutE",
}
SUPPORTED_TRANSFORMS = ("keep", "paraphrase")

Span = tuple[int, int]


def edited_spans(original: str, edited: str) -> list[Span]:
    """The character spans of `edited`'s words that a word-level diff against `original` finds changed."""
    before = [m.group() for m in WHITESPACE_WORD.finditer(original)]
    words = [(m.start(), m.end()) for m in WHITESPACE_WORD.finditer(edited)]
    matcher = difflib.SequenceMatcher(a=before, b=[edited[s:e] for s, e in words], autojunk=False)
    spans: list[Span] = []
    for tag, _, _, first, stop in matcher.get_opcodes():
        if tag == "equal" or not words:
            continue
        if first == stop:  # a deletion: the word now at its place, or the last word
            first, stop = (first, first + 1) if first < len(words) else (len(words) - 1, len(words))
        span = (words[first][0], words[stop - 1][1])
        if spans and span[0] <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], span[1]))
        else:
            spans.append(span)
    return spans


def synthetic_spans(transform: str, original: str, claim: str) -> list[Span] | None:
    """The unsupported spans of a synthetic claim; None when the edit cannot be located."""
    if transform in SUPPORTED_TRANSFORMS:
        return []
    if transform in WHOLE_CLAIM_TRANSFORMS:
        return [(0, len(claim))] if claim.strip() else None
    return edited_spans(original, claim) or None


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
