"""SummaC-Conv: histograms against numpy worked by hand, the head against its formula, and the whole
scorer on real QAGS-XSum text against a brute-force NLI matrix scored one pair at a time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import save_file
from tiny_aligner import tiny_aligner

from factlab.errors import ConfigError, FactlabError
from factlab.models.aligner import AlignerScorer
from factlab.models.engine import EngineSettings, reference_distributions
from factlab.preprocess.benchmark import sentence_units
from factlab.score.summac_conv import (
    PERCENTILE_EDGES,
    ConvHead,
    ConvSettings,
    bin_edges,
    load_head,
    save_head,
    score_summac_conv,
    sentence_histograms,
    train_head,
)
from factlab.score.summac_conv_fit_command import ConvTrainSettings, head_examples

FIXTURES = Path(__file__).parent / "fixtures"


def test_percentile_histogram_by_hand() -> None:
    # 0.005 -> [0, .01) bin 0; 0.5 -> [.37, .90) bin 7; 0.999 and 1.0 -> the closed last bin [.995, 1] (22).
    counts = sentence_histograms(np.array([[0.005, 0.5, 0.999, 1.0]]), bin_edges("percentile"))
    expected = np.zeros(23)
    expected[[0, 7, 22]] = [1, 1, 2]
    np.testing.assert_array_equal(counts[0], expected)
    assert len(PERCENTILE_EDGES) == 24 and len(bin_edges("even50")) == 51


def test_head_averages_sentence_scores_over_real_sentences_only() -> None:
    head = ConvHead(2)
    with torch.no_grad():
        head.sentence.weight[:] = torch.tensor([[1.0, -1.0]])
        head.sentence.bias[:] = 0.5
        head.final.weight[:] = torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
        head.final.bias[:] = 0.0
    histograms = torch.tensor([[[3.0, 1.0], [0.0, 2.0], [9.0, 9.0]]])  # third row is padding
    logits, per_sentence = head(histograms, torch.tensor([[1.0, 1.0, 0.0]]))
    # sentence scores 3 - 1 + .5 = 2.5 and 0 - 2 + .5 = -1.5; mean 0.5; logits (0, 0.5)
    np.testing.assert_allclose(per_sentence[0, :2].detach().numpy(), [2.5, -1.5])
    np.testing.assert_allclose(logits.detach().numpy(), [[0.0, 0.5]])


def test_training_is_deterministic_for_a_seed() -> None:
    histograms = torch.tensor([[[5.0, 0.0]], [[0.0, 5.0]], [[4.0, 1.0]], [[1.0, 4.0]]])
    mask = torch.ones(4, 1)
    labels = np.array([0, 1, 0, 1])
    first, losses = train_head(histograms, mask, labels, epochs=50, learning_rate=0.1, seed=7)
    second, _ = train_head(histograms, mask, labels, epochs=50, learning_rate=0.1, seed=7)
    for a, b in zip(first.state_dict().values(), second.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert losses[-1] < losses[0]


@pytest.fixture(scope="module")
def scorer() -> AlignerScorer:
    return tiny_aligner(3)


def test_scores_equal_the_head_on_a_brute_force_matrix(tmp_path: Path, scorer: AlignerScorer) -> None:
    data = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv").head(2)
    examples = pd.DataFrame(
        {
            "example_id": ["a", "b"],
            "doc_id": ["d0", "d1"],
            "source": list(data["document"]),
            "output": list(data["summary"] + " It was reported on monday."),
        }
    )
    sentences, _ = sentence_units(examples, "fixture")
    settings = ConvSettings(bins="even50", variant="corrected")
    torch.manual_seed(0)
    head = ConvHead(50)
    save_head(head, settings, tmp_path / "head.safetensors")
    head = load_head(tmp_path / "head.safetensors", settings)
    scores, counts = score_summac_conv(examples, sentences, scorer, settings, EngineSettings(progress=False), head)
    for row, (example_id, doc_id) in enumerate(zip(examples["example_id"], examples["doc_id"], strict=True)):
        units = sentences[(sentences["side"] == "source") & (sentences["doc_id"] == doc_id)].sort_values("sentence_index")
        outputs = sentences[(sentences["side"] == "output") & (sentences["example_id"] == example_id)].sort_values(
            "sentence_index"
        )
        pairs = [(u, o) for o in outputs["text"] for u in units["text"]]
        entail = reference_distributions(scorer, pairs, pad_to=256)[:, 0].reshape(len(outputs), len(units))
        counts_by_hand = np.stack([np.histogram(r, bins=50, range=(0, 1))[0] for r in entail]).astype(np.float32)
        with torch.no_grad():
            sentence_scores = head.sentence(torch.from_numpy(counts_by_hand)).squeeze(-1)
            logits = head.final(sentence_scores.mean().repeat(3))
        expected = torch.softmax(logits, dim=-1)[1].item()
        assert scores.loc[row, "score"] == pytest.approx(expected, abs=1e-5)
        assert [s["support"] for s in scores.loc[row, "sentences"]] == pytest.approx(sentence_scores.tolist(), abs=1e-5)
    assert counts["examples"] == 2


def test_head_and_settings_must_agree(tmp_path: Path) -> None:
    save_head(ConvHead(23), ConvSettings(bins="percentile"), tmp_path / "head.safetensors")
    with pytest.raises(FactlabError, match="trained with bins 'percentile'"):
        load_head(tmp_path / "head.safetensors", ConvSettings(bins="even50"))
    save_file({"x": torch.zeros(1)}, str(tmp_path / "bare.safetensors"))
    with pytest.raises(FactlabError, match="trained with bins None"):
        load_head(tmp_path / "bare.safetensors", ConvSettings())
    with pytest.raises(ConfigError, match="unknown summac_conv bins"):
        ConvSettings(bins="even")


def test_saving_a_head_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    """safetensors writes a metadata map in a random order: with two keys, 8 saves agreeing had p = 1/128."""
    torch.manual_seed(0)
    head = ConvHead(23)
    saved = []
    for i in range(8):
        save_head(head, ConvSettings(bins="percentile"), tmp_path / f"{i}.safetensors")
        saved.append((tmp_path / f"{i}.safetensors").read_bytes())
    assert len(set(saved)) == 1


def test_head_examples_are_held_out_long_pairs_split_by_document() -> None:
    source = " ".join(["word"] * 90)
    mixture = pd.DataFrame(
        {
            "text_a": [source, source, "too short", source + " x", source + " y"],
            "text_b": ["a", "b", "c", "d", "e"],
            "label_bin": pd.array([1, 0, 1, 0, 1], dtype="Int64"),
            "origin": ["factcg_cg2c_doc", "factcg_cg2c_doc", "factcg_cg2c_doc", "nli_mnli_binary", "factcg_cg2c_doc"],
            "split": ["validation", "validation", "validation", "validation", "train"],
        }
    )
    chosen = head_examples(mixture, ConvTrainSettings(origins=["factcg"], min_source_words=80))
    assert list(chosen["output"]) == ["a", "b"]  # short premise, other origin and aligner-train rows left out
    assert chosen["part"].nunique() == 1  # one document: both pairs on the same side
    with pytest.raises(FactlabError, match="lack both labels"):
        head_examples(mixture.assign(label_bin=1), ConvTrainSettings(origins=["factcg"]))


def test_conv_after_zs_scores_no_pair_twice_and_the_same(tmp_path: Path, scorer: AlignerScorer) -> None:
    """The Conv job of a shard starts from the pairs the ZS job saved (rule score_summac_zs's `pairs` output)."""
    from factlab.models.engine import PairCache
    from factlab.score.summac import score_summac_zs

    data = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv").head(3)
    examples = pd.DataFrame(
        {
            "example_id": ["a", "b", "c"],
            "doc_id": ["d0", "d1", "d2"],
            "source": list(data["document"]),
            "output": list(data["summary"]),
        }
    )
    sentences, _ = sentence_units(examples, "fixture")
    settings = ConvSettings(bins="even50", variant="corrected")
    torch.manual_seed(0)
    head = ConvHead(50)
    engine = EngineSettings(progress=False)
    alone, alone_counts = score_summac_conv(examples, sentences, scorer, settings, engine, head)
    zs_cache = PairCache()
    _, zs_counts = score_summac_zs(examples, sentences, scorer, settings.zs_settings, engine, zs_cache)
    zs_cache.save(tmp_path / "pairs.parquet")
    shared, counts = score_summac_conv(
        examples, sentences, scorer, settings, engine, head, PairCache.load(tmp_path / "pairs.parquet")
    )
    assert alone_counts["distinct_pairs_scored"] == zs_counts["distinct_pairs_scored"] > 0
    assert counts["distinct_pairs_scored"] == 0 and counts["pairs_from_cache_or_duplicates"] == counts["pairs"]
    assert shared["score"].tolist() == pytest.approx(alone["score"].tolist(), abs=1e-6)
