"""Training corpora CLIMATE-FEVER, HaluEval QA and FactCG CG2C-doc, against the mirror README."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from damaged_copies import assert_one_line, check_nli_schema, damaged_copy, line_count, row
from known_counts import CLIMATE_FEVER, FACTCG_CG2C_DOC, HALUEVAL_QA

from factlab.data.adapters.climate_fever import adapt_climate_fever
from factlab.data.adapters.factcg import adapt_factcg, parse_claim
from factlab.data.adapters.halueval import adapt_halueval_qa, qa_statement
from factlab.data.registry import builtin_specs
from factlab.errors import DataError

CLIMATE_FILE = "dataset/climate-fever.jsonl"
FACTCG_FILE = "data/training_stage2/CG2C_doc.json"
HALUEVAL_FILES = ("generation/qa/qa_one-turn_data.json", "generation/qa/qa_multi-turn_data.json")


@pytest.fixture(scope="module")
def climate(raw):
    return adapt_climate_fever(raw)


@pytest.fixture(scope="module")
def halueval(raw):
    return adapt_halueval_qa(raw)


@pytest.fixture(scope="module")
def factcg(raw):
    return adapt_factcg(raw)


def check_schema(frame: pd.DataFrame, name: str, vocabulary: set[str]) -> pd.DataFrame:
    frame = check_nli_schema(frame, name, vocabulary)
    assert set(frame["split"]) == {"train"}
    return frame


def test_specs_are_training_benchmarks():
    specs = builtin_specs()
    for name, dataset in (("climate_fever", "climate_fever"), ("halueval_qa", "halueval"), ("factcg_cg2c_doc", "factcg")):
        assert specs[name].role == "training" and specs[name].kind == "benchmark" and specs[name].datasets == (dataset,)


# CLIMATE-FEVER


def test_climate_fever_counts_match_mirror_readme(raw, climate):
    frame = check_schema(climate.frame, "climate_fever", {"entailment", "neutral", "contradiction"})
    assert len(frame) == CLIMATE_FEVER["pairs"] == climate.counts["read"]
    assert frame["claim_id"].nunique() == CLIMATE_FEVER["claims"] == climate.counts["claims"]
    assert line_count(raw.path("climate_fever", CLIMATE_FILE)) == CLIMATE_FEVER["claims"]
    assert (frame.groupby("claim_id").size() == 5).all()
    # Label balance against the raw text: each evidence label as written in the file.
    data = raw.path("climate_fever", CLIMATE_FILE).read_bytes()
    upstream = {name: data.count(f'"evidence_label":"{name}"'.encode()) for name in ("SUPPORTS", "REFUTES", "NOT_ENOUGH_INFO")}
    assert sum(upstream.values()) == CLIMATE_FEVER["pairs"]
    assert frame["nli_label"].value_counts().to_dict() == {
        "entailment": upstream["SUPPORTS"],
        "contradiction": upstream["REFUTES"],
        "neutral": upstream["NOT_ENOUGH_INFO"],
    }
    assert int(frame["label"].sum()) == upstream["SUPPORTS"] == 1_943


def test_climate_fever_label_conventions_on_real_records(climate):
    frame = climate.frame
    supports = row(frame, "climate_fever-0-e1")  # claim 0, evidence "Global warming:14": SUPPORTS
    assert supports["output"] == "Global warming is driving polar bears toward extinction"
    assert supports["source"] == (
        "Environmental impacts include the extinction or relocation of many species as their ecosystems change, "
        "most immediately the environments of coral reefs, mountains, and the Arctic."
    )
    assert (supports["nli_label"], supports["label"], supports["evidence_id"]) == ("entailment", 1, "Global warming:14")
    nei = row(frame, "climate_fever-0-e0")
    assert nei["source"] == '"Recent Research Shows Human Activity Driving Earth Towards Global Extinction Event".'
    assert (nei["nli_label"], nei["label"]) == ("neutral", 0)
    refutes = row(frame, "climate_fever-6-e3")
    assert refutes["output"] == "The polar bear population has been growing."
    assert refutes["source"].startswith("In two areas where harvest levels have been increased based on increased sightings")
    assert (refutes["nli_label"], refutes["label"], refutes["claim_id"]) == ("contradiction", 0, "6")


def test_climate_fever_unknown_evidence_label_names_file_line_and_field(raw, tmp_path):
    def edit(record):
        record["evidences"][2]["evidence_label"] = "DISPUTED"  # a claim-level label, never an evidence one

    broken, path = damaged_copy(raw, tmp_path, "climate_fever", CLIMATE_FILE, 3, edit)
    with pytest.raises(DataError) as error:
        adapt_climate_fever(broken)
    assert_one_line(error, path, "line 3 evidence 2", "evidence_label")


# HaluEval QA


def test_halueval_counts_and_deduplication_match_mirror_readme(raw, halueval):
    frame = check_schema(halueval.frame, "halueval_qa", {"entailment", "not_entailment"})
    questions, differ = HALUEVAL_QA["questions"], HALUEVAL_QA["different_hallucinated"]
    for name in HALUEVAL_FILES:
        assert line_count(raw.path("halueval", name)) == questions
    # Both files: the same questions, knowledge and right answers; hallucinated answers differ in 487.
    assert halueval.counts["read"] == 2 * 2 * questions
    assert frame["answer_kind"].value_counts().to_dict() == {"right": questions, "hallucinated": questions + differ}
    assert halueval.counts["dropped_duplicate"] == questions + (questions - differ) == 513
    assert len(frame) == 1_487 and int(frame["label"].sum()) == questions
    assert frame["doc_id"].nunique() == questions
    assert (frame.groupby("doc_id")["label"].sum() == 1).all()  # one right answer per question
    assert not frame.duplicated(["source", "output"]).any()
    assert (frame["output"] == [qa_statement(q, a) for q, a in zip(frame["question"], frame["answer"], strict=True)]).all()


def test_halueval_label_conventions_on_real_records(halueval):
    frame = halueval.frame
    right = row(frame, "halueval_qa-one-turn-001-right")
    knowledge = (
        "Arthur's Magazine (1844–1846) was an American literary periodical published in Philadelphia in the 19th century."
        "First for Women is a woman's magazine published by Bauer Media Group in the USA."
    )
    assert right["source"] == knowledge
    assert right["output"] == "Which magazine was started first Arthur's Magazine or First for Women? Arthur's Magazine"
    assert (right["label"], right["nli_label"], right["answer"]) == (1, "entailment", "Arthur's Magazine")
    wrong = row(frame, "halueval_qa-one-turn-001-hallucinated")
    assert wrong["source"] == knowledge
    assert (
        wrong["output"]
        == "Which magazine was started first Arthur's Magazine or First for Women? First for Women was started first."
    )
    assert (wrong["label"], wrong["nli_label"], wrong["answer_kind"]) == (0, "not_entailment", "hallucinated")
    # Line 2 of the multi-turn file has its own hallucinated answer; its right answer is a duplicate.
    multi = row(frame, "halueval_qa-multi-turn-002-hallucinated")
    assert multi["output"].endswith("what city? The Oberoi family is not involved in any hotel company.")
    assert multi["label"] == 0
    assert not frame["example_id"].eq("halueval_qa-multi-turn-002-right").any()


def test_halueval_same_pair_with_two_labels_is_an_error(raw, tmp_path):
    def edit(record):
        record["hallucinated_answer"] = record["right_answer"]

    broken, path = damaged_copy(raw, tmp_path, "halueval", HALUEVAL_FILES[1], 5, edit, also=(HALUEVAL_FILES[0],))
    with pytest.raises(DataError, match="hallucinated here but right") as error:
        adapt_halueval_qa(broken)
    assert_one_line(error, path, "line 5", "hallucinated_answer")


def test_halueval_empty_answer_names_file_line_and_field(raw, tmp_path):
    def edit(record):
        record["right_answer"] = "  "

    broken, path = damaged_copy(raw, tmp_path, "halueval", HALUEVAL_FILES[0], 7, edit)
    with pytest.raises(DataError) as error:
        adapt_halueval_qa(broken)
    assert_one_line(error, path, "line 7", "right_answer")


# FactCG CG2C-doc


def test_factcg_counts_match_mirror_readme(raw, factcg):
    frame = check_schema(factcg.frame, "factcg_cg2c_doc", {"entailment", "not_entailment"})
    path = raw.path("factcg", FACTCG_FILE)
    assert line_count(path) == FACTCG_CG2C_DOC["pairs"]
    assert factcg.counts["read"] == FACTCG_CG2C_DOC["pairs"]
    assert factcg.counts["read_label_1"] == factcg.counts["read_label_0"] == FACTCG_CG2C_DOC["supported"]
    assert frame["doc_id"].nunique() == factcg.counts["documents"] == FACTCG_CG2C_DOC["documents"]
    # 8 lines of the file repeat an earlier line verbatim (6 supported, 2 not): kept once.
    lines = path.read_text(encoding="utf-8").splitlines()
    assert factcg.counts["dropped_duplicate"] == len(lines) - len(set(lines)) == 8
    assert len(frame) == 2_060
    assert frame["label"].value_counts().to_dict() == {1: 1_028, 0: 1_032}
    assert not frame.duplicated(["source", "output"]).any()


def test_factcg_label_conventions_on_real_records(factcg):
    frame = factcg.frame
    claim = (
        "Ken Clarke, the former Conservative Treasury chief, criticized plans for cutting inheritance tax amidst rising "
        "inflation and the state of affairs, highlighting the vulnerability of poorer people."
    )
    supported, unsupported = row(frame, "factcg_cg2c_doc-00001"), row(frame, "factcg_cg2c_doc-00002")
    # The same claim against the real passage (label 1) and against one with the speaker anonymised (label 0).
    assert supported["output"] == unsupported["output"] == claim
    assert 'Ken Clarke, a former Conservative Treasury chief, said cutting inheritance tax "might appeal' in supported["source"]
    assert 'A political figure said cutting inheritance tax "might appeal to some' in unsupported["source"]
    assert (supported["label"], supported["nli_label"]) == (1, "entailment")
    assert (unsupported["label"], unsupported["nli_label"]) == (0, "not_entailment")


@pytest.mark.parametrize("value", [["A claim."], '["A claim."]', "['A claim.']", ' [ "A claim." ] '])
def test_factcg_claim_list_or_its_string_form(value):
    assert parse_claim(value, file=Path("f.json"), record="line 1") == "A claim."


@pytest.mark.parametrize("value", ['["a", "b"]', "[]", '[""]', "['  ']", "[1]", "claim", "__import__('os').getcwd()", 7, None])
def test_factcg_claim_that_is_not_one_string_is_an_error(value):
    with pytest.raises(DataError) as error:
        parse_claim(value, file=Path("f.json"), record="line 4")
    assert error.value.field == "text_b" and error.value.record == "line 4"


@pytest.mark.parametrize(
    ("line_no", "field", "value"),
    [(10, "text_b", '["first claim", "second claim"]'), (3, "orig_label", "yes")],  # two claims in one record; a bad label
)
def test_factcg_damaged_record_names_file_line_and_field(raw, tmp_path, line_no, field, value):
    def edit(record):
        record[field] = value

    broken, path = damaged_copy(raw, tmp_path, "factcg", FACTCG_FILE, line_no, edit)
    with pytest.raises(DataError) as error:
        adapt_factcg(broken)
    assert_one_line(error, path, f"line {line_no}", field)
