"""A pair's score does not depend on what is scored with it: the engine and `factlab.Checker` on 200 real SummEval
pairs, each alone, in shuffled order, and inside a larger call, give identical values to the last bit (fp32 and
bf16), with the packaged MiniLM's real weights (padding-width effects are larger on trained weights than on random
ones)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from tiny_aligner import save_tiny_checker

import factlab
from factlab.checker.folder import CheckerSettings
from factlab.data.adapters.summeval import adapt_summeval
from factlab.download.manifest import RawFiles
from factlab.models.aligner import AlignerConfig, AlignerScorer, new_network
from factlab.models.engine import EngineSettings, score_pair_distributions, score_pairs

PAIRS = 200


@pytest.fixture(scope="module")
def summeval(raw: RawFiles) -> pd.DataFrame:
    """200 SummEval (article, summary) pairs: two systems' summaries of each of the first 100 articles."""
    frame = adapt_summeval(raw).frame
    frame = frame.sort_values(["doc_id", "system"]).groupby("doc_id", sort=True).head(2)
    assert len(frame) == PAIRS
    return frame.reset_index(drop=True)


@pytest.fixture(scope="module")
def scorer() -> AlignerScorer:
    """Two layers of the packaged MiniLM (real weights), seeded heads: a token and a type head, as a checker has."""
    torch.manual_seed(0)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=2, max_length=512, token_head=True, type_head=True))
    return AlignerScorer(network.eval(), tokenizer, device="cpu")


def chunk_pairs(summeval: pd.DataFrame) -> list[tuple[str, str]]:
    """(first words of the article, summary) pairs: premises of 40 to 360 words, rows of many lengths."""
    return [
        (" ".join(source.split()[: 40 + (37 * index) % 320]), summary)
        for index, (source, summary) in enumerate(zip(summeval["source"], summeval["output"], strict=True))
    ]


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_engine_scores_a_pair_alike_alone_shuffled_and_among_others(
    scorer: AlignerScorer, summeval: pd.DataFrame, precision: str
) -> None:
    pairs = chunk_pairs(summeval)[: PAIRS // 2]
    settings = EngineSettings(token_budget=16384, max_batch_pairs=256, precision=precision, progress=False)
    together = score_pairs(scorer, pairs, settings).scores
    alone = np.array([score_pairs(scorer, [pair], settings).scores[0] for pair in pairs])
    order = np.random.default_rng(7).permutation(len(pairs))
    shuffled = np.empty(len(pairs))
    shuffled[order] = score_pairs(scorer, [pairs[i] for i in order], settings).scores
    larger = score_pairs(scorer, chunk_pairs(summeval)[PAIRS // 2 :] + pairs, settings).scores[-len(pairs) :]
    assert len({len(premise.split()) for premise, _ in pairs}) > 50  # rows of many lengths share batches
    for other in (alone, shuffled, larger):
        assert np.array_equal(together, other), np.abs(together - other).max()
    distributions = score_pair_distributions(scorer, pairs[:40], settings).probabilities
    for index in (0, 17, 39):
        assert np.array_equal(distributions[index], score_pair_distributions(scorer, [pairs[index]], settings).probabilities[0])


@pytest.fixture(scope="module")
def checker_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    settings = CheckerSettings(words_per_chunk=120, aggregation="mean", threshold=0.32, token_threshold=0.25, precision="bf16")
    return save_tiny_checker(tmp_path_factory.mktemp("checker"), settings)


def as_json_lines(frame: pd.DataFrame) -> list[str]:
    return [json.dumps(record, sort_keys=True, allow_nan=False) for record in frame.to_dict("records")]


def test_checker_answers_a_pair_alike_alone_shuffled_and_inside_a_larger_file(
    checker_dir: Path, summeval: pd.DataFrame, raw: RawFiles
) -> None:
    """Scores, sentences, spans, types and corrections: the same JSON for each of 200 pairs whatever else is checked."""
    checker = factlab.Checker(model=checker_dir)
    sources, outputs, ids = summeval["source"].tolist(), summeval["output"].tolist(), summeval["example_id"].tolist()
    together = as_json_lines(checker.check(sources, outputs, ids))
    alone = [as_json_lines(checker.check([s], [o], [i]))[0] for s, o, i in zip(sources, outputs, ids, strict=True)]
    order = np.random.default_rng(3).permutation(len(ids)).tolist()
    shuffled = as_json_lines(checker.check([sources[i] for i in order], [outputs[i] for i in order], [ids[i] for i in order]))
    everything = adapt_summeval(raw).frame.sort_values(["doc_id", "system"])
    rest = everything[~everything["example_id"].isin(ids)].groupby("doc_id").head(4)
    inside = checker.check(
        rest["source"].tolist() + sources, rest["output"].tolist() + outputs, rest["example_id"].tolist() + ids
    )
    larger = as_json_lines(inside.iloc[len(rest) :])
    assert sum('"spans": [{' in line for line in together) > 20  # spans and corrections are exercised
    for row in map(json.loads, together):
        for span in row["spans"]:  # a span lies inside the sentence it names
            sentence = row["sentences"][span["sentence"]]
            assert sentence["start"] <= span["start"] < span["end"] <= sentence["end"], (row["id"], span)
        if row["consistent"]:  # an output the checker finds consistent is never changed
            assert row["correction"] is None, row["id"]
    assert alone == together
    assert [shuffled[order.index(i)] for i in range(len(ids))] == together
    assert larger == together


def test_one_progress_bar_for_the_call_and_none_without_progress(
    checker_dir: Path, summeval: pd.DataFrame, capfd: pytest.CaptureFixture[str]
) -> None:
    sources, outputs = summeval["source"].tolist()[:40], summeval["output"].tolist()[:40]
    factlab.Checker(model=checker_dir, progress=False).check(sources, outputs)
    assert capfd.readouterr().err == ""
    factlab.Checker(model=checker_dir, progress=True).check(sources, outputs)
    bars = {line.split(":")[0].strip() for line in capfd.readouterr().err.replace("\r", "\n").splitlines() if "%|" in line}
    assert bars == {"factlab check"}
