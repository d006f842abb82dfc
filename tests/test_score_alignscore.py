"""AlignScore's aggregation over real preprocessed text: max over chunks, mean (or min) over sentences."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tiny_aligner import tiny_aligner

from factlab.errors import FactlabError
from factlab.models.aligner import AlignerScorer
from factlab.models.engine import EngineSettings, reference_scores
from factlab.preprocess.benchmark import sentence_units
from factlab.preprocess.chunking import alignscore_chunks
from factlab.preprocess.sentences import Sentence
from factlab.score.alignscore import AlignScoreSettings, score_benchmark

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def examples() -> pd.DataFrame:
    frame = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv").head(3)
    return pd.DataFrame(
        {
            "example_id": frame["id"],
            "doc_id": [f"doc{i}" for i in range(len(frame))],
            "source": frame["document"],
            "output": frame["summary"] + " It was reported on monday.",  # two output sentences each
        }
    )


@pytest.fixture(scope="module")
def scorer() -> AlignerScorer:
    return tiny_aligner(3)


def test_scores_are_mean_of_max_over_chunks(examples: pd.DataFrame, scorer: AlignerScorer) -> None:
    sentences, _ = sentence_units(examples, "fixture")
    settings = AlignScoreSettings(words_per_chunk=60)
    scores, counts = score_benchmark(examples, sentences, scorer, settings, EngineSettings(progress=False))
    assert counts["examples"] == 3 and counts["examples_without_output_sentences"] == 0
    first = scores.iloc[0]
    source_sentences = [
        Sentence(text, start, end)
        for text, start, end in sentences[(sentences["side"] == "source") & (sentences["doc_id"] == "doc0")][
            ["text", "start", "end"]
        ].itertuples(index=False)
    ]
    chunks, _ = alignscore_chunks(source_sentences, 60)
    assert first.n_chunks == len(chunks) > 1  # 60-word chunks of a real article
    assert first.n_sentences == len(first.sentences) == 2
    for item in first.sentences:
        # every chunk scored alone by AlignScore's reference loop: the detail keeps the best one
        alone = reference_scores(scorer, [(chunk.text, item["sentence"]) for chunk in chunks], pad_to=256)
        assert item["support"] == pytest.approx(alone.max(), abs=1e-5)
        best = chunks[int(np.argmax(alone))]
        assert (item["chunk_start"], item["chunk_end"]) == (best.start, best.end)
        assert examples["output"].iloc[0][item["start"] : item["end"]] == item["sentence"]  # offsets into the output
    for row in scores.itertuples():
        assert row.score == pytest.approx(reference_example_score(sentences, row.example_id, scorer, np.mean), abs=1e-5)


def reference_example_score(sentences: pd.DataFrame, example_id: str, scorer: AlignerScorer, aggregate: Callable) -> float:
    """AlignScore's recipe written out with its reference loop: every (60-word chunk, output sentence) pair scored
    alone, the best chunk per sentence, then `aggregate` over the sentences."""
    outputs = sentences[(sentences["side"] == "output") & (sentences["example_id"] == example_id)]
    document = sentences[(sentences["side"] == "source") & (sentences["doc_id"] == outputs["doc_id"].iloc[0])]
    chunks, _ = alignscore_chunks([Sentence(*row) for row in document[["text", "start", "end"]].itertuples(index=False)], 60)
    best = [reference_scores(scorer, [(c.text, sentence) for c in chunks], pad_to=256).max() for sentence in outputs["text"]]
    return float(aggregate(best))


def test_min_aggregation_and_bad_settings(examples: pd.DataFrame, scorer: AlignerScorer) -> None:
    sentences, _ = sentence_units(examples, "fixture")
    scores, _ = score_benchmark(
        examples, sentences, scorer, AlignScoreSettings(words_per_chunk=60, aggregation="min"), EngineSettings(progress=False)
    )
    for row in scores.itertuples():
        assert row.score == pytest.approx(reference_example_score(sentences, row.example_id, scorer, np.min), abs=1e-5)
    with pytest.raises(FactlabError, match="unknown alignscore aggregation"):
        AlignScoreSettings(aggregation="median")
