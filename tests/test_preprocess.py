"""The preprocess stage on real benchmark rows: layout, edge cases, counted cuts, errors, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from factlab.cli import main
from factlab.data.registry import get_spec
from factlab.errors import DataError
from factlab.preprocess.benchmark import (
    SENTENCE_COLUMNS,
    TRIPLE_COLUMNS,
    _map_batched,
    preprocess,
    select_examples,
    sentence_units,
)
from factlab.sampling import sample_examples
from factlab.text.sentences import split_sentences

# A sentence without a verb, from the real article of qags_xsum-d0030.
VERBLESS = "My condolences to rio, their children and the family."
ODD_WHITESPACE = ["\u00a0", "\t", "\n\n", "\u2009", "\u3000", "  "]
NON_ASCII_TAIL = " Zürich’s café “naïve” — 東京 résumé, ½ price…"


@pytest.fixture(scope="module")
def qags_xsum(raw) -> pd.DataFrame:
    return get_spec("qags_xsum").build(raw).frame.sort_values("example_id").reset_index(drop=True)


@pytest.fixture(scope="module")
def summeval(raw) -> pd.DataFrame:
    return get_spec("summeval").build(raw).frame


@pytest.fixture(scope="module")
def hard_cases(qags_xsum) -> pd.DataFrame:
    """Six real qags_xsum rows made into the hard cases, plus one untouched row."""
    frame = qags_xsum.head(7).copy()
    article_30 = qags_xsum.loc[qags_xsum["doc_id"] == "qags_xsum-d0030", "source"].iloc[0]
    assert VERBLESS in article_30
    frame.loc[0, "output"] = ""  # empty output
    frame.loc[1, "output"] = VERBLESS
    # A very long document: 30 real articles in a row (about 10,000 words).
    frame.loc[2, "source"] = "\n".join(qags_xsum["source"].head(30))
    words = frame.loc[3, "output"].split(" ")
    frame.loc[3, "output"] = "".join(w + ODD_WHITESPACE[i % len(ODD_WHITESPACE)] for i, w in enumerate(words)) + NON_ASCII_TAIL
    frame.loc[4, "source"] = " \n\t\u00a0"  # a source with nothing but whitespace
    frame.loc[5, "output"] = frame.loc[5, "output"] + "\u2028" + frame.loc[6, "output"]  # line separator
    return frame


@pytest.fixture(scope="module")
def hard_units(hard_cases):
    return preprocess(hard_cases, "qags_xsum")


def test_sources_split_once_per_doc_and_keyed_by_doc_id(summeval):
    examples = select_examples(summeval, "summeval", max_examples=40)
    sentences, report = sentence_units(examples, "summeval")
    documents = examples.drop_duplicates("doc_id")
    assert examples["example_id"].tolist() == sorted(summeval["example_id"])[:40]
    sources = sentences[sentences["side"] == "source"]
    outputs = sentences[sentences["side"] == "output"]
    assert sources["example_id"].isna().all() and outputs["example_id"].notna().all()
    assert set(sources["doc_id"]) == set(documents["doc_id"]) and len(documents) < len(examples)
    for doc_id, source in zip(documents["doc_id"], documents["source"], strict=True):
        rows = sources[sources["doc_id"] == doc_id]
        assert rows["text"].tolist() == [s.text for s in split_sentences(source)]
        assert rows["sentence_index"].tolist() == list(range(len(rows)))
    assert set(outputs["example_id"]) == set(examples["example_id"])
    assert report["sentences_source"] == len(sources) and report["sentences_output"] == len(outputs)
    assert report["words_source"] == sum(len(s.split()) for s in documents["source"])
    assert report["words_output"] == sum(len(s.split()) for s in examples["output"])
    assert list(sentences.columns) == list(SENTENCE_COLUMNS)


def test_offsets_index_the_original_strings(hard_cases, hard_units):
    by_example = hard_cases.set_index("example_id")
    by_doc = hard_cases.drop_duplicates("doc_id").set_index("doc_id")
    for row in hard_units.sentences.itertuples():
        text = by_doc.loc[row.doc_id, "source"] if row.side == "source" else by_example.loc[row.example_id, "output"]
        assert text[row.start : row.end] == row.text
    for row in hard_units.triples.itertuples():
        text = by_doc.loc[row.doc_id, "source"] if row.side == "source" else by_example.loc[row.example_id, "output"]
        for element, start, end in [
            (row.subject, row.subject_start, row.subject_end),
            (row.object, row.object_start, row.object_end),
        ]:
            # An element is its tokens joined, with one space where the text skips some ("Vitamin supplements").
            # spaCy's whitespace tokens can end an element (triples.py trims only punctuation).
            span, pieces = text[start:end].strip(), element.split()
            assert span.startswith(pieces[0]) and span.endswith(pieces[-1])


def test_empty_output_and_blank_source_are_counted_not_lost(hard_cases, hard_units):
    empty_example = hard_cases.loc[0, "example_id"]
    blank_doc = hard_cases.loc[4, "doc_id"]
    sentences, report = hard_units.sentences, hard_units.report
    assert not (sentences["example_id"] == empty_example).any()
    assert not ((sentences["doc_id"] == blank_doc) & (sentences["side"] == "source")).any()
    assert report["empty_outputs"] == 1 and report["empty_sources"] == 1
    assert report["examples"] == len(hard_cases) and report["documents"] == hard_cases["doc_id"].nunique()


def test_verbless_sentence_has_a_row_and_no_triples(hard_cases, hard_units):
    example_id = hard_cases.loc[1, "example_id"]
    rows = hard_units.sentences[hard_units.sentences["example_id"] == example_id]
    assert rows["text"].tolist() == [VERBLESS]
    assert not (hard_units.triples["example_id"] == example_id).any()


def test_odd_whitespace_and_non_ascii_lose_no_character(hard_cases, hard_units):
    for position in (3, 5):
        example_id, output = hard_cases.loc[position, ["example_id", "output"]]
        rows = hard_units.sentences[hard_units.sentences["example_id"] == example_id]
        assert "".join("".join(rows["text"]).split()) == "".join(output.split())
        assert rows["n_words"].sum() == len(output.split())
    assert (hard_units.sentences["example_id"] == hard_cases.loc[5, "example_id"]).sum() >= 2


def test_report_counts_add_up(hard_units):
    sentences, triples, report = hard_units.sentences, hard_units.triples, hard_units.report
    assert report["sentences"] == sentences["side"].value_counts().to_dict()
    assert report["triples"] == triples["side"].value_counts().reindex(["source", "output"], fill_value=0).to_dict()
    keys = ["side", "doc_id", "example_id", "sentence_index"]
    with_triples = sentences.merge(triples[keys].drop_duplicates(), on=keys, how="left", indicator=True)
    without = with_triples[with_triples["_merge"] == "left_only"]["side"].value_counts()
    assert report["sentences_without_triples"] == {side: int(without.get(side, 0)) for side in ("source", "output")}
    assert report["triples_negated"] == triples["negated"].sum()
    assert report["words"] == report["words_source"] + report["words_output"]
    steps = report["seconds"]
    assert steps["total"] == pytest.approx(steps["sentences"] + steps["triples"])
    assert report["words_per_s"] == pytest.approx(report["words"] / steps["total"], rel=1e-3)
    assert list(triples.columns) == list(TRIPLE_COLUMNS)


def test_non_string_output_names_benchmark_and_example(qags_xsum):
    frame = qags_xsum.head(5).astype({"output": object})
    example_id = frame.loc[3, "example_id"]
    frame.loc[3, "output"] = 3.5
    with pytest.raises(DataError, match=rf"benchmark 'qags_xsum', example '{example_id}': output must be a string") as caught:
        select_examples(frame, "qags_xsum")
    assert caught.value.record == example_id and caught.value.field == "output"


def test_doc_with_two_source_texts_is_an_error(qags_xsum):
    frame = qags_xsum.head(3).copy()
    frame.loc[1, "doc_id"] = frame.loc[0, "doc_id"]
    with pytest.raises(DataError, match="has 2 different source texts"):
        select_examples(frame, "qags_xsum")


def test_a_text_that_breaks_the_parser_is_named(qags_xsum):
    outputs = qags_xsum["output"].head(10).tolist()
    owners = {text: f"output of example_id {eid!r}" for eid, text in zip(qags_xsum["example_id"], outputs, strict=False)}

    def parser_failing_on_the_seventh(batch: list[str]) -> list[int]:
        if outputs[6] in batch:
            raise RuntimeError("parser crashed")
        return [len(text) for text in batch]

    with pytest.raises(
        DataError, match=rf"benchmark 'qags_xsum': cannot process the output of example_id '{qags_xsum.loc[6, 'example_id']}'"
    ):
        _map_batched(outputs, parser_failing_on_the_seventh, 4, owners, "qags_xsum", "test")


def test_spacy_splitter_gives_the_same_layout(qags_xsum):
    examples = select_examples(qags_xsum, "qags_xsum", 3)
    sentences, report = sentence_units(examples, "qags_xsum", splitter="spacy", batch_size=2)
    assert report["sentence_splitter"] == "spacy" and report["sentences_output"] >= 3
    by_doc = examples.set_index("doc_id")["source"]
    assert all(by_doc[r.doc_id][r.start : r.end] == r.text for r in sentences[sentences["side"] == "source"].itertuples())


def run_cli(*argv: str) -> int:
    return main(["preprocess", *[str(arg) for arg in argv]])


def test_cli_end_to_end(qags_xsum, tmp_path: Path, capsys):
    data = tmp_path / "qags_xsum.parquet"
    qags_xsum.head(8).to_parquet(data)
    common = ["--benchmark", "qags_xsum", "--data", data, "--max-examples", "5"]
    assert run_cli("sentences", *common, "--splitter", "pysbd", "--batch-size", "4", "--out", tmp_path / "sentences.parquet",
                   "--report", tmp_path / "sentences.json") == 0  # fmt: skip
    assert run_cli("triples", *common, "--sentences", tmp_path / "sentences.parquet", "--batch-size", "4",
                   "--sample-examples", "all", "--out", tmp_path / "triples.parquet",
                   "--report", tmp_path / "triples.json") == 0  # fmt: skip
    assert run_cli("report", "--sentences-report", tmp_path / "sentences.json",
                   "--triples-report", tmp_path / "triples.json", "--out", tmp_path / "report.json") == 0  # fmt: skip
    report = json.loads((tmp_path / "report.json").read_text())
    sentences = pd.read_parquet(tmp_path / "sentences.parquet")
    assert report["examples"] == 5 and report["documents"] == 5
    assert set(sentences.loc[sentences["side"] == "output", "example_id"]) == set(qags_xsum["example_id"].head(5))
    assert report["sentences"]["source"] == (sentences["side"] == "source").sum()
    assert len(pd.read_parquet(tmp_path / "triples.parquet")) == sum(report["triples"].values())
    assert report["words_per_s"] > 0 and report["triples_examples_not_sampled"] == 0
    # triples of the seeded sample OpenIE triples scores (score.sample): the scoring job's own examples
    assert run_cli("triples", *common, "--sentences", tmp_path / "sentences.parquet", "--batch-size", "4",
                   "--sample-examples", "2", "--sample-seed", "2022", "--out", tmp_path / "triples_sample.parquet",
                   "--report", tmp_path / "triples_sample.json") == 0  # fmt: skip
    sampled = pd.read_parquet(tmp_path / "triples_sample.parquet")
    expected = sample_examples(select_examples(qags_xsum.head(8), "qags_xsum", 5), 2, seed=2022)
    every = pd.read_parquet(tmp_path / "triples.parquet")
    on_sample = every["example_id"].isin(expected["example_id"]) & (every["side"] == "output")
    on_sample |= every["doc_id"].isin(expected["doc_id"]) & (every["side"] == "source")
    pd.testing.assert_frame_equal(sampled, every[on_sample].reset_index(drop=True))  # the same triples, of the sample
    assert on_sample.any() and not on_sample.all()
    sample_report = json.loads((tmp_path / "triples_sample.json").read_text())
    assert sample_report["examples_not_sampled"] == 3 and sample_report["sample"] == {"examples": 2, "seed": 2022}
    # Without triples (a benchmark no scorer reads triples of): no triple counts, and only the sentences timed.
    assert run_cli("report", "--sentences-report", tmp_path / "sentences.json",
                   "--out", tmp_path / "report_no_triples.json") == 0  # fmt: skip
    without = json.loads((tmp_path / "report_no_triples.json").read_text())
    assert without["triples"] is None and without["sentences_without_triples"] is None
    assert set(without["seconds"]) == {"sentences", "total"}
    step = json.loads((tmp_path / "sentences.json").read_text())
    assert without["seconds"]["total"] == pytest.approx(step["seconds"], abs=1e-3)
    assert without["sentences"] == report["sentences"]

    bad = qags_xsum.head(3).copy()
    bad.loc[2, "output"] = None
    bad.to_parquet(tmp_path / "bad.parquet")
    code = run_cli(
        "sentences", "--benchmark", "qags_xsum", "--data", tmp_path / "bad.parquet", "--max-examples", "all",
        "--splitter", "pysbd", "--batch-size", "4", "--out", tmp_path / "x.parquet", "--report", tmp_path / "x.json",
    )  # fmt: skip
    assert code == 1 and not (tmp_path / "x.parquet").exists()
    assert f"benchmark 'qags_xsum', example '{bad.loc[2, 'example_id']}': output must be a string" in capsys.readouterr().err
