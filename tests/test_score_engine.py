"""The scoring engine: parity with AlignScore's reference loop, dedup, cut counting, batching."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from factlab.models.aligner import AlignerConfig, AlignerScorer, new_network
from factlab.models.engine import (
    EngineSettings,
    PairCache,
    encode_pairs,
    length_batches,
    pair_template,
    reference_scores,
    score_pairs,
)

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def scorer() -> AlignerScorer:
    torch.manual_seed(0)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=2, max_length=128))
    return AlignerScorer(network, tokenizer, device="cpu")


@pytest.fixture(scope="module")
def real_pairs() -> list[tuple[str, str]]:
    """Six real QAGS-XSum articles and their summaries (a fixture cut from the mirror); long articles get cut."""
    frame = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")
    documents, summaries = list(frame["document"].astype(str)), list(frame["summary"].astype(str))
    short = list(zip(summaries, summaries[1:] + summaries[:1], strict=True))  # short premises: little padding needed
    return list(zip(documents, summaries, strict=True)) + short


def test_bert_pair_template_matches_the_tokenizer(scorer: AlignerScorer) -> None:
    template = pair_template(scorer.tokenizer)
    premise, hypothesis = "The cat sat on the mat.", "A cat sat."
    expected = scorer.tokenizer(premise, hypothesis)
    [encoded] = encode_pairs(scorer.tokenizer, [(premise, hypothesis)], 128)
    assert template.prefix == [scorer.tokenizer.cls_token_id]
    assert encoded.input_ids == list(expected["input_ids"])
    assert encoded.token_type_ids == list(expected["token_type_ids"])
    assert encoded.premise_cut == encoded.hypothesis_cut == 0


def test_premise_cut_is_counted_exactly(scorer: AlignerScorer) -> None:
    premise = " ".join(["word"] * 200)  # "word" is one word piece: 200 pieces
    [encoded] = encode_pairs(scorer.tokenizer, [(premise, "A short claim.")], 64)
    claim_pieces = len(scorer.tokenizer("A short claim.", add_special_tokens=False)["input_ids"])
    assert len(encoded.input_ids) == 64
    assert encoded.premise_cut == 200 - (64 - 3 - claim_pieces)  # 3 = [CLS] [SEP] [SEP]
    assert encoded.hypothesis_cut == 0


def test_engine_equals_the_reference_loop(scorer: AlignerScorer, real_pairs: list[tuple[str, str]]) -> None:
    pairs = real_pairs + real_pairs[:2]  # duplicates are scored once
    result = score_pairs(scorer, pairs, EngineSettings(token_budget=600, progress=False))
    reference = reference_scores(scorer, pairs, pad_to=128)
    assert np.max(np.abs(result.scores - reference)) <= 1e-5
    assert result.counts["distinct_pairs_scored"] == len(set(real_pairs))
    assert result.counts["pairs_from_cache_or_duplicates"] == len(pairs) - len(set(real_pairs))
    assert result.counts["pairs_premise_cut"] == 6 + 2  # the six long articles (two of them twice)
    assert result.counts["padded_tokens"] < 0.8 * len(set(real_pairs)) * 128  # not everything padded to the cap


def test_cache_is_shared_and_round_trips(scorer: AlignerScorer, real_pairs: list[tuple[str, str]], tmp_path) -> None:
    cache = PairCache()
    first = score_pairs(scorer, real_pairs, EngineSettings(progress=False), cache)
    cache.save(tmp_path / "cache.parquet")
    again = score_pairs(scorer, real_pairs, EngineSettings(progress=False), PairCache.load(tmp_path / "cache.parquet"))
    assert again.counts["distinct_pairs_scored"] == 0
    np.testing.assert_array_equal(first.scores, again.scores)


def test_length_batches_respect_the_budget() -> None:
    lengths = [5, 50, 7, 12, 40, 3, 33, 8]
    batches = length_batches(lengths, token_budget=60, max_rows=3)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 3
        assert len(batch) * max(lengths[i] for i in batch) <= 60 or len(batch) == 1
    # worked by hand: sorted 3,5,7 | 8,12,33? 3*33=99>60 -> 8,12 | 33 | 40 | 50
    assert [[lengths[i] for i in batch] for batch in batches] == [[3, 5, 7], [8, 12], [33], [40], [50]]
