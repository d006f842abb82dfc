"""SCALE: window scores against pairs scored one at a time, and the retrieval search against a
transcription of SCALE's own `scale_retrieve` loop, on real WiCE claims (tests/fixtures)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tiny_aligner import tiny_aligner

from factlab.cli import main
from factlab.errors import ConfigError, DataError, FactlabError
from factlab.models.aligner import AlignerScorer, save_aligner
from factlab.models.engine import EngineSettings, reference_scores
from factlab.models.loading import load_pair_scorer
from factlab.preprocess.benchmark import sentence_units
from factlab.score.scale import (
    EngineScores,
    RetrievalSettings,
    ScaleSettings,
    SearchTask,
    at_most,
    binary_search,
    brute_force,
    from_mapping,
    score_scale,
    split_groups,
    top_k,
    whole_premise,
    window_premises,
)
from factlab.score.scale_retrieval import ChunkSettings, evaluate_retrieval, hit, read_claims, recall
from factlab.text.chunking import alignscore_chunks
from factlab.text.sentences import Sentence

FIXTURES = Path(__file__).parent / "fixtures"
ENGINE = EngineSettings(progress=False)
RETRIEVAL = {"branches": 2, "split": "reference", "group_premise": "whole", "ks": [1, 3], "splits": ["test"], "max_claims": 0}
PARAMS = {"chunk_size": 128, "overlap": 0.25, "window_policy": "covering", "aggregation": "mean", "retrieval": RETRIEVAL}


def settings(**changes: object) -> ScaleSettings:
    return from_mapping(ScaleSettings, {**PARAMS, **changes}, "score.scale")


@pytest.fixture(scope="module")
def scorer() -> AlignerScorer:
    return tiny_aligner(5)


@pytest.fixture(scope="module")
def wice() -> pd.DataFrame:
    """Four real WiCE test claims (three with annotated support, one not supported), as the adapter builds them."""
    return pd.read_json(FIXTURES / "wice_claims_sample.jsonl", lines=True, dtype={"supporting_sentences": str})


def sentence_task(n: int, hypothesis: str = "h") -> SearchTask:
    sentences = [f"sentence {i}." for i in range(n)]
    source = " ".join(sentences)
    starts = np.cumsum([0] + [len(s) + 1 for s in sentences[:-1]])
    return SearchTask(source, [(int(a), int(a) + len(s)) for a, s in zip(starts, sentences, strict=True)], hypothesis)


def counting(one: Callable[[str, str], float]) -> Callable[[Sequence[tuple[str, str]]], np.ndarray]:
    def score(pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return np.array([one(premise, hypothesis) for premise, hypothesis in pairs])

    return score


def hashed(premise: str, hypothesis: str) -> float:
    """A deterministic 'model' with no structure at all: the search must still follow SCALE's path."""
    return int(hashlib.sha1(f"{premise}|{hypothesis}".encode()).hexdigest()[:8], 16) / 2**32


def scale_reference_retrieve(convo: list[str], hypothesis: str, one: Callable[[str, str], float]) -> tuple[str, float, int]:
    """asappresearch/scale-score `scale_retrieve` with `get_retrieval_chunks` (branches=2), transcribed:
    one model call per group; returns the retrieved sentence, its score, the calls."""
    calls = 0

    def level(utts: list[str]) -> tuple[list[float], list[list[str]]]:
        nonlocal calls
        if len(utts) == 1:
            groups = [utts]
        else:
            interval = max(len(utts) // 2, 1)
            groups = [utts[i : i + interval] for i in range(0, len(utts), interval)]
        calls += len(groups)
        return [one(" ".join(group), hypothesis) for group in groups], groups

    results, groups = level(convo)
    utts = groups[int(np.argmax(results))]
    while len(utts) > 1:
        results, groups = level(utts)
        utts = groups[int(np.argmax(results))]
    return utts[0], max(results), calls


def test_groups_by_hand() -> None:
    assert split_groups(0, 8, 2, "reference") == [(0, 4), (4, 8)]
    assert split_groups(0, 5, 2, "reference") == [(0, 2), (2, 4), (4, 5)]  # SCALE: the remainder is a third group
    assert split_groups(0, 3, 2, "reference") == [(0, 1), (1, 2), (2, 3)]
    assert split_groups(4, 9, 2, "even") == [(4, 6), (6, 9)]
    assert split_groups(0, 10, 3, "even") == [(0, 3), (3, 6), (6, 10)]
    assert split_groups(0, 2, 3, "even") == [(0, 1), (1, 2)]


@pytest.mark.parametrize(("n", "target"), [(8, 5), (16, 0), (16, 15), (32, 17)])
def test_search_finds_the_sentence_in_two_calls_per_halving(n: int, target: int) -> None:
    """Only the groups holding the target sentence score high: log2(n) levels of two calls."""
    task = sentence_task(n)
    needle = f"sentence {target}."
    path = binary_search([task], counting(lambda premise, _: 0.9 if needle in premise else 0.1), 2, "reference")[0]
    assert (path[-1].first, path[-1].stop) == (target, target + 1)
    assert path[-1].calls == 2 * math.ceil(math.log2(n))
    assert [step.stop - step.first for step in path] == [n >> level for level in range(int(math.log2(n)) + 1)]
    assert path[-1].score == 0.9
    # stopped at three sentences: the first step of the path with at most three left (2 sentences, 2 calls fewer)
    assert at_most(path, 3) == path[-2] and at_most(path, 3).calls == path[-1].calls - 2
    assert at_most(path, n).calls == 0


def test_search_odd_counts_by_hand() -> None:
    """5 sentences, groups 2 + 2 + 1: the lone last sentence is found in 3 calls, sentence 1 in 3 + 2."""
    for target, calls in ((4, 3), (1, 5), (2, 5)):
        needle = f"sentence {target}."
        path = binary_search([sentence_task(5)], counting(lambda p, _, needle=needle: float(needle in p)), 2, "reference")[0]
        assert (path[-1].first, path[-1].calls) == (target, calls)
    # all scores tied: np.argmax keeps the first group at every level, as SCALE does
    path = binary_search([sentence_task(5)], counting(lambda p, h: 0.5), 2, "reference")[0]
    assert [(step.first, step.stop) for step in path] == [(0, 5), (0, 2), (0, 1)]


@pytest.mark.parametrize("hypothesis", ["a", "b", "c"])
def test_search_follows_scale_reference_loop(hypothesis: str) -> None:
    """Against the transcribed reference, with scores that have no structure, for every size 2-40 at once
    (the lockstep batching of many tasks must not mix them up)."""
    tasks = [sentence_task(n, hypothesis) for n in range(2, 41)]
    calls: list[int] = []

    def score(pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        calls.append(len(pairs))
        return np.array([hashed(p, h) for p, h in pairs])

    paths = binary_search(tasks, score, 2, "reference")
    assert len(calls) == max(len(path) - 1 for path in paths)  # one scoring call per level, all tasks together
    for task, path in zip(tasks, paths, strict=True):
        sentences = [task.text(i, i + 1) for i in range(len(task.units))]
        found, value, reference_calls = scale_reference_retrieve(sentences, hypothesis, hashed)
        assert task.text(path[-1].first, path[-1].stop) == found
        assert (path[-1].calls, path[-1].score) == (reference_calls, value)


def test_brute_force_and_top_k() -> None:
    tasks = [sentence_task(4), sentence_task(3)]
    values = {"sentence 0.": 0.2, "sentence 1.": 0.7, "sentence 2.": 0.7, "sentence 3.": 0.9}
    seen: list[int] = []

    def score(pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        seen.append(len(pairs))
        return np.array([values[p] for p, _ in pairs])

    scores = brute_force(tasks, score)
    assert seen == [7]
    assert [list(s) for s in scores] == [[0.2, 0.7, 0.7, 0.9], [0.2, 0.7, 0.7]]
    assert top_k(scores[0], 3) == [3, 1, 2]  # tie between 1 and 2: the earlier first
    assert top_k(scores[1], 5) == [1, 2, 0]


def test_recall_and_hit_by_hand() -> None:
    supporting = [[7, 13], [6, 7, 13], [7, 8, 9, 13]]  # wice-test03232's annotation
    assert recall([7], supporting) == 0.5 and hit([7], supporting)
    assert recall([13, 6, 2], supporting) == 2 / 3  # {6, 13} of {6, 7, 13}
    assert recall([7, 13, 0], supporting) == 1.0
    assert recall([8, 9], supporting) == 0.5 and recall([0, 1, 2], supporting) == 0.0 and not hit([0, 1, 2], supporting)


def test_claims_are_wice_sentences_and_unsupported_ones_are_left_out(wice: pd.DataFrame) -> None:
    claims, counts = read_claims(wice, "wice.jsonl", from_mapping(RetrievalSettings, RETRIEVAL, "r"))
    assert counts == {"claims_in_splits": 4, "claims_without_support": 1, "claims_with_support": 3, "claims_evaluated": 3}
    assert [c.example_id for c in claims] == ["wice-test00188", "wice-test03232", "wice-test03787"]
    beetle = claims[1].task
    assert len(beetle.units) == 15 and claims[1].supporting[0] == (7, 13)
    assert beetle.text(13, 14).startswith("They are powerful swimmers, and are able to stay under water")
    assert beetle.text(0, 15) == wice.loc[wice["example_id"] == "wice-test03232", "source"].item()
    claims, counts = read_claims(wice, "wice.jsonl", from_mapping(RetrievalSettings, {**RETRIEVAL, "max_claims": 2}, "r"))
    assert len(claims) == counts["claims_evaluated"] == 2


def hand_windows(tokenizer: object, source: str, sentences: list[str], chunk_size: int) -> list[tuple[int, int]]:
    """Covering windows by hand: [CLS] window [SEP] sentence [SEP] fits chunk_size, a new one every 3/4 window."""
    longest = max(len(tokenizer(s, add_special_tokens=False)["input_ids"]) for s in sentences)  # type: ignore[operator]
    encoded = tokenizer(source, add_special_tokens=False, return_offsets_mapping=True)  # type: ignore[operator]
    width, n = chunk_size - 3 - longest, len(encoded["input_ids"])
    starts = [0]
    while starts[-1] + width < n:
        starts.append(starts[-1] + int(width * 0.75))
    offsets = encoded["offset_mapping"]
    return [(offsets[a][0], offsets[min(a + width, n) - 1][1]) for a in starts]


@pytest.mark.parametrize("aggregation", ["mean", "min"])
def test_scale_is_max_over_windows_then_mean_or_min(wice: pd.DataFrame, scorer: AlignerScorer, aggregation: str) -> None:
    """Real WiCE pages and claims (a second real sentence added to each output), every pair scored alone."""
    examples = wice.head(3).assign(output=lambda d: d["output"] + " The page was retrieved in 2021.")
    sentences, _ = sentence_units(examples, "fixture")
    scores, counts = score_scale(examples, sentences, scorer, settings(aggregation=aggregation), ENGINE)
    assert counts["examples"] == 3 and counts["pairs_premise_cut"] == 0
    for example, row in zip(examples.itertuples(), scores.itertuples(), strict=True):
        outputs = sentences[(sentences["side"] == "output") & (sentences["example_id"] == example.example_id)]
        texts = list(outputs.sort_values("sentence_index")["text"])
        assert len(texts) == 2
        spans = hand_windows(scorer.tokenizer, example.source, texts, 128)
        assert len(spans) > 2 and row.n_chunks == len(spans)
        matrix = reference_scores(scorer, [(example.source[a:b], s) for s in texts for a, b in spans], pad_to=256)
        matrix = matrix.reshape(len(texts), len(spans))
        per_sentence = matrix.max(axis=1)
        expected = per_sentence.mean() if aggregation == "mean" else per_sentence.min()
        assert row.score == pytest.approx(expected, abs=1e-5)
        for item, values, text in zip(row.sentences, matrix, texts, strict=True):
            best = int(np.argmax(values))
            assert item["sentence"] == text and item["support"] == pytest.approx(values.max(), abs=1e-5)
            assert (item["best_chunk"], item["chunk_start"], item["chunk_end"]) == (best, *spans[best])


def test_retrieval_on_real_claims_matches_the_reference_loop(wice: pd.DataFrame, scorer: AlignerScorer) -> None:
    """Binary search and brute force with the engine against SCALE's loop and single pairs, and recall@k by hand."""
    retrieval = from_mapping(RetrievalSettings, RETRIEVAL, "r")
    claims, _ = read_claims(wice, "wice.jsonl", retrieval)
    score = EngineScores(scorer, ENGINE)
    table, summary = evaluate_retrieval(claims, score, retrieval, whole_premise)
    assert len(table) == 3 * 2 * 2

    def one(premise: str, hypothesis: str) -> float:
        return float(reference_scores(scorer, [(premise, hypothesis)], pad_to=256)[0])

    for claim in claims:
        task = claim.task
        sentences = [task.text(i, i + 1) for i in range(len(task.units))]
        found, _, calls = scale_reference_retrieve(sentences, task.hypothesis, one)
        row = table[(table["example_id"] == claim.example_id) & (table["method"] == "binary_search") & (table["k"] == 1)]
        (index,) = json.loads(row["retrieved"].item())
        assert sentences[index] == found and row["calls"].item() == calls
        assert row["recall"].item() == recall([index], claim.supporting)
        alone = np.array([one(s, task.hypothesis) for s in sentences])
        brute = table[(table["example_id"] == claim.example_id) & (table["method"] == "brute_force") & (table["k"] == 3)]
        assert json.loads(brute["retrieved"].item()) == list(np.argsort(-alone, kind="stable")[:3])
        assert brute["calls"].item() == len(sentences)
        spans = json.loads(brute["spans"].item())
        assert [task.source[a:b] for a, b in spans] == [sentences[i] for i in json.loads(brute["retrieved"].item())]
    brute_3 = next(s for s in summary if (s["method"], s["k"]) == ("brute_force", 3))
    assert brute_3["recall"] == pytest.approx(table.query("method == 'brute_force' and k == 3")["recall"].mean())
    assert brute_3["mean_calls"] == pytest.approx((19 + 15 + 22) / 3)


def test_best_chunk_retrieval_is_the_best_sentences_of_the_best_chunk(wice: pd.DataFrame, scorer: AlignerScorer) -> None:
    """best_chunk @k: AlignScore's chunks of the page (as factlab.text.chunking makes them), the best by single
    pair, then its k best sentences scored alone; against single pairs."""
    retrieval = from_mapping(RetrievalSettings, RETRIEVAL, "r")
    claims, _ = read_claims(wice, "wice.jsonl", retrieval)
    table, summary = evaluate_retrieval(claims, EngineScores(scorer, ENGINE), retrieval, whole_premise, ChunkSettings(60))
    assert len(table) == 3 * 2 * 3 and {row["split"] for row in summary} == {"test"}

    def one(premise: str, hypothesis: str) -> float:
        return float(reference_scores(scorer, [(premise, hypothesis)], pad_to=256)[0])

    for claim in claims:
        task = claim.task
        sentences = [Sentence(task.source[a:b], a, b) for a, b in task.units]
        chunks, _ = alignscore_chunks(sentences, 60)
        best = chunks[int(np.argmax([one(chunk.text, task.hypothesis) for chunk in chunks]))]
        alone = np.array([one(sentence.text, task.hypothesis) for sentence in sentences[best.first : best.stop]])
        for k in (1, 3):
            row = table[(table["example_id"] == claim.example_id) & (table["method"] == "best_chunk") & (table["k"] == k)]
            expected = [best.first + int(i) for i in np.argsort(-alone, kind="stable")[:k]]
            assert json.loads(row["retrieved"].item()) == expected
            assert row["calls"].item() == len(chunks) + best.stop - best.first
            assert row["recall"].item() == recall(expected, claim.supporting)


def test_windowed_groups_cost_one_call_per_window(wice: pd.DataFrame, scorer: AlignerScorer) -> None:
    """`windows`: a group's score is the max over its windows, each window a call."""
    claims, _ = read_claims(wice, "wice.jsonl", from_mapping(RetrievalSettings, RETRIEVAL, "r"))
    task = claims[1].task  # the beetle page, 15 sentences
    premises = window_premises(scorer, settings(chunk_size=64))
    windows = premises(task.text(0, 7), task.hypothesis)
    assert len(windows) > 1 and all(w in task.source for w in windows)
    pairs_seen: list[tuple[str, str]] = []

    def score(pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        pairs_seen.extend(pairs)
        return np.array([hashed(p, h) for p, h in pairs])

    path = binary_search([task], score, 2, "reference", premises)[0]
    assert path[-1].calls == len(pairs_seen)
    first_level = [premises(task.text(a, b), task.hypothesis) for a, b in split_groups(0, 15, 2, "reference")]
    best = [max(hashed(w, task.hypothesis) for w in group) for group in first_level]
    assert (path[1].first, path[1].stop) == split_groups(0, 15, 2, "reference")[int(np.argmax(best))]


def one_line(error: pytest.ExceptionInfo[FactlabError], *parts: str) -> None:
    message = str(error.value)
    assert "\n" not in message and all(part in message for part in parts), message


def test_bad_claims_name_file_record_and_field(wice: pd.DataFrame) -> None:
    retrieval = from_mapping(RetrievalSettings, RETRIEVAL, "r")
    beetle = wice["example_id"] == "wice-test03232"
    for column, value in (
        ("supporting_sentences", "[[7, 13"),
        ("supporting_sentences", "[[7, 15]]"),  # index past the 15 sentences
        ("evidence_offsets", "[[0, 5], [3, 99999]]"),
    ):
        broken = wice.copy()
        broken.loc[beetle, column] = value
        with pytest.raises(DataError) as error:
            read_claims(broken, "results/data/wice_claims.parquet", retrieval)
        one_line(error, "results/data/wice_claims.parquet", "wice-test03232", repr(column))
    with pytest.raises(DataError) as error:
        read_claims(wice.drop(columns="evidence_offsets"), "w.parquet", retrieval)
    one_line(error, "w.parquet", "'evidence_offsets'")


def test_bad_settings_and_inputs(wice: pd.DataFrame, scorer: AlignerScorer) -> None:
    with pytest.raises(ConfigError, match=r"missing settings \['aggregation'\]"):
        from_mapping(ScaleSettings, {k: v for k, v in PARAMS.items() if k != "aggregation"}, "score.scale")
    with pytest.raises(ConfigError, match=r"unknown settings \['model'\]"):
        settings(model="trained")
    for bad in ({"aggregation": "median"}, {"overlap": 1.0}, {"retrieval": {**RETRIEVAL, "branches": 1}}):
        with pytest.raises(ConfigError, match="score.scale"):
            settings(**bad)
    examples = wice.head(1)
    sentences, _ = sentence_units(examples, "fixture")
    with pytest.raises(ConfigError, match="max_length 256"):
        score_scale(examples, sentences, scorer, settings(chunk_size=512), ENGINE)
    with pytest.raises(DataError) as error:
        score_scale(examples, sentences, scorer, settings(chunk_size=30), ENGINE)  # the claim alone takes ~30 tokens
    one_line(error, examples["example_id"].item(), "'output'")


def test_commands_write_scores_and_the_retrieval_report(
    tmp_path: Path, wice: pd.DataFrame, scorer: AlignerScorer, capsys: pytest.CaptureFixture[str]
) -> None:
    save_aligner(scorer.network, scorer.tokenizer, tmp_path / "aligner", {"seed": 5})
    wice.to_parquet(tmp_path / "wice.parquet")
    sentences, _ = sentence_units(wice, "fixture")
    sentences.to_parquet(tmp_path / "sentences.parquet")
    model = ["--model", str(tmp_path / "aligner"), "--entailment-label", "entailment", "--token-budget", "4096",
             "--max-batch-pairs", "16", "--precision", "fp32", "--device", "cpu", "--threads", "1"]  # fmt: skip
    scale = ["score", "scale", "--benchmark", "wice_claims", "--data", str(tmp_path / "wice.parquet"),
             "--sentences", str(tmp_path / "sentences.parquet"), "--max-examples", "all", "--shard", "0", "--shards", "1",
             "--out", str(tmp_path / "scale.parquet"), "--report", str(tmp_path / "scale.json"),
             "--settings", json.dumps(PARAMS)]  # fmt: skip
    assert main([*scale, "--sample-examples", "all", *model]) == 0
    direct, _ = score_scale(wice, sentences, load_pair_scorer(str(tmp_path / "aligner"), device="cpu"), settings(), ENGINE)
    written = pd.read_parquet(tmp_path / "scale.parquet").set_index("example_id")["score"]  # jobs sort by example_id
    assert written.to_dict() == pytest.approx(direct.set_index("example_id")["score"].to_dict(), abs=1e-6)
    report = json.loads((tmp_path / "scale.json").read_text())
    assert report["settings"]["retrieval"]["ks"] == [1, 3]
    assert report["examples_not_sampled"] == 0 and "sample" not in report

    # a seeded sample of 2 (score.sample): the two claims whose sha256("2022:<example_id>") sorts first, scored as
    # by the whole job, the others counted
    assert main([*scale, "--sample-examples", "2", "--sample-seed", "2022", *model]) == 0
    first_two = sorted(wice["example_id"], key=lambda example_id: hashlib.sha256(f"2022:{example_id}".encode()).hexdigest())[:2]
    sampled = pd.read_parquet(tmp_path / "scale.parquet").set_index("example_id")["score"]
    assert sorted(sampled.index) == sorted(first_two) and len(wice) > 2
    assert sampled.to_dict() == pytest.approx(written[first_two].to_dict(), abs=1e-6)
    report = json.loads((tmp_path / "scale.json").read_text())
    assert report["examples_not_sampled"] == len(wice) - 2 and report["sample"] == {"examples": 2, "seed": 2022}
    assert main([*scale, "--sample-examples", "2", *model]) == 1  # a sample needs its seed
    assert "--sample-examples 2 needs --sample-seed" in capsys.readouterr().err

    retrieval = ["score", "scale-retrieval", "--data", str(tmp_path / "wice.parquet"), "--out", str(tmp_path / "r.csv"),
                 "--report", str(tmp_path / "r.json"), "--settings", json.dumps(PARAMS),
                 "--chunk-policy", "reference"]  # fmt: skip
    assert main(retrieval + model) == 0
    table, report = pd.read_csv(tmp_path / "r.csv"), json.loads((tmp_path / "r.json").read_text())
    assert report["claims_evaluated"] == 3 and report["claims_without_support"] == 1
    for item in report["summary"]:
        rows = table[(table["method"] == item["method"]) & (table["k"] == item["k"])]
        assert item["recall"] == pytest.approx(rows["recall"].mean()) and item["mean_calls"] == pytest.approx(
            rows["calls"].mean()
        )

    broken = wice.copy()
    broken.loc[broken["example_id"] == "wice-test03232", "supporting_sentences"] = "[[7, 13], [6, 7, 13]"
    broken.to_parquet(tmp_path / "wice.parquet")
    capsys.readouterr()
    assert main(retrieval + model) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith("factlab: error:") and "record wice-test03232" in lines[-1]
    assert "'supporting_sentences'" in lines[-1] and str(tmp_path / "wice.parquet") in lines[-1]
