"""Words per second of the whole preprocess stage (sentences, triples) on 30 real examples,
with the parameters of params.yaml.

Runs once as a plain test under the project's default `--benchmark-disable`; time it with
`pytest tests/test_preprocess_benchmark.py --benchmark-enable` (words/s in the `extra_info` column).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from factlab.data.registry import get_spec
from factlab.preprocess.benchmark import preprocess
from factlab.runtime import PARSE_ONLY, load_spacy

N_EXAMPLES = 30
PARAMS = Path(__file__).resolve().parents[1] / "params.yaml"


@pytest.fixture(scope="module")
def qags_cnndm(raw) -> pd.DataFrame:
    """QAGS CNN/DM: summary sentences, several per article, so sources are shared as in most benchmarks."""
    return get_spec("qags_cnndm").build(raw).frame


def test_preprocess_words_per_second(benchmark, qags_cnndm):
    params = yaml.safe_load(PARAMS.read_text())["preprocess"]
    load_spacy(PARSE_ONLY, keep_hyphenated=True)  # model loading is not what is measured
    splitter, batch_size = params["sentence_splitter"], params["spacy_batch_size"]
    units = benchmark(preprocess, qags_cnndm, "qags_cnndm", splitter, batch_size, N_EXAMPLES)
    report = units.report
    assert report["examples"] == N_EXAMPLES and report["documents"] < N_EXAMPLES
    assert report["words"] == report["words_source"] + report["words_output"] > 3000
    assert report["empty_sources"] == report["empty_outputs"] == 0 and report["words_per_s"] > 0
    benchmark.extra_info["words"] = report["words"]
    if benchmark.stats is not None:  # None when benchmarking is disabled
        benchmark.extra_info["words_per_s"] = round(report["words"] / benchmark.stats.stats.mean)
