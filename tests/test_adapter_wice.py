"""WiCE: claims (evaluation) and train subclaims with unsupported tokens (training), against the mirror README."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from damaged_copies import assert_one_line, damaged_copy, row
from known_counts import WICE_CLAIM_LABELS, WICE_SUBCLAIMS_TRAIN

from factlab.data.adapters.nli import premise_id
from factlab.data.adapters.wice import adapt_wice_claims, adapt_wice_subclaims
from factlab.data.ids import text_doc_id
from factlab.data.readers import iter_jsonl
from factlab.data.registry import builtin_specs
from factlab.data.schema import validate_benchmark
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

CLAIMS = "data/entailment_retrieval/claim/{split}.jsonl"
SUBCLAIMS = "data/non_supported_tokens/train.jsonl"


@pytest.fixture(scope="module")
def claims(raw):
    return adapt_wice_claims(raw)


@pytest.fixture(scope="module")
def subclaims(raw):
    return adapt_wice_subclaims(raw)


def test_specs_roles():
    specs = builtin_specs()
    assert specs["wice_claims"].role == "evaluation" and specs["wice_claims"].group_columns == ("wice_label",)
    assert specs["wice_subclaims"].role == "training"


# Claims (evaluation)


def test_claim_counts_and_labels_match_mirror_readme(raw, claims):
    frame = validate_benchmark(claims.frame, "wice_claims")
    per_split = {split: group["wice_label"].value_counts().to_dict() for split, group in frame.groupby("split")}
    assert per_split == WICE_CLAIM_LABELS
    for split, labels in WICE_CLAIM_LABELS.items():
        assert raw.path("wice", CLAIMS.format(split=split)).read_bytes().count(b"\n") == sum(labels.values())
    assert (frame["label"] == frame["wice_label"].eq("supported").astype(int)).all()
    assert int(frame["label"].sum()) == 115 + 111
    assert (frame["doc_id"] == [text_doc_id("wice", s) for s in frame["source"]]).all()
    assert set(frame["system"]) == {"wikipedia"}
    assert (frame["example_id"] == "wice-" + frame["wice_id"]).all()


def test_claim_label_conventions_on_real_records(claims):
    frame = claims.frame
    supported = row(frame, "wice-dev00866")
    assert supported["output"] == (
        'The band\'s third album, "Emotive", was released on November 2, 2004\xa0– the actual U.S Presidential Election Day.'
    )
    assert (supported["split"], supported["wice_label"], supported["label"]) == ("dev", "supported", 1)
    assert json.loads(supported["supporting_sentences"]) == [[2, 29], [8, 29], [2, 8, 29]]
    partial = row(frame, "wice-dev02986")  # line 1 of dev.jsonl
    assert partial["output"] == (
        "Arnold is currently the publisher and editorial director of Media Play News, one of five Hollywood trades "
        "and the only one dedicated to the home entertainment sector."
    )
    assert (partial["wice_label"], partial["label"], partial["claim_title"]) == ("partially_supported", 0, "Roger Hedgecock")
    assert json.loads(partial["supporting_sentences"]) == [[5, 15], [15, 17]]
    assert partial["source"].startswith("(meta data) TITLE: About Us – Media Play News Skip to content Media Play News")
    unsupported = row(frame, "wice-dev02563")
    assert unsupported["output"] == (
        "The Tozzer library itself holds over 260,000 volumes, including the first book acquired by the Peabody Museum Library."
    )
    assert (unsupported["wice_label"], unsupported["label"]) == ("not_supported", 0)
    assert json.loads(unsupported["supporting_sentences"]) == [[]]


def test_evidence_offsets_give_back_every_upstream_sentence(raw, claims):
    frame = claims.frame.set_index("wice_id")
    checked = empty = 0
    for split in WICE_CLAIM_LABELS:
        for _, record in iter_jsonl(raw.path("wice", CLAIMS.format(split=split))):
            built = frame.loc[record["meta"]["id"]]
            offsets = json.loads(built["evidence_offsets"])
            assert [built["source"][start:end] for start, end in offsets] == record["evidence"]
            assert json.loads(built["supporting_sentences"]) == record["supporting_sentences"]
            checked += 1
            empty += sum(not sentence for sentence in record["evidence"])
    assert checked == len(frame) == 707
    assert empty > 0  # empty evidence sentences exist and keep their (zero-length) place


def test_claim_support_index_out_of_range_names_file_line_and_field(raw, tmp_path):
    def edit(record):
        record["supporting_sentences"] = [[0, len(record["evidence"])]]

    broken, path = damaged_copy(raw, tmp_path, "wice", CLAIMS.format(split="dev"), 4, edit)
    with pytest.raises(DataError) as error:
        adapt_wice_claims(broken)
    assert_one_line(error, path, "line 4", "supporting_sentences")


def test_claim_with_empty_evidence_is_an_error(raw, tmp_path):
    def edit(record):
        record["evidence"] = []

    broken, path = damaged_copy(raw, tmp_path, "wice", CLAIMS.format(split="dev"), 2, edit)
    with pytest.raises(DataError) as error:
        adapt_wice_claims(broken)
    assert_one_line(error, path, "line 2", "evidence")


# Subclaims (training)


def test_subclaim_counts_match_mirror_readme(subclaims):
    frame = validate_benchmark(subclaims.frame, "wice_subclaims")
    assert len(frame) == WICE_SUBCLAIMS_TRAIN["rows"]
    assert int(frame["n_tokens"].sum()) == WICE_SUBCLAIMS_TRAIN["tokens"] == subclaims.counts["tokens"]
    assert int(frame["n_unsupported_tokens"].sum()) == WICE_SUBCLAIMS_TRAIN["unsupported_tokens"]
    assert (frame["label"] == frame["n_unsupported_tokens"].eq(0).astype(int)).all()
    assert (frame["label"] == frame["nli_label"].eq("entailment").astype(int)).all()
    assert (frame["doc_id"] == frame["source"].map(premise_id)).all()
    # Upstream annotates tokens of partially supported subclaims only: every one has an unsupported token.
    assert set(frame["wice_label"]) == {"partially_supported"} and set(frame["label"]) == {0}
    assert set(frame["split"]) == {"train"} and set(frame["system"]) == {"wice"}


def test_subclaim_tokens_flags_and_offsets_on_a_real_record(subclaims):
    first = row(subclaims.frame, "wice-train31212-2")  # line 1 of train.jsonl
    assert first["output"] == "The audience consists of Australian ex-pats."
    assert (first["label"], first["nli_label"], first["n_tokens"], first["n_unsupported_tokens"]) == (0, "not_entailment", 9, 1)
    assert first["claim_id"] == "train31212"
    tokens, flags = json.loads(first["claim_tokens"]), json.loads(first["non_supported_spans"])
    offsets = json.loads(first["token_offsets"])
    assert [first["output"][start:end] for start, end in offsets] == tokens
    assert [token for token, flag in zip(tokens, flags, strict=True) if flag] == ["Australian"]
    assert first["source"].startswith("(meta data) TITLE: Balancing act for Axle Whitehead – TV Tonight")
    # Trailing spaces of the upstream text are stripped; a no-break space token keeps its place.
    frame = subclaims.frame
    assert not (frame["output"] != frame["output"].str.strip()).any()
    nbsp = frame.loc[frame["claim_tokens"].str.contains('"\\u00a0"', regex=False)].iloc[0]
    assert nbsp["output"] == "These 50-foot (15\xa0m) lengths of leather were sewn together like a boot leg."
    assert all(
        nbsp["output"][s:e] == t
        for (s, e), t in zip(json.loads(nbsp["token_offsets"]), json.loads(nbsp["claim_tokens"]), strict=True)
    )


def test_subclaims_read_the_train_file_only(raw, subclaims):
    # Without the dev/test token files in the manifest the build is the same: they are never opened.
    manifest = [
        e for e in raw.manifest if not e.url.endswith(("non_supported_tokens/dev.jsonl", "non_supported_tokens/test.jsonl"))
    ]
    assert len(manifest) == len(raw.manifest) - 2
    only_train = adapt_wice_subclaims(RawFiles(raw.raw_root, manifest, per_dataset=False))
    pd.testing.assert_frame_equal(only_train.frame, subclaims.frame)


def test_subclaims_are_disjoint_from_claim_evaluation_material(claims, subclaims):
    assert not set(subclaims.frame["source"]) & set(claims.frame["source"])
    assert not set(subclaims.frame["claim_id"]) & set(claims.frame["wice_id"])


def test_subclaim_flags_of_another_length_name_file_line_and_field(raw, tmp_path):
    def edit(record):
        record["non_supported_spans"] = record["non_supported_spans"][:-1]

    broken, path = damaged_copy(raw, tmp_path, "wice", SUBCLAIMS, 2, edit)
    with pytest.raises(DataError) as error:
        adapt_wice_subclaims(broken)
    assert_one_line(error, path, "line 2", "non_supported_spans")


def test_subclaim_token_missing_from_its_text_is_an_error(raw, tmp_path):
    def edit(record):
        record["claim_tokens"][0] = "Nonexistent"

    broken, path = damaged_copy(raw, tmp_path, "wice", SUBCLAIMS, 3, edit)
    with pytest.raises(DataError) as error:
        adapt_wice_subclaims(broken)
    assert_one_line(error, path, "line 3", "claim_tokens")
