"""Words per second of sentence splitting and triple extraction on 50 real summaries.

Runs once as a plain test under the project's default `--benchmark-disable`; time it with
`pytest tests/test_text_benchmark.py --benchmark-enable` (words/s in the `extra_info` column).
"""

from __future__ import annotations

import pandas as pd
import pytest

from factlab.preprocess.triples import extract_triples_many
from factlab.runtime import PARSE_ONLY, SENTENCES_ONLY, load_spacy
from factlab.text.sentences import METHODS, split_sentences_many


@pytest.fixture(scope="module")
def summaries(raw) -> list[str]:
    """The first 50 SummEval system summaries (TRUE copy): 3-4 tokenised sentences each."""
    frame = pd.read_csv(raw.path("true_benchmark_scale_copy", "data/true/summeval.csv"))
    return frame["generated_text"].head(50).tolist()


def record_words_per_second(benchmark, n_words: int) -> None:
    benchmark.extra_info["words"] = n_words
    if benchmark.stats is not None:  # None when benchmarking is disabled
        benchmark.extra_info["words_per_s"] = round(n_words / benchmark.stats.stats.mean)


@pytest.mark.parametrize("method", METHODS)
def test_sentence_splitting_speed(benchmark, summaries, method):
    load_spacy(SENTENCES_ONLY)  # model loading is not what is measured
    split = benchmark(split_sentences_many, summaries, method)
    assert len(split) == 50 and sum(map(len, split)) >= 150
    record_words_per_second(benchmark, sum(len(s.split()) for s in summaries))


def test_triple_extraction_speed(benchmark, summaries):
    load_spacy(PARSE_ONLY, keep_hyphenated=True)
    triples = benchmark(extract_triples_many, summaries)
    assert len(triples) == 50 and sum(map(len, triples)) >= 100
    record_words_per_second(benchmark, sum(len(s.split()) for s in summaries))
