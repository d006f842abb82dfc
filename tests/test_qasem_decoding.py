"""Span decoding of the QASem tagger's B/I/O probabilities (factlab.models.qasem.decoding),
on probability rows worked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from factlab.models.qasem.decoding import (
    DECODING_GRID,
    SpanDecoding,
    TaggedPredicate,
    decode_spans,
    score_decoding,
    tune_decoding,
)
from factlab.models.qasem.evaluation import Argument
from factlab.models.qasem.model import BIO_B, BIO_I, BIO_O, bio_spans


def rows(*triples: tuple[float, float, float]) -> np.ndarray:
    """Rows given as (P(O), P(B), P(I)), placed in the model's column order."""
    table = np.zeros((len(triples), 3))
    for number, (outside, begin, inside) in enumerate(triples):
        table[number, [BIO_O, BIO_B, BIO_I]] = (outside, begin, inside)
    return table


# "the various translators and scholars": a weak lone "the", then B narrowly beating I on "scholars".
PROBABILITIES = rows((0.55, 0.45, 0.0), (0.1, 0.8, 0.1), (0.1, 0.1, 0.8), (0.2, 0.1, 0.7), (0.1, 0.5, 0.4), (0.9, 0.05, 0.05))
CONTENT = [False, True, True, False, True, False]


def test_default_decoding_is_plain_argmax() -> None:
    argmax = bio_spans(PROBABILITIES.argmax(-1).tolist())
    assert decode_spans(PROBABILITIES, CONTENT, SpanDecoding()) == argmax == [(1, 4), (4, 5)]


def test_each_knob_moves_the_spans_the_way_it_says() -> None:
    # O bias 0.5: "the" (log .45 + .5 > log .55) becomes an argument word and opens a span.
    assert decode_spans(PROBABILITIES, CONTENT, SpanDecoding(outside_bias=0.5)) == [(0, 1), (1, 4), (4, 5)]
    # I bias 0.5: "scholars" (log .4 + .5 > log .5) continues the open span.
    assert decode_spans(PROBABILITIES, CONTENT, SpanDecoding(continue_bias=0.5)) == [(1, 5)]
    # Confidence floor: the mean P(not O) of (1, 4) is (.9 + .9 + .8) / 3 = .8667; of (4, 5) it is .9.
    assert decode_spans(PROBABILITIES, CONTENT, SpanDecoding(min_confidence=0.87)) == [(4, 5)]
    assert decode_spans(PROBABILITIES, CONTENT, SpanDecoding(min_confidence=0.86)) == [(1, 4), (4, 5)]
    # A span of stop words only goes; with the O bias "the" is such a span.
    assert decode_spans(PROBABILITIES, CONTENT, SpanDecoding(outside_bias=0.5, require_content_word=True)) == [(1, 4), (4, 5)]
    # A cap keeps the most confident spans, in sentence order: "the" (.45) < (1, 4) (.8667) < (4, 5) (.9).
    assert decode_spans(PROBABILITIES, CONTENT, SpanDecoding(outside_bias=0.5, max_arguments=2)) == [(1, 4), (4, 5)]
    assert decode_spans(PROBABILITIES, CONTENT, SpanDecoding(outside_bias=0.5, max_arguments=1)) == [(4, 5)]


def test_bad_shapes_are_errors() -> None:
    with pytest.raises(ValueError, match="one sentence"):
        decode_spans(PROBABILITIES, CONTENT[:-1], SpanDecoding())
    with pytest.raises(ValueError, match="one sentence"):
        decode_spans(PROBABILITIES[:, :2], CONTENT, SpanDecoding())


def test_tuning_picks_the_best_setting_and_ties_go_to_the_earliest() -> None:
    key = ("sentence", 7)
    tagged = [TaggedPredicate(key, PROBABILITIES, CONTENT)]
    gold = {key: [Argument(1, 5)]}  # one argument: "various translators and scholars"
    assert score_decoding(tagged, gold, SpanDecoding()).unlabeled_f1 == pytest.approx(2 * 0.5 * 1 / 1.5)  # (1,4) matches, IOU .75
    chosen, grid = tune_decoding(tagged, gold)
    assert len(grid) == len(DECODING_GRID) and grid[0] == {
        **SpanDecoding().to_json(),
        **{k: grid[0][k] for k in grid[0] if "unlabeled" in k},
    }
    best = max(row["unlabeled_f1"] for row in grid)
    assert best == 1.0 and score_decoding(tagged, gold, chosen).unlabeled_f1 == 1.0
    first_best = next(setting for setting, row in zip(DECODING_GRID, grid, strict=True) if row["unlabeled_f1"] == best)
    assert chosen == first_best == SpanDecoding(continue_bias=0.5)
    with pytest.raises(ValueError, match="no tagged"):
        tune_decoding([], gold)
