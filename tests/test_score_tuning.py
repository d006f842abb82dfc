"""AlignScore's chunk size and aggregation chosen on validation data (factlab.score.tuning)."""

from __future__ import annotations

import json
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
from factlab.score.commands import tuned_settings
from factlab.score.tuning import TuningSettings, choose, sweep, tuning_sample

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
    assert list(table["words_per_chunk"]) == [40, 40, 350, 350]
    labels = examples["label"].to_numpy()
    for words, aggregation, auc in table[["words_per_chunk", "aggregation", "roc_auc"]].itertuples(index=False):
        settings_cell = AlignScoreSettings(words, "reference", aggregation)
        scores, _ = score_benchmark(examples, sentences, scorer, settings_cell, EngineSettings(progress=False))
        values = scores["score"].to_numpy()
        u = mannwhitneyu(values[labels == 1], values[labels == 0]).statistic  # AUC = U / (n1 n0)
        assert auc == pytest.approx(u / ((labels == 1).sum() * (labels == 0).sum()))
    assert (table["n"] == len(examples)).all() and (table["n_consistent"] == labels.sum()).all()
    # 40-word chunks cut the articles into several chunks: more pairs than one 350-word chunk
    pairs = table.groupby("words_per_chunk")["pairs"].first()
    assert pairs[40] > pairs[350]


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
    table = pd.DataFrame(rows, columns=["words_per_chunk", "aggregation", "benchmark", "roc_auc"])
    choice = choose(table)
    assert (choice["words_per_chunk"], choice["aggregation"]) == (120, "min")
    assert choice["mean_roc_auc"] == pytest.approx(0.75) and choice["benchmarks"] == ["a", "b"]
    assert [cell["words_per_chunk"] for cell in choice["grid"]] == [120, 60, 350]  # best first
    tie = pd.DataFrame([(60, "mean", "a", 0.8), (200, "mean", "a", 0.8)], columns=table.columns)
    assert choose(tie)["words_per_chunk"] == 200
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
    choice.write_text(json.dumps({"words_per_chunk": 120, "aggregation": "min"}))
    assert tuned_settings(str(choice), "reference") == AlignScoreSettings(120, "reference", "min")
    choice.write_text(json.dumps({"aggregation": "min"}))
    with pytest.raises(FactlabError, match="alignscore_choice.json: no field 'words_per_chunk'"):
        tuned_settings(str(choice), "reference")


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
