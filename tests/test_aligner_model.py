"""The alignment model's I/O: a trained folder round-trips; hub NLI classifiers load from a local folder; 3-way distributions."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tiny_aligner import tiny_bert_config
from transformers import BertForSequenceClassification

from factlab.errors import ConfigError, FactlabError
from factlab.models.aligner import (
    AlignerConfig,
    AlignerScorer,
    DeferredAlignerScorer,
    HubNLIScorer,
    new_network,
    save_aligner,
)
from factlab.models.engine import EngineSettings, PairCache, score_pair_distributions, score_pairs
from factlab.models.loading import load_pair_scorer
from factlab.models.support_heads import with_support_head
from factlab.runtime import load_tokenizer

PAIRS = [
    ("A man is playing a guitar on stage.", "A man plays an instrument."),
    ("The museum opened in 1998 in the old harbour.", "The museum opened in 2005."),
]


def test_saved_aligner_scores_the_same(tmp_path: Path) -> None:
    torch.manual_seed(1)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=64))
    before = score_pairs(AlignerScorer(network, tokenizer, device="cpu"), PAIRS, EngineSettings(progress=False)).scores
    save_aligner(network, tokenizer, tmp_path / "aligner", {"seed": 1})
    loaded = load_pair_scorer(str(tmp_path / "aligner"), device="cpu")
    assert isinstance(loaded, AlignerScorer)
    assert loaded.max_length == 64
    assert len(loaded.network.encoder.encoder.layer) == 1
    after = score_pairs(loaded, PAIRS, EngineSettings(progress=False)).scores
    assert after.tolist() == pytest.approx(before.tolist(), abs=1e-7)
    assert loaded.identity.startswith("aligner:")


def test_saved_aligner_loads_only_when_a_pair_misses_the_cache(tmp_path: Path) -> None:
    """A job whose pairs are all cached (SummaC-Conv after SummaC-ZS) never deserialises the weights; the first miss
    does, keeps what was set before it (a throughput run's shorter max_length), and scores what the eager scorer does."""
    torch.manual_seed(2)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=64))
    eager = AlignerScorer(network, tokenizer, device="cpu")
    save_aligner(network, tokenizer, tmp_path / "aligner", {"seed": 2})
    folder = str(tmp_path / "aligner")
    first = load_pair_scorer(folder, device="cpu")
    cache = PairCache()
    expected = score_pair_distributions(first, PAIRS, EngineSettings(progress=False), cache).probabilities
    cache.save(tmp_path / "pairs.parquet")
    deferred = load_pair_scorer(folder, device="cpu")
    assert isinstance(deferred, DeferredAlignerScorer) and not deferred.loaded
    cached = PairCache.load(tmp_path / "pairs.parquet")
    again = score_pair_distributions(deferred, PAIRS, EngineSettings(progress=False), cached)
    assert again.counts["distinct_pairs_scored"] == 0
    assert not deferred.loaded and deferred.load_seconds == 0.0  # every pair came from the cache
    assert again.probabilities.tolist() == expected.tolist()
    deferred.max_length = 32  # set before the load: it must survive it
    missing = [*PAIRS, ("A new premise about a harbour.", "A hypothesis it does not cover.")]
    grown = score_pair_distributions(deferred, missing, EngineSettings(progress=False), cached)
    assert deferred.loaded and deferred.load_seconds > 0 and grown.counts["distinct_pairs_scored"] == 1
    assert deferred.max_length == 32 and len(deferred.network.encoder.encoder.layer) == 1
    eager.max_length = 32
    reference = score_pair_distributions(eager, missing, EngineSettings(progress=False)).probabilities
    assert grown.probabilities.ravel().tolist() == pytest.approx(reference.ravel().tolist(), abs=1e-6)
    with pytest.raises(AttributeError):
        deferred.not_an_attribute  # noqa: B018 (an unknown name is an AttributeError, not a load)


def test_a_failed_deferred_load_is_an_error_not_a_missing_attribute(tmp_path: Path) -> None:
    torch.manual_seed(3)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=64))
    save_aligner(network, tokenizer, tmp_path / "aligner", {"seed": 3})
    deferred = load_pair_scorer(str(tmp_path / "aligner"), device="cpu")
    (tmp_path / "aligner" / "aligner.json").write_text('{"aligner": {"no_such_field": 1}}')
    with pytest.raises(FactlabError, match="aligner"):
        hasattr(deferred, "tokenizer")


def tiny_classifier(folder: Path, labels: list[str]) -> Path:
    """A 1-layer BERT classifier built from a config (what an online user's DeBERTa-MNLI stands for)."""
    tokenizer = load_tokenizer()
    config = tiny_bert_config(
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: index for index, label in enumerate(labels)},
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.manual_seed(2)
    return tiny_classifier(tmp_path_factory.mktemp("tiny_nli"), ["CONTRADICTION", "NEUTRAL", "ENTAILMENT"])


def classifier_softmax(folder: Path, tokenizer: object) -> list[list[float]]:
    model = BertForSequenceClassification.from_pretrained(folder).eval()
    rows = []
    for premise, hypothesis in PAIRS:
        with torch.no_grad():
            logits = model(**tokenizer(premise, hypothesis, return_tensors="pt")).logits  # type: ignore[operator]
        rows.append(torch.softmax(logits, -1)[0].tolist())
    return rows


def test_hub_nli_support_is_the_declared_label(tiny_nli: Path) -> None:
    scorer = load_pair_scorer(str(tiny_nli), device="cpu", entailment_label="entailment")
    assert isinstance(scorer, HubNLIScorer)
    assert scorer.entailment_index == 2
    scores = score_pairs(scorer, PAIRS, EngineSettings(progress=False)).scores
    model = BertForSequenceClassification.from_pretrained(tiny_nli).eval()
    for (premise, hypothesis), score in zip(PAIRS, scores, strict=True):
        with torch.no_grad():
            logits = model(**scorer.tokenizer(premise, hypothesis, return_tensors="pt")).logits
        assert score == pytest.approx(float(torch.softmax(logits, -1)[0, 2]), abs=1e-6)


def test_undeclared_entailment_label_is_an_error(tiny_nli: Path) -> None:
    with pytest.raises(FactlabError, match="has no label 'entails'"):
        HubNLIScorer(str(tiny_nli), "entails", device="cpu")


def test_missing_model_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FactlabError, match="cannot load model .*nowhere"):
        load_pair_scorer(str(tmp_path / "nowhere"), device="cpu")


def test_aligner_distribution_is_the_three_way_softmax() -> None:
    torch.manual_seed(1)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=64))
    scorer = AlignerScorer(network, tokenizer, device="cpu")
    result = score_pair_distributions(scorer, PAIRS, EngineSettings(progress=False))
    for (premise, hypothesis), row in zip(PAIRS, result.probabilities, strict=True):
        batch = tokenizer(premise, hypothesis, return_tensors="pt")
        with torch.no_grad():
            logits = network(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])["three_way"]
        assert row.tolist() == pytest.approx(torch.softmax(logits, -1)[0].tolist(), abs=1e-6)  # aligned, neutral, contradict
    assert scorer.has_contradiction and scorer.distribution_identity == scorer.identity


def test_binary_support_head_reads_the_binary_head(tmp_path: Path) -> None:
    torch.manual_seed(2)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=64))
    save_aligner(network, tokenizer, tmp_path / "aligner", {"seed": 2})
    network.eval()  # no dropout in the reference forward pass
    three_way = load_pair_scorer(str(tmp_path / "aligner"), device="cpu")
    binary = with_support_head(three_way, "binary")
    scores = score_pairs(binary, PAIRS, EngineSettings(progress=False)).scores
    for (premise, hypothesis), score in zip(PAIRS, scores, strict=True):
        batch = tokenizer(premise, hypothesis, return_tensors="pt")
        with torch.no_grad():
            logits = network(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])["binary"]
        assert score == pytest.approx(torch.softmax(logits, -1)[0, 1].item(), abs=1e-6)  # class 1: aligned
    assert scores.tolist() != pytest.approx(score_pairs(three_way, PAIRS, EngineSettings(progress=False)).scores.tolist())
    assert binary.identity == f"{three_way.identity}:binary"  # the pair cache must not share the two heads' scores
    assert with_support_head(three_way, "three_way") is three_way


def test_support_head_needs_a_trained_aligner(tiny_nli: Path) -> None:
    hub = load_pair_scorer(str(tiny_nli), device="cpu", entailment_label="entailment")
    with pytest.raises(ConfigError, match="support head 'binary' needs a trained aligner"):
        with_support_head(hub, "binary")
    with pytest.raises(ConfigError, match="unknown support head 'regression'"):
        with_support_head(hub, "regression")


def test_hub_nli_distribution_maps_labels_by_name(tiny_nli: Path) -> None:
    scorer = load_pair_scorer(str(tiny_nli), device="cpu", entailment_label="entailment")
    assert isinstance(scorer, HubNLIScorer) and scorer.has_contradiction
    result = score_pair_distributions(scorer, PAIRS, EngineSettings(progress=False))
    for row, (contradiction, neutral, entailment) in zip(
        result.probabilities, classifier_softmax(tiny_nli, scorer.tokenizer), strict=True
    ):
        assert row.tolist() == pytest.approx([entailment, neutral, contradiction], abs=1e-6)
    renamed = HubNLIScorer(str(tiny_nli), "entailment", device="cpu", contradiction_label="refutes")
    assert not renamed.has_contradiction and renamed.distribution_identity != scorer.distribution_identity
    with pytest.raises(FactlabError, match="3 labels but no contradiction label 'refutes'"):
        score_pair_distributions(renamed, PAIRS, EngineSettings(progress=False))


def test_two_label_classifier_has_no_contradiction(tmp_path: Path) -> None:
    torch.manual_seed(4)
    folder = tiny_classifier(tmp_path / "binary", ["entailment", "not_entailment"])
    scorer = HubNLIScorer(str(folder), "entailment", device="cpu")
    assert not scorer.has_contradiction
    result = score_pair_distributions(scorer, PAIRS, EngineSettings(progress=False))
    for row, (entailment, other) in zip(result.probabilities, classifier_softmax(folder, scorer.tokenizer), strict=True):
        assert row.tolist() == pytest.approx([entailment, other, 0.0], abs=1e-6)  # not-entailed mass is neutral
    support = score_pairs(scorer, PAIRS, EngineSettings(progress=False)).scores
    assert support.tolist() == pytest.approx(result.probabilities[:, 0].tolist(), abs=1e-7)
