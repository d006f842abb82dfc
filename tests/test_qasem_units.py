"""The preprocess QAs table: one row per QA of every output sentence, drops counted."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from factlab.data.registry import get_spec
from factlab.errors import DataError
from factlab.models.qasem.types import Predicate, QAPair, SentenceParse
from factlab.preprocess.qas_command import QA_COLUMNS, load_qasem_parser, qa_units, spacy_tokenizer


class GoldAnswerParser:
    """Answers every sentence with one QA on its first verb: exercises the table, not a model."""

    def __init__(self) -> None:
        self.counts = {"sentences": 0}

    def parse(self, sentences):
        parses = []
        for tokens in sentences:
            self.counts["sentences"] += 1
            verbs = [i for i, token in enumerate(tokens) if token.lower() in {"is", "was", "said", "has"}]
            qas = []
            if verbs:
                index = verbs[0]
                predicate = Predicate(index=index, text=tokens[index], is_verbal=True, verb_form=tokens[index])
                qas.append(QAPair(predicate, f"What {tokens[index]}?", " ".join(tokens[:index]), 0, index, role="what"))
            parses.append(SentenceParse(tokens=list(tokens), qas=qas))
        return parses


@pytest.fixture(scope="module")
def sentences(raw) -> pd.DataFrame:
    frame = get_spec("qags_xsum").build(raw).frame.head(8)
    rows = [("source", r.doc_id, None, 0, r.source, 0) for r in frame.itertuples()]
    rows += [("output", r.doc_id, r.example_id, 0, r.output, 0) for r in frame.itertuples()]
    rows.append(("output", "extra", "extra-empty", 0, "   ", 0))
    return pd.DataFrame(rows, columns=["side", "doc_id", "example_id", "sentence_index", "text", "start"])


def test_qa_units_keys_and_counts(sentences):
    parser = GoldAnswerParser()
    qas, report = qa_units(sentences, parser, spacy_tokenizer(), "qags_xsum", parser_counts=lambda: parser.counts)
    assert list(qas.columns) == list(QA_COLUMNS)
    outputs = sentences[sentences["side"] == "output"]
    assert report["output_sentences"] == len(outputs) == 9
    assert report["empty_sentences"] == 1  # the whitespace-only sentence, counted not parsed
    assert parser.counts["sentences"] == 8  # sources are never parsed
    assert report["qas"] == len(qas) == 8 - report["sentences_without_qas"]
    assert set(qas["example_id"]) <= set(outputs["example_id"])
    assert (qas["answer_end"] >= qas["answer_start"]).all()


def test_qa_spans_are_the_predicate_and_answer_in_the_output(raw):
    """Real FRANK (CNN/DM) summaries split into sentences (offsets into the output): each QA's character spans are its
    predicate token and its answer's first to last token, in the output text itself."""
    from factlab.text.sentences import split_sentences

    frame = get_spec("frank").build(raw).frame.head(12)
    rows = [
        ("output", r.doc_id, r.example_id, index, sentence.text, sentence.start)
        for r in frame.itertuples()
        for index, sentence in enumerate(split_sentences(r.output))
    ]
    sentences = pd.DataFrame(rows, columns=["side", "doc_id", "example_id", "sentence_index", "text", "start"])
    assert (sentences["start"] > 0).sum() >= 5  # later sentences: the offsets are the output's, not the sentence's
    qas, _ = qa_units(sentences, GoldAnswerParser(), spacy_tokenizer(), "frank")
    outputs = dict(zip(frame["example_id"], frame["output"], strict=True))
    texts = {(r.example_id, r.sentence_index): r.text for r in sentences.itertuples()}
    assert len(qas) >= 10 and (qas.groupby("example_id")["sentence_index"].max() > 0).any()
    tokenize = spacy_tokenizer()
    for qa in qas.itertuples():
        output, tokens = outputs[qa.example_id], tokenize(texts[(qa.example_id, qa.sentence_index)])
        assert output[qa.predicate_char_start : qa.predicate_char_end] == qa.predicate == tokens[qa.predicate_index]
        answer = output[qa.answer_char_start : qa.answer_char_end]
        assert answer.startswith(tokens[qa.answer_start]) and answer.endswith(tokens[qa.answer_end - 1])
        assert len(tokenize(answer)) == qa.answer_end - qa.answer_start


class FailingParser(GoldAnswerParser):
    """Fails on one real sentence (the batch containing it fails as a whole)."""

    def __init__(self, bad_token: str) -> None:
        super().__init__()
        self.bad_token = bad_token

    def parse(self, sentences):
        if any(self.bad_token in tokens for tokens in sentences):
            raise ValueError("cannot parse")
        return super().parse(sentences)


def test_a_sentence_the_parser_fails_on_is_named(sentences, tmp_path):
    outputs = sentences[(sentences["side"] == "output") & (sentences["text"].str.strip() != "")]
    bad = outputs.iloc[5]
    bad_token = max(spacy_tokenizer()(bad.text), key=len)
    with pytest.raises(DataError) as raised:
        qa_units(sentences, FailingParser(bad_token), spacy_tokenizer(), "qags_xsum")
    first_bad = next(r for r in outputs.itertuples() if bad_token in spacy_tokenizer()(r.text))
    message = str(raised.value)
    assert "benchmark qags_xsum" in message and first_bad.example_id in message and "output" in message


def test_unknown_parser_kind_is_refused():
    with pytest.raises(ValueError, match="unknown QASem parser kind 'llm'"):
        load_qasem_parser("llm", "x")


@pytest.mark.parametrize(
    ("parser", "extra", "message"),
    [
        ("hub", ["--num-beams", "4"], "--parser hub needs --hub-format, --max-new-tokens (params.yaml qasem.hub)"),
        ("trained", ["--num-beams", "4"], "--parser trained takes no hub settings, got --num-beams"),
    ],
)
def test_qas_command_checks_hub_settings_before_loading_anything(tmp_path, capsys, parser, extra, message) -> None:
    from factlab.cli import main

    out = tmp_path / "qas.parquet"
    command = ["preprocess", "qas", "--benchmark", "b", "--data", str(tmp_path / "none.parquet"), "--max-examples", "all"]
    command += ["--sentences", str(tmp_path / "none.parquet"), "--sample-examples", "all", "--parser", parser]
    command += ["--model", str(tmp_path), "--device", "cpu", "--batch-size", "2", *extra, "--out", str(out), "--report", "r.json"]
    assert main(command) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0]
    assert not out.exists()


def test_qas_command_parses_only_the_seeded_sample_it_is_given(raw, tmp_path, monkeypatch) -> None:
    """`--sample-examples N`: the output sentences of the scoring job's own sample (drawn, as it draws it, from the
    examples preprocess kept) are parsed, and into the very QAs the whole run gives them; the rest is counted."""
    from factlab.cli import main
    from factlab.preprocess import qas_command as qas_module
    from factlab.preprocess.benchmark import select_examples
    from factlab.sampling import sample_examples
    from factlab.text.sentences import split_sentences

    frame = get_spec("frank").build(raw).frame.head(12)
    frame.to_parquet(tmp_path / "frank.parquet")
    rows = [("source", r.doc_id, None, 0, r.source, 0) for r in frame.drop_duplicates("doc_id").itertuples()]
    rows += [
        ("output", r.doc_id, r.example_id, index, sentence.text, sentence.start)
        for r in frame.itertuples()
        for index, sentence in enumerate(split_sentences(r.output))
    ]
    columns = ["side", "doc_id", "example_id", "sentence_index", "text", "start"]
    pd.DataFrame(rows, columns=columns).to_parquet(tmp_path / "sentences.parquet")
    monkeypatch.setattr(qas_module, "load_qasem_parser", lambda *args, **kwargs: GoldAnswerParser())

    def run(name: str, *sample: str) -> tuple[pd.DataFrame, dict]:
        command = ["preprocess", "qas", "--benchmark", "frank", "--data", str(tmp_path / "frank.parquet")]
        command += ["--max-examples", "10", "--sentences", str(tmp_path / "sentences.parquet"), *sample]
        command += ["--parser", "trained", "--model", str(tmp_path), "--device", "cpu", "--batch-size", "4"]
        command += ["--out", str(tmp_path / f"{name}.parquet"), "--report", str(tmp_path / f"{name}.json")]
        assert main(command) == 0
        return pd.read_parquet(tmp_path / f"{name}.parquet"), json.loads((tmp_path / f"{name}.json").read_text())

    every, every_report = run("every", "--sample-examples", "all")
    sampled, report = run("sampled", "--sample-examples", "4", "--sample-seed", "2022")
    expected = sample_examples(select_examples(frame, "frank", 10), 4, seed=2022)["example_id"]
    assert every_report["examples_not_sampled"] == 0 and "sample" not in every_report
    assert report["examples_not_sampled"] == 6 and report["sample"] == {"examples": 4, "seed": 2022}
    assert set(sampled["example_id"]) <= set(expected) and sampled["example_id"].nunique() >= 2
    on_sample = every[every["example_id"].isin(set(expected))].reset_index(drop=True)
    pd.testing.assert_frame_equal(sampled, on_sample)  # the same QAs, of the sample
    sentences_of_sample = sum(1 for r in rows if r[0] == "output" and r[2] in set(expected))
    assert report["output_sentences"] == sentences_of_sample < every_report["output_sentences"]
