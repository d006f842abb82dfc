"""Unsupported words from the token head and the source's words, combined by weights fit on validation tokens.

The token head (factlab.models.token_support) learns from synthetic edits, and human annotators mark
something wider: whole invented phrases, function words included. Two cheap signals of the source carry what
the head misses: a word none of whose stems occurs in the source (`novel`) and a word whose bigrams with both
neighbours are absent from the source (`bigram_novel`). Each word of an output (factlab.text.words.MARKED_WORD: punctuation stands
alone) gets, beside the head's P(unsupported) of its most unsupported piece, these two, and the three averaged
over the words within one and within two positions, since annotated spans run over several words
(`FEATURES`). A logistic regression (`TokenLocaliser`) turns them into one P(unsupported) per word; its
weights are fit on the validation tokens of human span annotations (factlab metaeval localisation, which
records them) and never on evaluated ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from factlab.models.token_words import piece_arrays, word_unsupported

FEATURES = (
    "head",
    "head_near1",
    "head_near2",
    "novel",
    "novel_near1",
    "novel_near2",
    "bigram_novel",
    "bigram_novel_near1",
    "bigram_novel_near2",
)
NEIGHBOURHOODS = (1, 2)  # the `_near<k>` features: means over the words at most k positions away (the word included)
PART = re.compile(r"[a-z0-9]+")
# Suffixes stripped before a word is looked up in the source, so that a plural or a tense is not news.
SUFFIXES = ("ing", "ed", "es", "s")


def word_parts(text: str) -> list[str]:
    """The lower-cased letter/digit runs of `text` ("U.S.-based" -> u, s, based)."""
    return PART.findall(text.lower())


def stem(part: str) -> str:
    """`part` without one of `SUFFIXES` (parts over four characters) and then without a final "e" (stems over three):
    "bridges", "bridge" -> "bridg"; "making", "make" -> "mak"."""
    for suffix in SUFFIXES:
        if len(part) > 4 and part.endswith(suffix):
            part = part[: -len(suffix)]
            break
    return part[:-1] if len(part) > 3 and part.endswith("e") else part


def neighbour_mean(values: np.ndarray, reach: int) -> np.ndarray:
    """Each position's mean over positions at most `reach` away, clipped at the ends."""
    if reach == 0 or len(values) == 0:
        return values.astype(float)
    sums = np.concatenate([[0.0], np.cumsum(values, dtype=float)])
    index = np.arange(len(values))
    low, high = np.maximum(index - reach, 0), np.minimum(index + reach + 1, len(values))
    return (sums[high] - sums[low]) / (high - low)


@dataclass(frozen=True)
class WordFeatures:
    spans: np.ndarray  # (words, 2) [start, end) character spans in the output
    values: np.ndarray  # (words, len(FEATURES))


def lexical_novelty(words: Sequence[str], source: str) -> tuple[np.ndarray, np.ndarray]:
    """(novel, bigram_novel) of each word against the source: 1 when a stem of the word is not among the source's,
    and when neither its bigram with the previous word nor with the next occurs in the source (an edge of the
    output has no bigram there). A word without letters or digits (punctuation) is 0 on both."""
    source_parts = word_parts(source)
    stems = {stem(part) for part in source_parts}
    bigrams = set(zip(source_parts, source_parts[1:], strict=False))
    parts = [word_parts(word) for word in words]
    content = [index for index, found in enumerate(parts) if found]
    novel, bigram_novel = np.zeros(len(words)), np.zeros(len(words))
    for position, index in enumerate(content):
        found = parts[index]
        novel[index] = float(any(stem(part) not in stems for part in found))
        before = position == 0 or (parts[content[position - 1]][-1], found[0]) not in bigrams
        after = position == len(content) - 1 or (found[-1], parts[content[position + 1]][0]) not in bigrams
        bigram_novel[index] = float(before and after)
    return novel, bigram_novel


def word_features(output: str, source: str, offsets: np.ndarray, unsupported: np.ndarray) -> WordFeatures:
    """`FEATURES` of each word of `output` that has pieces, from its pieces' P(unsupported) and the source."""
    words = word_unsupported(output, offsets, unsupported)
    spans = np.asarray([[start, end] for start, end, _ in words], dtype=np.int64).reshape(-1, 2)
    head = np.asarray([probability for _, _, probability in words], dtype=float)
    novel, bigram_novel = lexical_novelty([output[start:end] for start, end, _ in words], source)
    columns = []
    for signal in (head, novel, bigram_novel):
        columns += [signal.astype(float)] + [neighbour_mean(signal, reach) for reach in NEIGHBOURHOODS]
    return WordFeatures(spans=spans, values=np.column_stack(columns) if len(words) else np.zeros((0, len(FEATURES))))


@dataclass(frozen=True)
class TokenLocaliser:
    """P(unsupported) of a word: the logistic function of its `FEATURES` under fitted weights."""

    weights: tuple[float, ...]
    intercept: float
    features: tuple[str, ...] = FEATURES

    def __post_init__(self) -> None:
        if tuple(self.features) != FEATURES or len(self.weights) != len(FEATURES):
            raise ValueError(f"a localiser needs one weight per feature of {FEATURES}, got {list(self.features)}")

    def unsupported(self, values: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(values @ np.asarray(self.weights) + self.intercept)))

    def words(self, output: str, source: str, offsets: np.ndarray, unsupported: np.ndarray) -> list[tuple[int, int, float]]:
        """(start, end, P(unsupported)) of each word of `output` that has pieces."""
        found = word_features(output, source, offsets, unsupported)
        probabilities = self.unsupported(found.values)
        return [(int(start), int(end), float(p)) for (start, end), p in zip(found.spans, probabilities, strict=True)]

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "weights": list(self.weights), "intercept": self.intercept}

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> TokenLocaliser:
        return cls(
            weights=tuple(float(w) for w in record["weights"]),
            intercept=float(record["intercept"]),
            features=tuple(record["features"]),
        )


def fit_localiser(values: np.ndarray, unsupported: np.ndarray) -> TokenLocaliser:
    """Weights of a logistic regression (L2, C = 1, lbfgs: deterministic) of the 0/1 labels on the features."""
    from sklearn.linear_model import LogisticRegression

    labels = np.asarray(unsupported, dtype=np.int64)
    if values.shape != (len(labels), len(FEATURES)) or len(set(labels.tolist())) < 2:
        raise ValueError(f"fitting needs a (tokens, {len(FEATURES)}) matrix and both labels; got {values.shape}")
    model = LogisticRegression(C=1.0, max_iter=2000).fit(values, labels)
    return TokenLocaliser(weights=tuple(float(w) for w in model.coef_[0]), intercept=float(model.intercept_[0]))


def scored_words(pieces: Any, output: str, source: str, localiser: TokenLocaliser | None) -> list[tuple[int, int, float]]:
    """(start, end, P(unsupported)) of each word of a scored output (a score table's token detail: word pieces and
    their support): the localiser's where one is given, else the head's alone; none without token detail."""
    arrays = piece_arrays(pieces)
    if arrays is None:
        return []
    return localiser.words(output, source, *arrays) if localiser is not None else word_unsupported(output, *arrays)
