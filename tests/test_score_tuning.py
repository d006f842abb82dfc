"""AlignScore's chunk size and aggregation chosen on validation data (factlab.score.tuning)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu
from tiny_aligner import tiny_aligner

from factlab.cli import main
from factlab.errors import ConfigError, FactlabError
from factlab.models.aligner import AlignerScorer
from factlab.models.engine import EngineSettings
from factlab.preprocess.benchmark import sentence_units
from factlab.score.alignscore import AlignScoreSettings, score_benchmark
from factlab.score.alignscore_command import tuned_settings
from factlab.score.tuning import TuningSettings, choose, read_choice, sweep, tuning_sample

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def validation() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Six real QAGS-XSum records with their human labels (faithful yes/no)."""
    frame = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")
    examples = pd.DataFrame(
        {
            "example_id": frame["id"].astype(str),
            "doc_id": [f"doc{i}" for i in range(len(frame))],
            "source": frame["document"],
            "output": frame["summary"],
            "label": (frame["faithful"] == "yes").astype(int),
        }
    )
    assert examples["label"].nunique() == 2
    sentences, _ = sentence_units(examples, "fixture")
    return examples, sentences


@pytest.fixture(scope="module")
def scorer() -> AlignerScorer:
    return tiny_aligner(5)


def test_sweep_auc_is_the_mann_whitney_statistic_of_each_cell(validation, scorer) -> None:
    examples, sentences = validation
    settings = TuningSettings(words_per_chunk=(350, 40), aggregations=("mean", "min"))
    table = sweep({"qags": (examples, sentences)}, scorer, settings, "reference", EngineSettings(progress=False))
    assert list(table["words_per_chunk"]) == [40, 40, 350, 350] * 2
    assert list(table["support_head"]) == ["three_way"] * 4 + ["binary"] * 4
    labels = examples["label"].to_numpy()
    for head, words, aggregation, auc in table[["support_head", "words_per_chunk", "aggregation", "roc_auc"]].itertuples(
        index=False
    ):
        settings_cell = AlignScoreSettings(words, "reference", aggregation, head)
        scores, _ = score_benchmark(examples, sentences, scorer, settings_cell, EngineSettings(progress=False))
        values = scores["score"].to_numpy()
        u = mannwhitneyu(values[labels == 1], values[labels == 0]).statistic  # AUC = U / (n1 n0)
        assert auc == pytest.approx(u / ((labels == 1).sum() * (labels == 0).sum()))
    assert (table["n"] == len(examples)).all() and (table["n_consistent"] == labels.sum()).all()
    # 40-word chunks cut the articles into several chunks: more pairs than one 350-word chunk
    pairs = table.groupby("words_per_chunk")["pairs"].first()
    assert pairs[40] > pairs[350]
    # the two heads are two readings of the same pairs: other supports
    by_head = table.set_index(["support_head", "words_per_chunk", "aggregation"])["roc_auc"]
    assert (by_head["binary"] != by_head["three_way"]).any()


def test_the_binary_head_support_is_the_networks_binary_softmax(validation, scorer) -> None:
    """AlignScore read through the binary head (AlignScore's bin_sp): each sentence's support is P(aligned) of the
    binary head's softmax for its best chunk, computed here straight from the network on the pair's tokens."""
    import torch

    examples, sentences = validation
    settings = AlignScoreSettings(350, "reference", "mean", "binary")
    scores, _ = score_benchmark(examples.iloc[:2], sentences, scorer, settings, EngineSettings(progress=False))
    chunk_by_doc = {doc: source for doc, source in zip(examples["doc_id"], examples["source"], strict=True)}
    for doc_id, detail in zip(examples["doc_id"].iloc[:2], scores["sentences"], strict=True):
        for sentence in detail:
            chunk = chunk_by_doc[doc_id][sentence["chunk_start"] : sentence["chunk_end"]]
            encoded = scorer.tokenizer(
                chunk, sentence["sentence"], return_tensors="pt", truncation="only_first", max_length=scorer.max_length
            )
            with torch.inference_mode():
                logits = scorer.network(encoded["input_ids"], encoded["attention_mask"], encoded.get("token_type_ids"))["binary"]
            assert sentence["support"] == pytest.approx(float(torch.softmax(logits, dim=-1)[0, 1]), abs=1e-5)


def test_the_heads_share_one_forward_per_batch(validation, scorer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tuning both heads costs the model calls of one: the binary cells read the supports kept from the 3-way
    forwards (the first test checks their values against cells scored one head at a time)."""
    examples, sentences = validation
    calls = {"n": 0}
    forward = type(scorer.network).forward

    def counted(self, *args, **kwargs):
        calls["n"] += 1
        return forward(self, *args, **kwargs)

    monkeypatch.setattr(type(scorer.network), "forward", counted)
    grid = {"words_per_chunk": (350, 40), "aggregations": ("mean",)}
    one_head = TuningSettings(support_heads=("three_way",), **grid)
    sweep({"qags": (examples, sentences)}, scorer, one_head, "reference", EngineSettings(progress=False, max_batch_pairs=4))
    calls_one_head, calls["n"] = calls["n"], 0
    both = TuningSettings(support_heads=("three_way", "binary"), **grid)
    table = sweep({"qags": (examples, sentences)}, scorer, both, "reference", EngineSettings(progress=False, max_batch_pairs=4))
    assert calls_one_head > 1 and calls["n"] == calls_one_head
    assert set(table["support_head"]) == {"three_way", "binary"}


def test_a_model_without_the_binary_head_is_tuned_on_its_one_reading(validation, scorer) -> None:
    from factlab.models.support_heads import readable_heads

    class HubLike:  # any PairScorer that is not factlab's trained aligner
        identity = "hub:some-nli-model"

    assert readable_heads(scorer, ["three_way", "binary"]) == ["three_way", "binary"]
    assert readable_heads(HubLike(), ["three_way", "binary"]) == ["three_way"]
    examples, sentences = validation
    with pytest.raises(ConfigError, match="has none of them"):
        sweep({"qags": (examples, sentences)}, HubLike(), TuningSettings(support_heads=("binary",)), "reference")


def test_choice_is_the_best_macro_mean_and_ties_go_to_the_larger_chunk() -> None:
    rows = [
        # words, aggregation, benchmark, auc: (120, min) wins on the mean (0.75) though not on benchmark a
        (60, "mean", "a", 0.90),
        (60, "mean", "b", 0.50),
        (120, "min", "a", 0.80),
        (120, "min", "b", 0.70),
        (350, "mean", "a", 0.70),
        (350, "mean", "b", 0.60),
        (350, "mean", "c", float("nan")),  # one class in c's sample: no AUC, ignored
    ]
    table = pd.DataFrame(rows, columns=["words_per_chunk", "aggregation", "benchmark", "roc_auc"]).assign(
        support_head="three_way"
    )
    choice = choose(table)
    assert (choice["support_head"], choice["words_per_chunk"], choice["aggregation"]) == ("three_way", 120, "min")
    assert choice["mean_roc_auc"] == pytest.approx(0.75) and choice["benchmarks"] == ["a", "b"]
    assert [cell["words_per_chunk"] for cell in choice["grid"]] == [120, 60, 350]  # best first
    tie = pd.DataFrame([(60, "mean", "a", 0.8), (200, "mean", "a", 0.8)], columns=table.columns[:4]).assign(
        support_head="three_way"
    )
    assert choose(tie)["words_per_chunk"] == 200
    # the binary head wins on the macro mean; on a tie the 3-way head (AlignScore's default reading) is kept
    binary = table.assign(support_head="binary", roc_auc=table["roc_auc"] + 0.01)
    assert choose(pd.concat([table, binary]))["support_head"] == "binary"
    assert choose(pd.concat([binary.assign(roc_auc=table["roc_auc"]), table]))["support_head"] == "three_way"
    with pytest.raises(FactlabError, match="both labels"):
        choose(table[table["benchmark"] == "c"])


def test_sample_is_seeded_labelled_and_in_id_order() -> None:
    frame = pd.DataFrame({"example_id": [f"e{i:02d}" for i in range(30)], "label": [np.nan, 1.0, 0.0] * 10})
    sample = tuning_sample(frame, 8, seed=1)
    assert len(sample) == 8 and sample["label"].notna().all()
    assert list(sample["example_id"]) == sorted(sample["example_id"])
    assert sample.equals(tuning_sample(frame, 8, seed=1)) and not sample.equals(tuning_sample(frame, 8, seed=2))
    assert len(tuning_sample(frame, 0, seed=1)) == 20  # 0 = every labelled example


def test_bad_settings_and_choice_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="aggregations"):
        TuningSettings(aggregations=("median",))
    with pytest.raises(ConfigError, match="words_per_chunk"):
        TuningSettings(words_per_chunk=(0,))
    choice = tmp_path / "alignscore_choice.json"
    with pytest.raises(ConfigError, match="support_heads"):
        TuningSettings(support_heads=("regression",))
    reference = {"chunk_policy": "reference"}
    choice.write_text(json.dumps({"support_head": "binary", "words_per_chunk": 120, "aggregation": "min"} | reference))
    # the scoring rule localises (evidence, tokens); the tuning, which reads scores only, does not
    assert tuned_settings(str(choice), "reference") == AlignScoreSettings(120, "reference", "min", "binary", localise=True)
    choice.write_text(json.dumps({"words_per_chunk": 120, "aggregation": "min"} | reference))
    with pytest.raises(FactlabError, match="alignscore_choice.json: no field 'support_head'"):
        tuned_settings(str(choice), "reference")
    choice.write_text(json.dumps({"aggregation": "min"} | reference))
    with pytest.raises(FactlabError, match="alignscore_choice.json: no field 'words_per_chunk'"):
        tuned_settings(str(choice), "reference")


def test_a_choice_tuned_with_another_chunk_policy_is_refused(tmp_path: Path) -> None:
    """The chunk size was chosen for the chunks of the policy the choice records: every reader (AlignScore and
    QASemConsistency scoring, the throughput benchmark, SCALE's best_chunk, the checker package) refuses another."""
    choice = tmp_path / "alignscore_choice.json"
    tuned = {"support_head": "binary", "words_per_chunk": 120, "aggregation": "min"}
    choice.write_text(json.dumps(tuned | {"chunk_policy": "even"}))
    assert read_choice(str(choice), "even")["words_per_chunk"] == 120
    expected = f"{choice} was tuned with chunk policy 'even', but the configured chunk policy "
    expected += "(score.alignscore.chunk_policy) is 'reference'"
    with pytest.raises(ConfigError, match=re.escape(expected)):
        tuned_settings(str(choice), "reference")
    choice.write_text(json.dumps(tuned))
    with pytest.raises(FactlabError, match="alignscore_choice.json: no field 'chunk_policy'"):
        read_choice(str(choice), "reference")


def test_command_refuses_sentences_of_another_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One line naming the file, non-zero exit, no artefact."""
    data, sentences = tmp_path / "summac_factcc.parquet", tmp_path / "summac_summeval" / "sentences.parquet"
    table, choice = tmp_path / "t.csv", tmp_path / "c.json"
    command = [
        "score", "alignscore-tune", "--data", str(data), "--sentences", str(sentences),
        "--max-examples", "5", "--model", "unused", "--entailment-label", "entailment", "--settings", "{}",
        "--chunk-policy", "reference", "--token-budget", "100", "--max-batch-pairs", "4", "--precision", "fp32",
        "--threads", "1", "--device", "cpu", "--out-table", str(table), "--out-choice", str(choice),
    ]  # fmt: skip
    assert main(command) == 1
    error = capsys.readouterr().err.strip()
    assert error == f"factlab: error: {sentences}: not the sentences of summac_factcc (same order as --data)"
    assert not table.exists() and not choice.exists()
