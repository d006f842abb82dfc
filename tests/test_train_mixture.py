"""The aligner's training mixture: label conversion, sampling, the 8-word leakage filter and check."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from factlab.data.leakage import EvaluationIndex, shingles
from factlab.errors import FactlabError
from factlab.text.words import overlap_words
from factlab.train.mixture import MixtureSettings, assign_validation, build_mixture, check_leakage, corpus_pairs

FIXTURES = Path(__file__).parent / "fixtures"
# The first article of the QAGS-XSum fixture (real evaluation text), as its words begin.
ARTICLE_START = "A g4s security van has been robbed outside a branch of royal bank of scotland"


def evaluation() -> dict[str, pd.DataFrame]:
    frame = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv").rename(columns={"document": "source", "summary": "output"})
    return {"qags_xsum": frame}


def training(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "source": [r[0] for r in rows],
            "output": [r[1] for r in rows],
            "nli_label": [r[2] for r in rows],
            "label": [int(r[2] == "entailment") for r in rows],
            "doc_id": [f"d{i}" for i in range(len(rows))],
        }
    )


def test_words_and_runs_worked_by_hand() -> None:
    assert overlap_words("The U.S. team's 3-0 win!") == ["the", "u", "s", "team", "s", "3", "0", "win"]
    assert len(shingles("one two three four five six seven eight nine", 8)) == 2
    assert shingles("one two three four five six seven", 8) == set()


def test_eight_word_run_leaks_seven_does_not() -> None:
    index = EvaluationIndex.build([("qags_xsum", evaluation()["qags_xsum"]["source"])], 8)
    eight = " ".join(ARTICLE_START.split()[:8])  # "A g4s security van has been robbed outside"
    seven = " ".join(ARTICLE_START.split()[:7])
    assert index.leaks(f"Yesterday: {eight.upper()}, said the police.") == "qags_xsum"  # case and punctuation do not hide it
    assert index.leaks(f"Yesterday: {seven}, said the police.") is None


def test_a_text_leaking_into_two_benchmarks_is_counted_against_its_first_run() -> None:
    # Two real articles indexed as two benchmarks; the text opens with 8 words of the second and then
    # copies 40 words of the first: 37 leaking runs. They were once visited in a set's order, which Python's
    # per-process hash salt shuffles, so a mixture report's per-benchmark counts changed between two runs
    # of the same build; with that order this text was attributed to the first article under 12 of 12
    # PYTHONHASHSEED values tried.
    articles = evaluation()["qags_xsum"]["source"].tolist()
    index = EvaluationIndex.build([("first_article", [articles[0]]), ("second_article", [articles[1]])], 8)
    text = " ".join(articles[1].split()[:8]) + " and then " + " ".join(articles[0].split()[:40])
    assert index.leaks(text) == "second_article"


def test_three_way_and_binary_corpora_convert() -> None:
    three = corpus_pairs("anli", training([("p", "h1", "entailment"), ("p", "h2", "neutral"), ("p", "h3", "contradiction")]))
    assert three["label_3way"].tolist() == [0, 1, 2]
    assert three["label_bin"].isna().all()
    assert set(three["task"]) == {"nli3"}
    binary = corpus_pairs("rte", training([("p", "h1", "entailment"), ("p", "h2", "not_entailment")]))
    assert binary["label_bin"].tolist() == [1, 0]
    assert binary["label_3way"].isna().all()
    sick = training([("p", "h", "neutral")]).assign(relatedness=[3.0])
    assert corpus_pairs("sick", sick)["score"].tolist() == [0.5]  # (3 - 1) / 4


def test_leaking_pairs_are_removed_and_counted() -> None:
    eight = " ".join(ARTICLE_START.split()[:8])
    corpus = training(
        [
            ("A quiet morning in the village.", "The village was quiet.", "entailment"),
            (f"Reports say {eight} on monday.", "A van was robbed.", "entailment"),
            ("The river flooded the fields.", f"News: {eight}.", "not_entailment"),
            ("The shop opened at nine.", "The shop opened.", "entailment"),
        ]
    )
    settings = MixtureSettings(sources={"rte": 0}, validation_share=0.0)
    mixture, report = build_mixture({"rte": corpus}, evaluation(), settings)
    assert len(mixture) == 2
    assert report["origins"]["rte"]["removed_leakage"] == 2
    assert report["origins"]["rte"]["removed_leakage_by_benchmark"] == {"qags_xsum": 2}
    assert check_leakage(mixture, evaluation(), 8)["leaking_pairs"] == 0
    with pytest.raises(FactlabError, match="leakage: 1 training pairs share a 8-word run"):
        check_leakage(corpus_pairs("rte", corpus).iloc[:2], evaluation(), 8)


def test_validation_takes_whole_documents() -> None:
    rows = [(f"premise {i // 3}", f"claim {i}", "entailment") for i in range(30)]
    corpus = training(rows).assign(doc_id=[f"d{i // 3}" for i in range(30)])
    mixture = corpus_pairs("rte", corpus)
    split = assign_validation(mixture, MixtureSettings(validation_share=0.2, max_validation_per_origin=100, seed=1))
    validation_docs = set(mixture.loc[split == "validation", "doc_id"])
    assert (split == "validation").sum() == 6  # 0.2 x 30, in whole documents of 3
    assert not validation_docs & set(mixture.loc[split == "train", "doc_id"])
    again = assign_validation(mixture, MixtureSettings(validation_share=0.2, max_validation_per_origin=100, seed=1))
    assert again.tolist() == split.tolist()


def test_unknown_settings_are_refused() -> None:
    with pytest.raises(FactlabError, match="unknown mixture settings"):
        MixtureSettings.from_mapping({"sources": {}, "size": 3})
    with pytest.raises(FactlabError, match="not given as training inputs"):
        build_mixture({}, evaluation(), MixtureSettings(sources={"rte": 10}))
