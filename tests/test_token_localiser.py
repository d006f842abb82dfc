"""The token localiser (factlab.models.token_localiser): its source features worked by hand, its neighbourhood means
against pandas, its logistic reading by hand, and the places that fit and read it (the localisation analysis, the
checker's spans)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from test_metaeval_localisation import HAND_GOLD, run, sentence, write_inputs

from factlab.models.token_localiser import (
    FEATURES,
    TokenLocaliser,
    lexical_novelty,
    neighbour_mean,
    scored_words,
    stem,
    word_features,
)


def test_lexical_novelty_worked_by_hand():
    source = "The mayor opened two new bridges in Leeds on Monday."
    words = ["The", "mayor", "opened", "a", "bridge", "in", "York", "on", "Monday", "."]
    novel, bigram_novel = lexical_novelty(words, source)
    # "a" and "York" are not in the source; "bridge" is "bridges" without its plural
    assert novel.tolist() == [0, 0, 0, 1, 0, 0, 1, 0, 0, 0]
    # bigrams of the source: the-mayor, mayor-opened, ..., in-leeds, leeds-on, on-monday. "opened" keeps
    # mayor-opened; "a" has neither opened-a nor a-bridge; "bridge" neither a-bridge nor bridge-in (the source
    # says bridges-in); "in" keeps none (bridge-in, in-york); "York" none; "on" keeps on-monday; the full stop has
    # no letters
    assert bigram_novel.tolist() == [0, 0, 0, 1, 1, 1, 1, 0, 0, 0]
    assert stem("bridges") == stem("bridge") == "bridg" and stem("making") == stem("make") == "mak" and stem("was") == "was"


def test_neighbour_mean_is_a_centred_rolling_mean():
    values = np.array([0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    for reach in (1, 2, 3):
        expected = pd.Series(values).rolling(2 * reach + 1, center=True, min_periods=1).mean().to_numpy()
        assert neighbour_mean(values, reach) == pytest.approx(expected)


def test_word_features_take_a_words_most_unsupported_piece():
    output, source = "Dogs fly home.", "Dogs run home."
    offsets = np.array([[0, 4], [5, 6], [6, 8], [9, 13], [13, 14]])  # "fly" as f + ly
    found = word_features(output, source, offsets, np.array([0.1, 0.2, 0.7, 0.1, 0.0]))
    assert found.spans.tolist() == [[0, 4], [5, 8], [9, 13], [13, 14]]
    column = dict(zip(FEATURES, found.values.T, strict=True))
    assert column["head"] == pytest.approx([0.1, 0.7, 0.1, 0.0])
    assert column["head_near1"] == pytest.approx([0.4, 0.3, 0.8 / 3, 0.05])
    assert column["novel"].tolist() == [0, 1, 0, 0]
    # no dogs-fly, no fly-home in the source; an edge of the output has no bigram there; the full stop has no letters
    assert column["bigram_novel"].tolist() == [1, 1, 1, 0]


def test_localiser_reading_worked_by_hand():
    weights = (2.0, 0, 0, 1.0, 0, 0, 0, 0, 0)
    localiser = TokenLocaliser(weights=weights, intercept=-1.0)
    values = np.zeros((1, len(FEATURES)))
    values[0, 0], values[0, 3] = 0.5, 1.0
    assert localiser.unsupported(values) == pytest.approx([1 / (1 + math.exp(-(2 * 0.5 + 1 - 1)))])
    assert TokenLocaliser.from_dict(json.loads(json.dumps(localiser.to_dict()))) == localiser
    with pytest.raises(ValueError, match="one weight per feature"):
        TokenLocaliser(weights=(1.0,), intercept=0.0, features=("head",))


def test_checker_marks_the_words_the_localiser_finds_unsupported():
    from factlab.checker.explain import span_records

    output, source = "Dogs fly.", "Dogs bark at night."
    pieces = [
        {"start": 0, "end": 4, "support": 0.6},
        {"start": 5, "end": 8, "support": 0.6},
        {"start": 8, "end": 9, "support": 0.9},
    ]
    novel_only = TokenLocaliser(weights=(0, 0, 0, 10.0, 0, 0, 0, 0, 0), intercept=-5.0)
    assert [(s, e) for s, e, p in scored_words(pieces, output, source, novel_only) if p > 0.5] == [(5, 8)]
    result = {"tokens": pieces, "sentences": [{"start": 0, "end": 9}]}
    assert [span["text"] for span in span_records(result, output, 0.5, source, novel_only)] == ["fly"]
    # the head alone (P = 0.4 everywhere) marks nothing at 0.5
    assert span_records(result, output, 0.5, source) == []


def test_localisation_fits_the_localiser_on_validation_tokens_only(tmp_path):
    supports = {"d1": [0.9, 0.9, 0.9, 0.4, 0.3, 0.9], "d2": [0.2, 0.3, 0.9], "t1": [0.9] * 6, "t2": [0.9, 0.9, 0.1, 0.9]}
    sources = {"d1": "Cats purr loudly.", "d2": "Fish swim.", "t1": "Fish swim. Fish fly.", "t2": "Snow is cold."}
    gold_rows = [row for row in HAND_GOLD if row["example_id"] in supports]
    scored = [(row["example_id"], [sentence(row["output"], row["output"], 0.5)]) for row in gold_rows]
    gold, path = write_inputs(tmp_path, HAND_GOLD, scored)
    frame = pd.read_parquet(path)
    frame["tokens"] = [
        [
            {"start": start, "end": end, "support": value}
            for (start, end), value in zip(json.loads(row["token_offsets"]), supports[row["example_id"]], strict=True)
        ]
        for row in gold_rows
    ]
    frame.to_parquet(path)
    source_table = tmp_path / "sources.parquet"
    pd.DataFrame({"example_id": list(sources), "source": list(sources.values())}).to_parquet(source_table)
    table, report = run(tmp_path, gold, [path], sources=str(source_table))
    fitted = json.loads((tmp_path / "token_localiser.json").read_text())["alignscore"]
    # the dev outputs d1 (6 tokens) and d2 (3) fit it; the test outputs do not
    assert fitted["fitted_on"] == {"gold_tokens": {"part": "validation", "tokens": 9}}
    assert report["localisers"]["alignscore"] == fitted
    scorers = set(pd.read_csv(tmp_path / "tokens.csv")["scorer"])
    assert scorers == {"alignscore", "alignscore_tokens", "alignscore_localiser"}
