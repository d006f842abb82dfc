"""Word pieces' P(unsupported) read as words and phrases a reader sees (no model needed: the score tables' token
detail, or factlab.models.token_support's output).

A word (factlab.text.words.MARKED_WORD: punctuation stands alone) is as unsupported as its most unsupported
piece; `phrases_from_words` keeps the words above a threshold and merges those separated only by spaces, each
phrase with its largest probability.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Any

import numpy as np

from factlab.text.words import MARKED_WORD


def piece_arrays(pieces: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """(offsets, P(unsupported)) of a score table's token detail (factlab.score.alignscore `tokens`: each word
    piece's start, end and support = 1 - P(unsupported)); None where the table has no token detail."""
    if pieces is None or isinstance(pieces, float) or len(pieces) == 0:
        return None
    offsets = np.asarray([[int(piece["start"]), int(piece["end"])] for piece in pieces], dtype=np.int64)
    return offsets, np.asarray([1.0 - float(piece["support"]) for piece in pieces])


def word_unsupported(text: str, offsets: np.ndarray, unsupported: np.ndarray) -> list[tuple[int, int, float]]:
    """(start, end, P(unsupported)) of each word of `text` (`MARKED_WORD`) that has pieces: its most unsupported piece."""
    words = []
    for match in MARKED_WORD.finditer(text):
        inside = (offsets[:, 0] < match.end()) & (offsets[:, 1] > match.start()) if len(offsets) else np.zeros(0, bool)
        if inside.any():
            words.append((match.start(), match.end(), float(unsupported[inside].max())))
    return words


def cut_at_breaks(words: Sequence[tuple[int, int, float]], breaks: Sequence[int]) -> list[tuple[int, int, float]]:
    """`words` with each word that a sentence starts inside (sorted `breaks`) cut there, each part keeping the word's
    probability: a word with inner dots can run across a sentence end ("me.But"), and a phrase must lie in one
    sentence."""
    cut = []
    for start, end, probability in words:
        for inner in breaks[bisect_right(breaks, start) : bisect_left(breaks, end)]:
            cut.append((start, inner, probability))
            start = inner
        cut.append((start, end, probability))
    return cut


def phrases_from_words(
    text: str, words: Sequence[tuple[int, int, float]], threshold: float, breaks: Sequence[int] = ()
) -> list[tuple[int, int, float]]:
    """(start, end, probability) of each phrase of flagged words (P(unsupported) > threshold, i.e. support below
    1 - threshold, the localisation analysis's rule); words separated only by spaces merge, each phrase with its
    largest probability, except across a break (the start of a sentence, sorted), so a phrase lies in one sentence."""
    phrases: list[list[float]] = []
    for start, end, probability in words:
        if probability <= threshold:
            continue
        after_break = bisect_right(breaks, start) != bisect_right(breaks, int(phrases[-1][0])) if phrases else False
        if phrases and not after_break and not text[int(phrases[-1][1]) : start].strip():
            phrases[-1][1], phrases[-1][2] = end, max(phrases[-1][2], probability)
        else:
            phrases.append([start, end, probability])
    return [(int(start), int(end), float(probability)) for start, end, probability in phrases]
