"""AlignScore's aggregation over real preprocessed text: max over chunks, mean (or min) over sentences."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_aligner import tiny_aligner

from factlab.errors import FactlabError
from factlab.models.aligner import AlignerConfig, AlignerScorer, new_network
from factlab.models.engine import EngineSettings, reference_scores, score_pairs
from factlab.models.support_heads import with_support_head
from factlab.preprocess.benchmark import sentence_units
from factlab.score.alignscore import (
    AlignScoreSettings,
    alignscore_pairs,
    best_premises,
    score_benchmark,
    token_support,
)
from factlab.text.chunking import alignscore_chunks
from factlab.text.sentences import Sentence

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


@pytest.mark.parametrize("head", ["three_way", "binary"])
def test_localising_reads_the_token_head_in_the_support_passs_forwards(examples: pd.DataFrame, head: str) -> None:  # noqa: PLR0914
    """With a token head, the localising score runs each (chunk, sentence) pair through the network once: the
    token pass reads the support pass's forwards, and gives what a pass of its own gives."""
    torch.manual_seed(5)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=256, token_head=True, type_head=True))
    scorer = AlignerScorer(network, tokenizer, device="cpu")
    sentences, _ = sentence_units(examples, "fixture")
    settings = AlignScoreSettings(words_per_chunk=60, support_head=head, localise=True)
    engine = EngineSettings(progress=False)
    token_forwards = []
    run_alone = scorer.sequence_and_tokens
    scorer.sequence_and_tokens = lambda *tensors: token_forwards.append(1) or run_alone(*tensors)  # type: ignore[method-assign]
    scores, _ = score_benchmark(examples, sentences, scorer, settings, engine)
    assert token_forwards == []  # every token batch came from the support pass's forwards
    job = alignscore_pairs(examples, sentences, settings)
    # the scores are the plain head's; the tokens and types those of a token pass of their own
    plain = score_pairs(with_support_head(scorer, head), job.pairs, engine)
    best = best_premises(job.owners, plain.scores, plain.premise_cut)
    for row in scores.itertuples():
        index = list(scores["example_id"]).index(row.example_id)
        for item in row.sentences:
            assert item["support"] == pytest.approx(best[(index, item["sentence_index"])][0], abs=1e-5)
    tokens, types = token_support(examples, job, best, scorer, engine)  # no memo: the token pass's own forwards
    assert token_forwards
    for row in scores.itertuples():
        index = list(scores["example_id"]).index(row.example_id)
        expected = [piece for sentence in range(row.n_sentences) for piece in tokens[(index, sentence)]]
        assert [(p["start"], p["end"]) for p in row.tokens] == [(p["start"], p["end"]) for p in expected]
        np.testing.assert_allclose([p["support"] for p in row.tokens], [p["support"] for p in expected], atol=1e-5)
        for item in row.sentences:
            got, want = item["error_types"], types[(index, item["sentence_index"])]
            np.testing.assert_allclose([got[t] for t in want], list(want.values()), atol=1e-5)
