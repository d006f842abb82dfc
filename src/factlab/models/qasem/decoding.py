"""From the tagger's B/I/O word probabilities to a predicate's argument spans.

Plain argmax over B/I/O over-generates: the trained tagger leaves low-confidence fragments
("the", "of", "group of") and splits one argument into pieces ("various | translators |
scholars") where B narrowly beats I. `SpanDecoding` holds five knobs, set per predicate kind
(verbal, nominal) because QA-SRL GS and QANom annotate at different densities:

- `outside_bias`: subtracted from O's log-probability; > 0 tags more words as argument words;
- `continue_bias`: added to I's log-probability; > 0 continues the open span rather than
  opening a new one at a B/I tie;
- `min_confidence`: a span is kept when its words' mean P(not O) (unbiased) reaches it;
- `require_content_word`: a span of stop words and punctuation only is dropped;
- `max_arguments`: at most this many spans per predicate, the most confident (0: no cap); on
  QANom dev, a predicate's third most confident span is right in 35% of cases, its fifth in 24%.

`tune_decoding` picks them on held-out gold (train.py: after training, on each kind's
validation set) from `DECODING_GRID`; the defaults are plain argmax.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from factlab.models.qasem.evaluation import Argument, ArgumentCounts, PredicateKey, Span, score_arguments
from factlab.models.qasem.model import BIO_I, BIO_O, bio_spans

EPSILON = 1e-9


@dataclass(frozen=True)
class SpanDecoding:
    outside_bias: float = 0.0
    continue_bias: float = 0.0
    min_confidence: float = 0.0
    require_content_word: bool = False
    max_arguments: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SpanDecoding:
        return cls(**data)


# Default first: ties go to the earliest (the simplest) setting.
DECODING_GRID: tuple[SpanDecoding, ...] = tuple(
    SpanDecoding(outside, continuation, confidence, content, cap)
    for cap, content, confidence, continuation, outside in itertools.product(
        (0, 5, 4, 3), (False, True), (0.0, 0.5, 0.55, 0.6, 0.65), (0.0, 0.5, 1.0), (0.0, 0.5, 1.0, 1.5, 2.0)
    )
)


def decode_spans(probabilities: np.ndarray, content: Sequence[bool], decoding: SpanDecoding) -> list[Span]:
    """[start, end) argument spans from (n_words, 3) B/I/O probabilities (columns BIO_O, BIO_B,
    BIO_I); `content[i]`: word i is not a stop word or punctuation."""
    if probabilities.ndim != 2 or probabilities.shape[1] != 3 or len(content) != len(probabilities):
        raise ValueError(f"probabilities {probabilities.shape} and {len(content)} content flags do not describe one sentence")
    scores = np.log(probabilities + EPSILON)
    scores[:, BIO_O] -= decoding.outside_bias
    scores[:, BIO_I] += decoding.continue_bias
    kept: list[tuple[float, Span]] = []
    for start, end in bio_spans(scores.argmax(-1).tolist()):
        confidence = float(1.0 - probabilities[start:end, BIO_O].mean())
        if confidence < decoding.min_confidence:
            continue
        if decoding.require_content_word and not any(content[start:end]):
            continue
        kept.append((confidence, (start, end)))
    if decoding.max_arguments:
        kept = sorted(kept, key=lambda item: -item[0])[: decoding.max_arguments]  # stable: ties keep sentence order
    return sorted(span for _, span in kept)


@dataclass(frozen=True)
class TaggedPredicate:
    """The tagger's output for one predicate of one sentence, ready to decode."""

    key: PredicateKey
    probabilities: np.ndarray
    content: list[bool]


def score_decoding(
    tagged: Sequence[TaggedPredicate], gold: Mapping[PredicateKey, Sequence[Argument]], decoding: SpanDecoding
) -> ArgumentCounts:
    predicted = {
        item.key: [Argument(*span) for span in decode_spans(item.probabilities, item.content, decoding)] for item in tagged
    }
    return score_arguments(predicted, {item.key: gold.get(item.key, ()) for item in tagged})


def tune_decoding(
    tagged: Sequence[TaggedPredicate],
    gold: Mapping[PredicateKey, Sequence[Argument]],
    grid: Sequence[SpanDecoding] = DECODING_GRID,
) -> tuple[SpanDecoding, list[dict[str, Any]]]:
    """The grid setting with the best unlabelled F1 on `tagged` (ties: the earliest), and the
    scores of every setting."""
    if not tagged:
        raise ValueError("no tagged predicates to tune the decoding on")
    results = []
    for decoding in grid:
        counts = score_decoding(tagged, gold, decoding)
        results.append(
            {
                **decoding.to_json(),
                "unlabeled_precision": counts.unlabeled_precision,
                "unlabeled_recall": counts.unlabeled_recall,
                "unlabeled_f1": counts.unlabeled_f1,
            }
        )
    best = max(range(len(grid)), key=lambda number: (round(results[number]["unlabeled_f1"], 6), -number))
    return grid[best], results
