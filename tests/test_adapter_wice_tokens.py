"""WiCE dev/test unsupported tokens (wice_tokens), against the mirror README and the raw records."""

from __future__ import annotations

import json

import pytest
from damaged_copies import assert_one_line, damaged_copy, line_count, row
from known_counts import WICE_TOKENS

from factlab.data.adapters.wice import adapt_wice_claims
from factlab.data.adapters.wice_tokens import adapt_wice_tokens
from factlab.data.ids import text_doc_id
from factlab.data.registry import builtin_specs
from factlab.data.schema import validate_benchmark
from factlab.errors import DataError

TOKENS = "data/non_supported_tokens/{split}.jsonl"
CLAIMS = "data/entailment_retrieval/claim/{split}.jsonl"


@pytest.fixture(scope="module")
def built(raw):
    return adapt_wice_tokens(raw)


@pytest.fixture(scope="module")
def frame(built):
    return validate_benchmark(built.frame, "wice_tokens")


@pytest.fixture(scope="module")
def records(raw):
    """The raw subclaim records by id, read without the adapter."""
    out = {}
    for split in WICE_TOKENS:
        with open(raw.path("wice", TOKENS.format(split=split)), encoding="utf-8") as handle:
            out |= {record["meta"]["id"]: record for record in map(json.loads, handle)}
    return out


def test_spec_is_an_evaluation_benchmark():
    spec = builtin_specs()["wice_tokens"]
    assert (spec.kind, spec.role, spec.datasets) == ("benchmark", "evaluation", ("wice",))


def test_counts_match_mirror_readme(raw, frame, built):
    for split, expected in WICE_TOKENS.items():
        part = frame[frame["split"] == split]
        assert len(part) == expected["rows"] == line_count(raw.path("wice", TOKENS.format(split=split)))
        assert int(part["n_tokens"].sum()) == expected["tokens"] == built.counts[f"{split}_tokens"]
        assert int(part["n_unsupported_tokens"].sum()) == expected["unsupported_tokens"]
        assert (
            part["token_labels"].map(lambda labels: len(json.loads(labels)) - sum(json.loads(labels))).sum()
            == (expected["unsupported_tokens"])
        )
    # Upstream annotated partially supported subclaims only: each has an unsupported token, so every label is 0.
    assert set(frame["label"]) == {0} and set(frame["wice_label"]) == {"partially_supported"}
    assert (frame["n_unsupported_tokens"] > 0).all() and (frame["n_unsupported_tokens"] < frame["n_tokens"]).all()


def test_labels_invert_the_raw_flags_and_tokens_are_the_output_text(frame, records):
    assert set(frame["wice_id"]) == set(records)
    for _, built in frame.iterrows():
        record = records[built["wice_id"]]
        tokens, labels, offsets = (json.loads(built[c]) for c in ("tokens", "token_labels", "token_offsets"))
        assert tokens == record["claim_tokens"]
        assert labels == [0 if flag else 1 for flag in record["non_supported_spans"]]
        assert [built["output"][start:end] for start, end in offsets] == tokens
        assert built["output"] == record["claim"].strip()
        assert built["source"] == " ".join(record["evidence"])
        assert built["doc_id"] == text_doc_id("wice", built["source"])


def test_every_subclaim_joins_its_parent_claim(raw, frame, built):
    assert built.counts["claims_joined"] == 124 + 105 and built.counts["claims_not_joined"] == 0
    assert built.counts["evidence_same_as_claim"] == 229
    claims = adapt_wice_claims(raw).frame.set_index("wice_id")
    parents = claims.loc[frame["claim_id"]]
    assert (parents["doc_id"].to_numpy() == frame["doc_id"].to_numpy()).all()  # the same evidence page, the same doc_id
    assert (parents["output"].to_numpy() == frame["claim"].to_numpy()).all()
    assert set(frame["claim_label"]) == {"partially_supported"}
    assert {split: part["claim_id"].nunique() for split, part in frame.groupby("split")} == {"dev": 98, "test": 92}


def test_a_real_record(frame):
    irene = row(frame, "wice-test00561-0")  # line 1 of test.jsonl
    assert irene["output"].startswith("Irene Hervey (born Beulah Irene Herwick; July 11, 1909")
    tokens, labels = json.loads(irene["tokens"]), json.loads(irene["token_labels"])
    assert [token for token, label in zip(tokens, labels, strict=True) if label == 0] == ["born", "Beulah", "Irene", "Herwick"]
    assert (irene["split"], irene["system"], irene["claim_id"]) == ("test", "claim_split", "test00561")


def test_flags_of_another_length_name_file_line_and_field(raw, tmp_path):
    def edit(record):
        record["non_supported_spans"] = record["non_supported_spans"][:-1]

    intact = (TOKENS.format(split="dev"), CLAIMS.format(split="dev"), CLAIMS.format(split="test"))
    broken, path = damaged_copy(raw, tmp_path, "wice", TOKENS.format(split="test"), 3, edit, also=intact)
    with pytest.raises(DataError) as error:
        adapt_wice_tokens(broken)
    assert_one_line(error, path, "line 3", "non_supported_spans")


def test_token_missing_from_its_text_names_file_line_and_field(raw, tmp_path):
    def edit(record):
        record["claim_tokens"][1] = "Nonexistent"

    broken, path = damaged_copy(raw, tmp_path, "wice", TOKENS.format(split="dev"), 5, edit, also=(CLAIMS.format(split="dev"),))
    with pytest.raises(DataError) as error:
        adapt_wice_tokens(broken)
    assert_one_line(error, path, "line 5", "claim_tokens")
