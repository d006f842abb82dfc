"""The scoring engine: parity with AlignScore's reference loop, dedup, cut counting, batching; 3-way distributions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from factlab.errors import FactlabError
from factlab.io import write_parquet
from factlab.models.aligner import AlignerConfig, AlignerScorer, new_network
from factlab.models.engine import (
    EngineSettings,
    PairCache,
    PairTemplate,
    encode_pairs,
    pad_batch,
    pair_key,
    pair_template,
    reference_distributions,
    reference_scores,
    score_pair_distributions,
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
    encoded = encode_pairs(scorer.tokenizer, [(premise, hypothesis)], 128)
    assert template.prefix == [scorer.tokenizer.cls_token_id]
    ids, types = encoded.pair(0)
    assert ids == list(expected["input_ids"])
    assert types == list(expected["token_type_ids"])
    assert encoded.premise_cut.tolist() == encoded.hypothesis_cut.tolist() == [0]


def test_padded_batch_matches_the_tokenizers_padding(scorer: AlignerScorer, real_pairs: list[tuple[str, str]]) -> None:
    short = real_pairs[6:]  # summary pairs: no cuts at 128, lengths differ
    expected = scorer.tokenizer([p for p, _ in short], [h for _, h in short], padding=True, return_tensors="pt")
    encoded = encode_pairs(scorer.tokenizer, short, 128)
    ids, mask, types = pad_batch(encoded, range(len(short)), scorer.tokenizer.pad_token_id, torch.device("cpu"))
    assert len(set(expected["attention_mask"].sum(dim=1).tolist())) > 1  # the padding is exercised
    assert torch.equal(ids, expected["input_ids"])
    assert torch.equal(mask, expected["attention_mask"])
    assert torch.equal(types, expected["token_type_ids"])


def test_padded_rows_in_any_order_match_the_tokenizers_cut(scorer: AlignerScorer, real_pairs: list[tuple[str, str]]) -> None:
    """Long articles cut to 128 pieces, rows asked for out of order: the tokenizer's own cut and padding."""
    rows = [7, 0, 9, 3, 5, 1]  # long articles (cut) and summary pairs, unsorted
    encoded = encode_pairs(scorer.tokenizer, real_pairs, 128)
    chosen = [real_pairs[row] for row in rows]
    expected = scorer.tokenizer(
        [p for p, _ in chosen], [h for _, h in chosen], truncation="only_first", max_length=128, padding=True, return_tensors="pt"
    )
    ids, mask, types = pad_batch(encoded, rows, scorer.tokenizer.pad_token_id, torch.device("cpu"))
    assert (encoded.premise_cut[rows] > 0).sum() == 4
    assert torch.equal(ids, expected["input_ids"])
    assert torch.equal(mask, expected["attention_mask"])
    assert torch.equal(types, expected["token_type_ids"])


@pytest.mark.parametrize(
    "template",
    [
        PairTemplate(prefix=[5], middle=[6, 7], suffix=[8], type_a=1, type_b=2),  # every segment its own ids and types
        PairTemplate(prefix=[], middle=[], suffix=[8], type_a=0, type_b=0),  # a yes/no prompt's shape: no prefix, no middle
    ],
)
def test_padded_rows_follow_any_template_and_the_hypothesis_cut(scorer: AlignerScorer, template: PairTemplate) -> None:
    """A hypothesis longer than the room, an empty premise and two rows out of order: each row is the template around
    the kept pieces, worked out here from the tokenizer's pieces."""
    tokenizer = scorer.tokenizer
    long_claim = " ".join(["claim"] * 40)
    pairs = [("A premise of several words here.", long_claim), ("", "Also short."), ("Short.", "Also short.")]
    encoded = encode_pairs(tokenizer, pairs, 24, template)
    ids, mask, types = pad_batch(encoded, [2, 0, 1], tokenizer.pad_token_id, torch.device("cpu"))
    pieces = [tokenizer(text, add_special_tokens=False)["input_ids"] for pair in pairs for text in pair]
    room = 24 - len(template.prefix) - len(template.middle) - len(template.suffix)
    claim_kept = pieces[1][: room - 1]  # the hypothesis keeps room - 1 pieces, the premise one

    def row(premise: list[int], hypothesis: list[int]) -> tuple[list[int], list[int]]:
        first = template.prefix + premise + template.middle
        return first + hypothesis + template.suffix, [template.type_a] * len(first) + [template.type_b] * (
            len(hypothesis) + len(template.suffix)
        )

    expected = [row(pieces[4], pieces[5]), row(pieces[0][:1], claim_kept), row([], pieces[3])]
    width = max(len(ids_) for ids_, _ in expected)
    pad = tokenizer.pad_token_id
    assert encoded.hypothesis_cut.tolist() == [40 - (room - 1), 0, 0]
    assert encoded.premise_cut.tolist() == [len(pieces[0]) - 1, 0, 0]
    assert ids.tolist() == [ids_ + [pad] * (width - len(ids_)) for ids_, _ in expected]
    assert mask.tolist() == [[1] * len(ids_) + [0] * (width - len(ids_)) for ids_, _ in expected]
    assert types.tolist() == [types_ + [0] * (width - len(types_)) for _, types_ in expected]


def test_premise_cut_is_counted_exactly(scorer: AlignerScorer) -> None:
    premise = " ".join(["word"] * 200)  # "word" is one word piece: 200 pieces
    encoded = encode_pairs(scorer.tokenizer, [(premise, "A short claim.")], 64)
    claim_pieces = len(scorer.tokenizer("A short claim.", add_special_tokens=False)["input_ids"])
    assert len(encoded.pair(0)[0]) == encoded.lengths[0] == 64
    assert encoded.premise_cut[0] == 200 - (64 - 3 - claim_pieces)  # 3 = [CLS] [SEP] [SEP]
    assert encoded.hypothesis_cut[0] == 0


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


def test_distributions_equal_the_reference_loop_and_hold_the_support(
    scorer: AlignerScorer, real_pairs: list[tuple[str, str]]
) -> None:
    pairs = real_pairs + real_pairs[:2]
    settings = EngineSettings(token_budget=600, progress=False)
    result = score_pair_distributions(scorer, pairs, settings)
    assert result.probabilities.shape == (len(pairs), 3)
    assert np.max(np.abs(result.probabilities - reference_distributions(scorer, pairs, pad_to=128))) <= 1e-5
    np.testing.assert_allclose(result.probabilities.sum(axis=1), 1.0, atol=1e-6)
    support = score_pairs(scorer, pairs, settings)
    np.testing.assert_array_equal(result.probabilities[:, 0], support.scores)  # support is P(aligned) of the same softmax
    np.testing.assert_array_equal(result.premise_cut, support.premise_cut)
    assert result.counts == support.counts  # the same loop: same dedup, batches, padding and cuts


def test_cache_keeps_supports_and_distributions_apart(
    scorer: AlignerScorer, real_pairs: list[tuple[str, str]], tmp_path: Path
) -> None:
    cache = PairCache()
    support = score_pairs(scorer, real_pairs, EngineSettings(progress=False), cache)
    first = score_pair_distributions(scorer, real_pairs, EngineSettings(progress=False), cache)
    assert first.counts["distinct_pairs_scored"] == len(set(real_pairs))  # supports are not read as distributions
    assert len(cache.scores) == len(cache.distributions) == len(set(real_pairs))
    cache.save(tmp_path / "cache.parquet")
    loaded = PairCache.load(tmp_path / "cache.parquet")
    again = score_pair_distributions(scorer, real_pairs, EngineSettings(progress=False), loaded)
    assert again.counts["distinct_pairs_scored"] == 0
    np.testing.assert_array_equal(first.probabilities, again.probabilities)
    np.testing.assert_array_equal(support.scores, score_pairs(scorer, real_pairs, EngineSettings(progress=False), loaded).scores)


def test_a_cache_file_written_before_distributions_still_loads(scorer: AlignerScorer, tmp_path: Path) -> None:
    premise, hypothesis = "The museum opened in 1998.", "The museum opened in 2005."
    key = pair_key(scorer.identity, premise, hypothesis)
    old = pd.DataFrame({"key": [key], "score": [0.25], "premise_cut": [0], "hypothesis_cut": [0]})
    write_parquet(old, tmp_path / "old.parquet")
    cache = PairCache.load(tmp_path / "old.parquet")
    assert score_pairs(scorer, [(premise, hypothesis)], EngineSettings(progress=False), cache).scores.tolist() == [0.25]
    assert not cache.distributions


def test_a_support_only_scorer_has_no_distribution(scorer: AlignerScorer) -> None:
    class SupportOnly:
        tokenizer, max_length, device, identity = scorer.tokenizer, 128, torch.device("cpu"), "support-only"
        support = scorer.support

    with pytest.raises(FactlabError, match="support only"):
        score_pair_distributions(SupportOnly(), [("a b", "c")])  # type: ignore[arg-type]
    assert score_pair_distributions(scorer, []).probabilities.shape == (0, 3)


def test_bf16_tracks_fp32_is_deterministic_and_is_cached_apart(scorer: AlignerScorer, real_pairs: list[tuple[str, str]]) -> None:
    """bf16 autocast runs on a CPU too (emulated where the CPU lacks bf16: slower, same numbers); its scores
    stay near the fp32 reference loop's, repeat exactly, and never answer for fp32 ones in a shared cache."""
    cache = PairCache()
    fp32 = score_pairs(scorer, real_pairs, EngineSettings(progress=False), cache)
    bf16 = score_pairs(scorer, real_pairs, EngineSettings(precision="bf16", progress=False), cache)
    assert bf16.counts["distinct_pairs_scored"] == len(set(real_pairs))  # none taken from the fp32 entries
    reference = reference_scores(scorer, real_pairs, pad_to=128)
    assert np.max(np.abs(bf16.scores - reference)) <= 0.02
    assert np.max(np.abs(bf16.scores - reference)) > 0  # it did run in bf16
    again = score_pairs(scorer, real_pairs, EngineSettings(precision="bf16", progress=False))
    np.testing.assert_array_equal(again.scores, bf16.scores)
    np.testing.assert_array_equal(score_pairs(scorer, real_pairs, EngineSettings(progress=False), cache).scores, fp32.scores)
