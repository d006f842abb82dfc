import json

import pytest

from factlab.data.adapters.qasem_consistency import adapt_qas, adapt_responses
from factlab.data.schema import validate_benchmark


@pytest.fixture(scope="module")
def responses(raw):
    return validate_benchmark(adapt_responses(raw).frame, "qasem_consistency")


@pytest.fixture(scope="module")
def qas(raw):
    return validate_benchmark(adapt_qas(raw).frame, "qasem_consistency_qas")


@pytest.fixture(scope="module")
def records(raw):
    """The raw JSONL records of dev then test, read independently of the adapter."""
    out = []
    for split in ("dev", "test"):
        with open(raw.path("qasem_consistency", f"data/{split}.jsonl"), encoding="utf-8") as handle:
            out += [json.loads(line) for line in handle if line.strip()]
    return out


def test_response_counts_match_mirror_readme(responses):
    assert len(responses) == 299
    assert responses["split"].value_counts().to_dict() == {"test": 151, "dev": 148}
    assert responses["task"].value_counts().to_dict() == {"verifiability": 189, "cliff": 74, "factscore": 36}
    assert responses["example_id"].is_unique


def test_qa_counts_match_mirror_readme(qas):
    assert len(qas) == 3098
    assert qas["task"].value_counts().to_dict() == {"verifiability": 1296, "factscore": 1109, "cliff": 693}
    assert qas["example_id"].is_unique
    assert qas["votes_raw"].map(len).eq(3).all()


def test_qa_label_inverts_the_raw_votes(qas):
    # Upstream QA votes: 0 = supported, 1 = hallucinated. Canonical label 1 = supported by majority,
    # i.e. at most one of the 3 raw votes says "hallucinated".
    at_most_one_hallucinated = qas["votes_raw"].map(lambda votes: int(sum(votes) <= 1))
    assert (qas["label"] == at_most_one_hallucinated).all()
    assert (qas["votes"].map(list) == qas["votes_raw"].map(lambda votes: [1 - v for v in votes])).all()
    assert qas["human_score"].between(0, 1).all()


def test_qa_hypothesis_is_question_then_answer(qas):
    assert (qas["output"] == qas["question"] + " " + qas["answer"]).all()
    assert qas.apply(lambda row: row["predicate"] in row["sentence"].split(" "), axis=1).all()


def test_response_label_is_all_qas_supported(responses, qas):
    per_response = qas.groupby("doc_id")["label"].agg(["min", "mean", "size"])
    joined = responses.set_index("example_id").join(per_response, how="left")
    assert joined["size"].notna().all()
    assert (joined["label"] == joined["min"]).all()
    assert (joined["human_score"] - joined["mean"]).abs().max() < 1e-12
    assert (joined["n_qas"] == joined["size"]).all()


def test_texts_are_tokens_joined_with_spaces(responses, records):
    def response_tokens(record):
        summary = record["summary"]
        return [t for s in summary for t in s] if isinstance(summary[0], list) else summary

    assert responses["source"].tolist() == [" ".join(r["source"]) for r in records]
    assert responses["output"].tolist() == [" ".join(response_tokens(r)) for r in records]
    assert responses["source_id"].tolist() == [str(r["source_id"]) for r in records]


def test_span_votes_keep_the_covered_convention(responses, records):
    # Span votes upstream: 1 = covered, 0 = hallucinated: already canonical, so unchanged.
    assert responses["span_votes"].map(lambda spans: [list(v) for v in spans]).tolist() == [
        [span["annotations"] for span in r["spans"]] for r in records
    ]
    majority = responses["span_votes"].map(lambda spans: [int(sum(v) >= 2) for v in spans])
    assert (responses["span_label"].map(list) == majority).all()
    # A span's text is the response tokens it covers.
    first = responses.iloc[0]
    tokens = first["output"].split(" ")
    assert first["span_text"][0] == " ".join(tokens[first["span_start"][0] : first["span_end"][0]])


def test_sent_id_out_of_range_is_counted_not_dropped(raw, records):
    def n_sentences(record):
        return len(record["summary"]) if isinstance(record["summary"][0], list) else 1

    expected = sum(qa["sent_id"] >= n_sentences(r) for r in records for qa in r["qas"])
    built = adapt_qas(raw)
    assert built.counts["sent_id_out_of_range"] == expected
    assert built.counts["read"] == sum(len(r["qas"]) for r in records)


def test_systems_and_doc_ids(responses):
    verifiability = responses[responses["task"] == "verifiability"]
    assert set(verifiability["system"]) <= {"perplexity", "neeva", "bing_chat"}
    cliff = responses[responses["task"] == "cliff"]
    assert set(cliff["system"]) == {"bart", "pegasus"}
    # Both CLIFF systems summarise each document: outputs sharing a source share a doc_id.
    assert cliff.groupby("doc_id").size().eq(2).all()
    assert responses.groupby("doc_id")["source"].nunique().eq(1).all()
    assert responses["doc_id"].nunique() == responses["source"].nunique()
