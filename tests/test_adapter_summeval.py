import json

import pytest

from factlab.data.adapters.summeval import adapt_summeval
from factlab.data.schema import validate_benchmark


@pytest.fixture(scope="module")
def summeval(raw):
    return validate_benchmark(adapt_summeval(raw).frame, "summeval")


def test_summeval_counts_match_mirror_readme(summeval):
    assert len(summeval) == 1600
    assert summeval["doc_id"].nunique() == 100 and summeval["system"].nunique() == 16
    assert summeval.groupby("doc_id")["system"].nunique().eq(16).all()
    assert (summeval["split"] == "test").all()


def test_summeval_label_is_full_consistency(summeval):
    for column in ("human_score", "coherence", "fluency", "relevance"):
        assert summeval[column].between(1, 5).all()
    assert (summeval["label"] == summeval["human_score"].eq(5.0).astype("Int8")).all()
    # Means of 3 integer ratings: multiples of 1/3.
    assert ((summeval["human_score"] * 3).round(6) % 1 == 0).all()
    assert 0.6 < summeval["label"].mean() < 0.95


def test_summeval_matches_the_other_upstream_copy(summeval, raw):
    # summeval.jsonl holds the same documents in the same order, without ids and with float scores.
    path = raw.path("summeval", "train/data/Explainaboard/summeval.jsonl")
    with open(path, encoding="utf-8") as handle:
        documents = [json.loads(line) for line in handle if line.strip()]
    expected = [
        (doc["src"], doc["ref_summ"], system, item["sys_summ"], item["scores"])
        for doc in documents
        for system, item in doc["sys_summs"].items()
    ]
    assert len(expected) == len(summeval)
    for (source, reference, system, output, scores), row in zip(expected, summeval.itertuples(), strict=True):
        assert (row.source, row.reference, row.system, row.output) == (source, reference, system, output)
        assert row.human_score == pytest.approx(scores["consistency"])
        assert (row.coherence, row.fluency, row.relevance) == pytest.approx(
            (scores["coherence"], scores["fluency"], scores["relevance"])
        )
    assert summeval["references"].map(len).eq(11).all()
