"""AlignScore's lexical pre-ranker (`top_chunks`) on real QAGS-XSum records (tests/fixtures): which chunks it keeps,
that every chunk or more reads exactly as the exhaustive scoring, that fewer scores only the kept chunks, how the
tuning chooses k on validation data, and that every reader of the choice honours it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import roc_auc_score
from test_checker import fixture_examples
from tiny_aligner import tiny_aligner

import factlab
from factlab.checker.folder import CARD_FILE, CheckerSettings
from factlab.models.aligner import AlignerConfig, AlignerScorer, new_network, save_aligner
from factlab.models.engine import EngineSettings, PairCache, score_pairs
from factlab.models.support_heads import with_support_head
from factlab.models.token_support import score_tokens
from factlab.preprocess.benchmark import sentence_units
from factlab.score.alignscore import AlignScoreSettings, alignscore_pairs, rank_chunks, score_benchmark
from factlab.score.alignscore_command import tuned_settings
from factlab.score.sentences import sentences_by_owner
from factlab.score.tuning import TuningSettings, choose, choose_top_chunks, sweep, sweep_top_chunks
from factlab.text.chunking import SentenceChunk, alignscore_chunks
from factlab.text.words import overlap_words

FIXTURES = Path(__file__).parent / "fixtures"
ENGINE = EngineSettings(progress=False)
WORDS = 60  # 60-word chunks cut these articles into 4 to 10 chunks


@pytest.fixture(scope="module")
def validation() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Six real QAGS-XSum records with their human labels (faithful yes/no); a second output sentence each."""
    frame = pd.read_csv(FIXTURES / "byo_qags_xsum_head.csv")
    examples = pd.DataFrame(
        {
            "example_id": frame["id"].astype(str),
            "doc_id": [f"doc{i}" for i in range(len(frame))],
            "source": frame["document"],
            "output": frame["summary"] + " It was reported on monday.",
            "label": (frame["faithful"] == "yes").astype(int),
        }
    )
    sentences, _ = sentence_units(examples, "fixture")
    return examples, sentences


@pytest.fixture(scope="module")
def scorer() -> AlignerScorer:
    return tiny_aligner(5)


def source_chunks(sentences: pd.DataFrame, doc_id: str, words_per_chunk: int = WORDS) -> list[SentenceChunk]:
    chunks, _ = alignscore_chunks(sentences_by_owner(sentences, "source", "doc_id")[doc_id], words_per_chunk)
    return chunks


def output_sentence(sentences: pd.DataFrame, example_id: str, index: int = 0) -> str:
    return sentences_by_owner(sentences, "output", "example_id")[example_id][index].text


def test_the_pre_ranker_counts_the_sentences_distinct_words_in_each_chunk(validation) -> None:
    """Worked by hand on the Big Ben article (doc1, four 60-word chunks) and its summary."""
    _, sentences = validation
    chunks = source_chunks(sentences, "doc1")
    sentence = output_sentence(sentences, validation[0]["example_id"].iloc[1])
    assert sentence == "Big ben's 150th anniversary has been chosen as the date to celebrate london's history."
    # the sentence's distinct lower-cased \w+ words: "ben's" is "ben" and "s"; "london's" adds "london"
    assert set(overlap_words(sentence)) == {
        *("150th", "anniversary", "as", "been", "ben", "big", "celebrate", "chosen"),
        *("date", "has", "history", "london", "s", "the", "to"),
    }
    assert chunks[0].text.startswith("London's first history day will be held on the anniversary of big ben's")
    shared = [
        {"anniversary", "ben", "big", "date", "history", "london", "s", "the"},  # 8
        {"as", "celebrate", "date", "london", "the", "to"},  # 6
        {"ben", "big", "celebrate", "date", "history", "london", "s", "the", "to"},  # 9
        {"celebrate", "has", "history", "london", "s", "the", "to"},  # 7
    ]
    chunk_words = [set(overlap_words(chunk.text)) for chunk in chunks]
    assert [set(overlap_words(sentence)) & found for found in chunk_words] == shared
    assert rank_chunks(sentence, chunk_words) == [2, 0, 3, 1]
    # ties go to the earlier chunk: the India test report (doc2) shares 9, 5, 2, 3, 6, 3, 6, 3, 5 words
    india = output_sentence(sentences, validation[0]["example_id"].iloc[2])
    india_words = [set(overlap_words(chunk.text)) for chunk in source_chunks(sentences, "doc2")]
    assert [len(set(overlap_words(india)) & found) for found in india_words] == [9, 5, 2, 3, 6, 3, 6, 3, 5]
    assert rank_chunks(india, india_words) == [0, 4, 6, 1, 8, 3, 5, 7, 2]


def test_the_kept_pairs_are_the_best_chunks_in_source_order(validation) -> None:
    examples, sentences = validation
    job = alignscore_pairs(examples, sentences, AlignScoreSettings(WORDS, top_chunks=2))
    doc1 = [(sentence, chunk) for row, sentence, chunk in job.owners if row == 1]
    assert doc1[:2] == [(0, 0), (0, 2)]  # the Big Ben summary: chunks 2 and 0, in the source's order
    n_chunks = [len(job.chunks[doc]) for doc in examples["doc_id"]]
    assert job.left_out == sum(2 * (n - 2) for n in n_chunks)  # two output sentences per example
    assert len(job.pairs) == sum(2 * 2 for _ in n_chunks)
    # a source of at most k chunks is scored whole; k = 0 reads every chunk, in order
    for settings in (AlignScoreSettings(WORDS), AlignScoreSettings(WORDS, top_chunks=max(n_chunks))):
        whole = alignscore_pairs(examples, sentences, settings)
        expected = [(row, sentence, chunk) for row, n in enumerate(n_chunks) for sentence in range(2) for chunk in range(n)]
        assert whole.owners == expected and whole.left_out == 0


@pytest.mark.parametrize("localise", [False, True])
def test_every_chunk_or_more_gives_exactly_the_exhaustive_scores(validation, scorer, localise: bool) -> None:
    examples, sentences = validation
    exhaustive, counts = score_benchmark(examples, sentences, scorer, AlignScoreSettings(WORDS, localise=localise), ENGINE)
    most = int(exhaustive["n_chunks"].max())
    assert counts["pairs_left_out_by_pre_ranker"] == 0 and most == 10
    for k in (most, most + 5):
        settings = AlignScoreSettings(WORDS, localise=localise, top_chunks=k)
        scores, counted = score_benchmark(examples, sentences, scorer, settings, ENGINE)
        pd.testing.assert_frame_equal(scores, exhaustive, check_exact=True)
        assert counted["pairs"] == counts["pairs"] and counted["pairs_left_out_by_pre_ranker"] == 0


def test_fewer_chunks_scores_only_the_kept_chunks(validation) -> None:  # noqa: PLR0914
    """Each output sentence against its two best chunks by shared words, scored here through the engine by hand: the
    support is their max, the best chunk its index in the source, the evidence inside it, and each word piece's
    support 1 - its lowest P(unsupported) over the two."""
    torch.manual_seed(5)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=256, token_head=True))
    scorer = AlignerScorer(network, tokenizer, device="cpu")
    examples, sentences = validation
    settings = AlignScoreSettings(WORDS, localise=True, top_chunks=2)
    scores, counts = score_benchmark(examples, sentences, scorer, settings, ENGINE)
    outputs = sentences_by_owner(sentences, "output", "example_id")
    left_out = 0
    for row in scores.itertuples():
        chunks = source_chunks(sentences, examples.loc[examples["example_id"] == row.example_id, "doc_id"].iloc[0])
        pieces = iter(row.tokens)
        for item, sentence in zip(row.sentences, outputs[row.example_id], strict=True):
            wanted = set(overlap_words(sentence.text))
            overlap = [len(wanted & set(overlap_words(chunk.text))) for chunk in chunks]
            kept = sorted(sorted(range(len(chunks)), key=lambda i: (-overlap[i], i))[:2])
            left_out += len(chunks) - 2
            pairs = [(chunks[i].text, sentence.text) for i in kept]
            alone = score_pairs(scorer, pairs, ENGINE).scores
            assert item["support"] == pytest.approx(alone.max(), abs=1e-6)
            assert item["best_chunk"] == kept[int(np.argmax(alone))]
            best = chunks[item["best_chunk"]]
            assert all(best.first <= evidence["source_sentence"] < best.stop for evidence in item["evidence"])
            tokens = score_tokens(scorer, pairs, ENGINE)
            kept_pieces = min(len(p) for p in tokens.unsupported)
            lowest = np.minimum(*(p[:kept_pieces] for p in tokens.unsupported))
            offsets = tokens.offsets[0][:kept_pieces]
            expected = [
                (s + sentence.start, e + sentence.start, 1 - p) for (s, e), p in zip(offsets, lowest, strict=True) if e > s
            ]
            got = [next(pieces) for _ in expected]
            assert [(p["start"], p["end"]) for p in got] == [(s, e) for s, e, _ in expected]
            np.testing.assert_allclose([p["support"] for p in got], [p for _, _, p in expected], atol=1e-6)
        assert next(pieces, None) is None
    assert counts["pairs_left_out_by_pre_ranker"] == left_out > 0
    assert counts["pairs"] == 2 * 2 * len(examples)


def test_an_examples_kept_chunks_do_not_depend_on_the_other_examples(validation, scorer) -> None:
    examples, sentences = validation
    settings = AlignScoreSettings(WORDS, top_chunks=3)
    together = alignscore_pairs(examples, sentences, settings)
    for row in range(len(examples)):
        alone = alignscore_pairs(examples.iloc[[row]].reset_index(drop=True), sentences, settings)
        assert [(s, c) for r, s, c in together.owners if r == row] == [(s, c) for _, s, c in alone.owners]
    scores, _ = score_benchmark(examples, sentences, scorer, settings, ENGINE)
    single, _ = score_benchmark(examples.iloc[[3]].reset_index(drop=True), sentences, scorer, settings, ENGINE)
    assert single["sentences"].iloc[0] == scores["sentences"].iloc[3]


@pytest.mark.parametrize("head", ["three_way", "binary"])
def test_the_candidates_reuse_the_sweeps_pairs(validation, scorer, head: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chosen cell with each k: the rows of scoring it with that k directly, and no model call with the sweep's
    cache (the kept pairs are among the cell's exhaustive ones)."""
    examples, sentences = validation
    benchmarks = {"qags": (examples, sentences)}
    settings = TuningSettings(words_per_chunk=(WORDS, 350), aggregations=("mean", "min"), top_chunks=(1, 2, 20))
    cache = PairCache()
    table = sweep(benchmarks, scorer, settings, "reference", ENGINE, cache)
    assert (table["top_chunks"] == 0).all() and (table["pairs_left_out"] == 0).all()
    calls = {"n": 0}
    forward = type(scorer.network).forward

    def counted(self, *args, **kwargs):
        calls["n"] += 1
        return forward(self, *args, **kwargs)

    monkeypatch.setattr(type(scorer.network), "forward", counted)
    choice = {"support_head": head, "words_per_chunk": WORDS, "aggregation": "min"}
    candidates = sweep_top_chunks(benchmarks, scorer, settings, "reference", choice, ENGINE, cache)
    assert calls["n"] == 0
    assert list(candidates["top_chunks"]) == [1, 2, 20] and (candidates["aggregation"] == "min").all()
    exhaustive = table[(table["support_head"] == head) & (table["words_per_chunk"] == WORDS)]["pairs"].iloc[0]
    assert (candidates["pairs"] + candidates["pairs_left_out"] == exhaustive).all()
    labels = examples["label"].to_numpy()
    for k, auc in candidates[["top_chunks", "roc_auc"]].itertuples(index=False):
        direct = AlignScoreSettings(WORDS, "reference", "min", head, top_chunks=k)
        scores, _ = score_benchmark(examples, sentences, with_support_head(scorer, head), direct, ENGINE)
        assert auc == pytest.approx(roc_auc_score(labels, scores["score"].to_numpy()))
    whole = table[(table["support_head"] == head) & (table["words_per_chunk"] == WORDS) & (table["aggregation"] == "min")]
    assert candidates.loc[candidates["top_chunks"] == 20, "roc_auc"].iloc[0] == whole["roc_auc"].iloc[0]


def hand_table() -> pd.DataFrame:
    """The chosen cell (three_way, 120, mean) reads 0.80 and 0.70 (macro 0.75) with every chunk; c has one label."""
    rows = [
        # top_chunks, benchmark, auc
        (0, "a", 0.80),
        (0, "b", 0.70),
        (0, "c", float("nan")),
        (1, "a", 0.70),  # macro 0.70: loses 0.05
        (1, "b", 0.70),
        (1, "c", float("nan")),
        (2, "a", 0.79),  # macro 0.746: loses 0.004
        (2, "b", 0.702),
        (2, "c", float("nan")),
        (3, "a", 0.80),  # macro 0.75: loses nothing
        (3, "b", 0.70),
        (3, "c", float("nan")),
    ]
    table = pd.DataFrame(rows, columns=["top_chunks", "benchmark", "roc_auc"])
    table = table.assign(support_head="three_way", words_per_chunk=120, aggregation="mean")
    table["pairs"] = table["top_chunks"].map({0: 100, 1: 70, 2: 80, 3: 90})  # of 100 (chunk, sentence) pairs
    table["pairs_left_out"] = 100 - table["pairs"]
    other = table[table["top_chunks"] == 0].assign(words_per_chunk=350, roc_auc=[0.60, 0.60, np.nan])
    return pd.concat([table, other], ignore_index=True)


def test_the_choice_is_the_smallest_k_within_the_loss() -> None:
    table = hand_table()
    choice = choose(table)
    assert (choice["words_per_chunk"], choice["mean_roc_auc"]) == (120, 0.75)  # the grid's rows only
    picked = choose_top_chunks(table, choice, 0.005)
    assert picked["top_chunks"] == 2
    assert picked["exhaustive_mean_roc_auc"] == 0.75 and picked["chosen_mean_roc_auc"] == pytest.approx(0.746)
    assert [c["top_chunks"] for c in picked["top_chunks_candidates"]] == [1, 2, 3]
    assert [c["pairs"] for c in picked["top_chunks_candidates"]] == [140, 160, 180]  # a and b: c has no exhaustive AUC
    assert choose_top_chunks(table, choice, 0.001)["top_chunks"] == 3
    assert choose_top_chunks(table, choice, 0.0)["top_chunks"] == 3  # as good as every chunk
    assert choose_top_chunks(table, choice, 0.05)["top_chunks"] == 1
    # no candidate within the loss: every chunk
    worse = table.assign(roc_auc=table["roc_auc"].where(table["top_chunks"] == 0, 0.5))
    none = choose_top_chunks(worse, choice, 0.005)
    assert none["top_chunks"] == 0 and none["chosen_mean_roc_auc"] == none["exhaustive_mean_roc_auc"] == 0.75
    # no candidates at all (top_chunks: []), or a table written before the pre-ranker: every chunk
    grid_only = table[table["top_chunks"] == 0]
    assert choose_top_chunks(grid_only, choice, 0.005)["top_chunks"] == 0
    assert choose_top_chunks(grid_only.drop(columns=["top_chunks", "pairs_left_out"]), choice, 0.005)["top_chunks"] == 0
    # a candidate's rows never win the grid choice, however high
    assert choose(table.assign(roc_auc=table["roc_auc"].where(table["top_chunks"] == 0, 0.99)))["mean_roc_auc"] == 0.75


def test_bad_tuning_settings() -> None:
    from factlab.errors import ConfigError, FactlabError

    with pytest.raises(ConfigError, match="top_chunks"):
        TuningSettings(top_chunks=(0, 2))
    with pytest.raises(ConfigError, match="max_auc_loss"):
        TuningSettings(max_auc_loss=-0.1)
    with pytest.raises(FactlabError, match="top_chunks"):
        AlignScoreSettings(top_chunks=-1)


def test_the_choices_readers_honour_top_chunks_and_older_ones_read_every_chunk(tmp_path: Path) -> None:
    from factlab.checker.pipeline.package_command import checker_settings

    choice = tmp_path / "alignscore_choice.json"
    tuned = {"support_head": "binary", "words_per_chunk": 120, "aggregation": "min", "chunk_policy": "reference"}
    choice.write_text(json.dumps(tuned))  # written before the pre-ranker: no top_chunks
    assert tuned_settings(str(choice), "reference").top_chunks == 0
    choice.write_text(json.dumps(tuned | {"top_chunks": 2, "exhaustive_mean_roc_auc": 0.75, "chosen_mean_roc_auc": 0.746}))
    assert tuned_settings(str(choice), "reference") == AlignScoreSettings(120, "reference", "min", "binary", True, top_chunks=2)
    arguments = argparse.Namespace(
        choice=str(choice),
        settings={},
        localisation_report=None,
        uncertain_precision=None,
    )
    card = checker_settings(arguments, {})
    assert (card.top_chunks, card.words_per_chunk, card.support_head) == (2, 120, "binary")
    assert card.validation["tuning_mean_roc_auc"] == 0.746 and card.validation["tuning_exhaustive_mean_roc_auc"] == 0.75
    # a real card written before the pre-ranker loads as every chunk
    old = FIXTURES / "decisions" / "checker" / CARD_FILE
    assert "top_chunks" not in json.loads(old.read_text())
    assert CheckerSettings.from_json(old).top_chunks == 0


def test_the_checker_reads_its_cards_top_chunks(tmp_path: Path) -> None:
    """`factlab.check` scores as the pipeline's AlignScore with the card's top_chunks."""
    upstream = pd.read_json(FIXTURES / "byo_qags_xsum_head.jsonl", lines=True)
    settings = CheckerSettings(words_per_chunk=WORDS, aggregation="min", precision="fp32", top_chunks=1)
    scorer = tiny_aligner(5)
    save_aligner(scorer.network, scorer.tokenizer, tmp_path, {"backbone": "minilm"})
    (tmp_path / CARD_FILE).write_text(json.dumps(settings.as_json()))
    frame = factlab.check(upstream["document"].tolist(), upstream["summary"].tolist(), ids=upstream["id"], model=tmp_path)
    examples, sentences = fixture_examples(upstream)
    expected = {}
    for k in (1, 0):
        reading = AlignScoreSettings(WORDS, "reference", "min", "three_way", top_chunks=k)
        expected[k] = score_benchmark(examples, sentences, scorer, reading, ENGINE)[0].set_index("example_id")["score"]
    got = frame.set_index("id")["score"]
    np.testing.assert_allclose(got, expected[1].loc[got.index], atol=1e-5)
    assert not np.allclose(got, expected[0].loc[got.index], atol=1e-5)  # one chunk is not every chunk here
