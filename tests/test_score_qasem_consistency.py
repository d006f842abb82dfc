"""QASemConsistency on real QASemConsistency responses and their gold QAs, against pairs scored one at a time."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.special import expit, logit
from tiny_aligner import tiny_aligner

from factlab.cli import main
from factlab.errors import ConfigError, DataError
from factlab.models.aligner import AlignerConfig, AlignerScorer, new_network, save_aligner
from factlab.models.engine import EngineSettings, reference_scores
from factlab.models.loading import load_pair_scorer
from factlab.preprocess.benchmark import sentence_units
from factlab.preprocess.qas_command import QA_COLUMNS
from factlab.score.alignscore import AlignScoreSettings
from factlab.score.alignscore import score_benchmark as alignscore
from factlab.score.qasem_consistency import QASemConsistencySettings, aggregate_support, balanced_support, score_benchmark
from factlab.score.qasem_consistency_command import job_settings
from factlab.text.chunking import SentenceChunk, alignscore_chunks
from factlab.text.sentences import Sentence

CUT = Path(__file__).parent / "fixtures" / "qasem_consistency_cut"
ENGINE = EngineSettings(progress=False)
WORDS = 40  # the cut's sources (62, 102 and 129 words) get 3-5 chunks each
DOUG = "factscore/Doug Sheehan/InstructGPT"


@pytest.fixture(scope="module")
def scorer() -> AlignerScorer:
    return tiny_aligner(5)


@pytest.fixture(scope="module")
def responses() -> pd.DataFrame:
    return pd.read_parquet(CUT / "responses.parquet").sort_values("example_id").reset_index(drop=True)


@pytest.fixture(scope="module")
def gold() -> pd.DataFrame:
    return pd.read_parquet(CUT / "qas.parquet")


@pytest.fixture(scope="module")
def sentences(responses: pd.DataFrame) -> pd.DataFrame:
    table, _ = sentence_units(responses, "qasem_consistency")
    return table


def settings(**changes: object) -> QASemConsistencySettings:
    values = {
        "decomposition": "qas",
        "qa_source": "gold",
        "aggregation": "share",
        "threshold": 0.5,
        "support_head": "three_way",
        "class_prior": "trained",
        "words_per_chunk": WORDS,
        "chunk_policy": "reference",
    }
    return QASemConsistencySettings(**{**values, **changes})  # type: ignore[arg-type]


def side(sentences: pd.DataFrame, name: str, owner: str, key: str) -> list[Sentence]:
    rows = sentences[(sentences["side"] == name) & (sentences[owner] == key)].sort_values("sentence_index")
    return [Sentence(t, s, e) for t, s, e in rows[["text", "start", "end"]].itertuples(index=False)]


def source_chunks(sentences: pd.DataFrame, doc_id: str) -> list[SentenceChunk]:
    chunks, _ = alignscore_chunks(side(sentences, "source", "doc_id", doc_id), WORDS, "reference")
    return chunks


def alone(scorer: AlignerScorer, chunks: list[SentenceChunk], hypothesis: str) -> np.ndarray:
    """The hypothesis against every chunk, each pair alone through the reference loop (no batching, dedup, cache)."""
    return reference_scores(scorer, [(chunk.text, hypothesis) for chunk in chunks], pad_to=256)


def by_hand(values: list[float], aggregation: str, threshold: float) -> float:
    if aggregation == "share":
        return sum(1 for value in values if value >= threshold) / len(values)
    return min(values) if aggregation == "min" else sum(values) / len(values)


def test_aggregation_by_hand() -> None:
    values = [0.2, 0.5, 0.9]
    assert aggregate_support(values, "share", 0.5) == pytest.approx(2 / 3)  # 0.5 itself is supported
    assert aggregate_support(values, "share", 0.6) == pytest.approx(1 / 3)
    assert aggregate_support(values, "min", 0.5) == pytest.approx(0.2)
    assert aggregate_support(values, "mean", 0.99) == pytest.approx(1.6 / 3)
    assert np.isnan(aggregate_support([], "share", 0.5))
    with pytest.raises(ConfigError, match="median"):
        aggregate_support(values, "median", 0.5)


@pytest.fixture(scope="module")
def reference(scorer: AlignerScorer, responses: pd.DataFrame, sentences: pd.DataFrame, gold: pd.DataFrame) -> dict:
    """Per gold QA id: its chunk scores, each pair alone; the hypothesis is the adapter's `output` (question + answer)."""
    doc_of = dict(zip(responses["example_id"], responses["doc_id"], strict=True))
    return {
        qa.example_id: alone(scorer, source_chunks(sentences, doc_of[qa.doc_id]), qa.output)
        for qa in gold.itertuples(index=False)
    }


@pytest.mark.parametrize("aggregation", ["share", "min", "mean"])
def test_gold_qa_scores_are_max_over_chunks_and_aggregate(
    scorer: AlignerScorer, responses: pd.DataFrame, sentences: pd.DataFrame, gold: pd.DataFrame, reference: dict, aggregation: str
) -> None:
    threshold = float(np.median([chunk_scores.max() for chunk_scores in reference.values()]))  # splits the QAs
    scores, counts = score_benchmark(
        responses, sentences, scorer, settings(aggregation=aggregation, threshold=threshold), ENGINE, qas=gold
    )
    assert scores["example_id"].tolist() == responses["example_id"].tolist()
    n_chunks = {row.example_id: len(source_chunks(sentences, row.doc_id)) for row in responses.itertuples()}
    assert sorted(n_chunks.values()) == [3, 3, 4, 5]  # the reference policy: a remainder chunk too
    assert counts["pairs"] == sum(n_chunks[qa.doc_id] for qa in gold.itertuples())
    assert counts["qa_hypotheses"] == 40 and counts["examples_without_qas"] == counts["output_sentences_without_qas"] == 0
    shares = []
    for row in scores.itertuples():
        qas = gold[gold["doc_id"] == row.example_id]
        assert row.decomposition == "qas" and row.n_qas == row.n_units == len(qas) == len(row.units)
        assert row.n_chunks == n_chunks[row.example_id]
        source = responses.loc[responses["example_id"] == row.example_id, "source"].item()
        chunks = source_chunks(sentences, responses.loc[responses["example_id"] == row.example_id, "doc_id"].item())
        for item, qa in zip(row.units, qas.itertuples(index=False), strict=True):
            expected = reference[qa.example_id]
            assert (item["unit"], item["qa_id"], item["question"], item["answer"]) == (
                "qa",
                qa.example_id,
                qa.question,
                qa.answer,
            )
            assert item["hypothesis"] == qa.output
            # the upstream sentence of the QA (the cut's pysbd sentences are upstream's, checked below)
            assert item["sentence_index"] == qa.sent_id
            assert item["score"] == pytest.approx(expected.max(), abs=1e-5)
            assert item["supported"] == (item["score"] >= threshold)
            best = int(np.argmax(expected))
            assert (item["best_chunk"], item["chunk_start"], item["chunk_end"]) == (best, chunks[best].start, chunks[best].end)
            # the span holds the chunk's sentences (joined by spaces in the chunk, some glued in the source)
            assert "".join(source[item["chunk_start"] : item["chunk_end"]].split()) == "".join(chunks[best].text.split())
        values = [float(reference[qa_id].max()) for qa_id in qas["example_id"]]
        assert row.score == pytest.approx(by_hand(values, aggregation, threshold), abs=1e-5)
        shares.append(by_hand(values, "share", threshold))
    assert 0 < np.mean(shares) < 1  # the threshold splits the QAs: the share is not a constant
    for row in responses.itertuples():
        assert [s.text for s in side(sentences, "output", "example_id", row.example_id)] == list(row.sentences)


def test_sentences_decomposition_with_mean_is_alignscore(
    scorer: AlignerScorer, responses: pd.DataFrame, sentences: pd.DataFrame
) -> None:
    scores, counts = score_benchmark(
        responses, sentences, scorer, settings(decomposition="sentences", aggregation="mean"), ENGINE
    )
    expected, _ = alignscore(responses, sentences, scorer, AlignScoreSettings(WORDS, "reference", "mean"), ENGINE)
    assert scores["score"].to_numpy() == pytest.approx(expected["score"].to_numpy(), abs=1e-6)
    assert counts["sentence_hypotheses"] == 8 and counts["qa_hypotheses"] == counts["examples_without_qas"] == 0
    doug = scores[scores["example_id"] == DOUG].iloc[0]
    assert doug.decomposition == "sentences" and doug.n_units == doug.n_sentences == 5 and doug.n_qas == 0
    assert [item["unit"] for item in doug.units] == ["sentence"] * 5 and doug.units[0]["qa_id"] is None
    doug_output = responses.loc[responses["example_id"] == DOUG, "output"].item()
    assert [doug_output[s:e] for item in doug.units for s, e in item["output_spans"]] == [i["hypothesis"] for i in doug.units]
    assert [item["hypothesis"] for item in doug.units] == list(responses.loc[responses["example_id"] == DOUG, "sentences"].item())
    # the share of supported sentences, from AlignScore's per-sentence supports
    threshold = float(np.median([s["support"] for detail in expected["sentences"] for s in detail]))
    shares, _ = score_benchmark(responses, sentences, scorer, settings(decomposition="sentences", threshold=threshold), ENGINE)
    for row, detail in zip(shares.itertuples(), expected["sentences"], strict=True):
        assert row.score == pytest.approx(by_hand([s["support"] for s in detail], "share", threshold), abs=1e-9)


def char_span(response: str, first: int, stop: int) -> tuple[int, int]:
    """Characters of tokens [first, stop) of a response whose tokens are joined by single spaces."""
    tokens = response.split(" ")
    start = sum(len(token) + 1 for token in tokens[:first])
    return start, start + len(" ".join(tokens[first:stop]))


def parser_table(gold: pd.DataFrame) -> pd.DataFrame:
    """The gold QAs of the cut in the layout of the preprocess stage's qas.parquet (as a parser would write them),
    their predicate's and answer's character spans from the gold token offsets into the response."""
    predicates = [char_span(r, i, i + 1) for r, i in zip(gold["response"], gold["predicate_idx"], strict=True)]
    answers = [char_span(r, *map(int, span.split("-"))) for r, span in zip(gold["response"], gold["answer_idx"], strict=True)]
    frame = pd.DataFrame(
        {
            "example_id": gold["doc_id"],
            "doc_id": "unused",
            "sentence_index": gold["sent_id"],
            "predicate_index": gold["predicate_idx"],
            "predicate": gold["predicate"],
            "is_verbal": gold["predicate_pos"] == "VERB",
            "verb_form": gold["predicate"],
            "question": gold["question"],
            "answer": gold["answer"],
            "answer_start": 0,
            "answer_end": 1,
            "role": "",
            "origin": "gold",
            "predicate_char_start": [start for start, _ in predicates],
            "predicate_char_end": [end for _, end in predicates],
            "answer_char_start": [start for start, _ in answers],
            "answer_char_end": [end for _, end in answers],
        }
    )
    return frame.astype(QA_COLUMNS)


def test_parser_qas_score_like_the_same_gold_qas(
    scorer: AlignerScorer, responses: pd.DataFrame, sentences: pd.DataFrame, gold: pd.DataFrame
) -> None:
    from_gold, _ = score_benchmark(responses, sentences, scorer, settings(aggregation="mean"), ENGINE, qas=gold)
    parsed = parser_table(gold)
    from_parser, _ = score_benchmark(
        responses, sentences, scorer, settings(qa_source="parser", aggregation="mean"), ENGINE, qas=parsed
    )
    assert from_parser["score"].to_numpy() == pytest.approx(from_gold["score"].to_numpy(), abs=1e-9)
    bart = from_parser[from_parser["example_id"] == "cliff/141/bart"].iloc[0]
    # "towed" (token 5) has four QAs, "getting" (token 9) three: numbered per predicate
    assert [item["qa_id"] for item in bart.units] == [
        "cliff/141/bart/s0/p5/q0",
        "cliff/141/bart/s0/p5/q1",
        "cliff/141/bart/s0/p5/q2",
        "cliff/141/bart/s0/p5/q3",
        "cliff/141/bart/s0/p9/q0",
        "cliff/141/bart/s0/p9/q1",
        "cliff/141/bart/s0/p9/q2",
    ]
    output = responses.loc[responses["example_id"] == "cliff/141/bart", "output"].item()
    tokens = output.split(" ")
    assert (tokens[5], tokens[9]) == ("towed", "getting")
    # Each parser QA localises to its predicate and its answer in the output; a gold QA to nothing given.
    first = bart.units[0]
    located = [output[start:end] for start, end in first["output_spans"]]
    assert located == ["towed", first["answer"]] == ["towed", "A fishing boat"]
    assert all(output[s:e] == item["answer"] for item in bart.units for s, e in item["output_spans"][1:])
    assert all(len(item["output_spans"]) == 0 for item in from_gold["units"].iloc[0])


def test_outputs_without_qas_fall_back_to_their_sentences_and_are_counted(
    scorer: AlignerScorer, responses: pd.DataFrame, gold: pd.DataFrame
) -> None:
    empty = responses.iloc[[0]].assign(example_id="cliff/empty", output="")
    examples = pd.concat([responses, empty], ignore_index=True)
    sentences, _ = sentence_units(examples, "qasem_consistency")
    parsed = parser_table(gold)
    doug_sentence_2 = (parsed["example_id"] == DOUG) & (parsed["sentence_index"] == 2)
    qas = parsed[(parsed["example_id"] != "cliff/141/bart") & ~doug_sentence_2]  # bart's summary has no QA left
    scores, counts = score_benchmark(examples, sentences, scorer, settings(qa_source="parser"), ENGINE, qas=qas)
    by_sentences, _ = score_benchmark(examples, sentences, scorer, settings(decomposition="sentences"), ENGINE)
    rows = scores.set_index("example_id")
    assert rows.loc["cliff/141/bart", "decomposition"] == "sentences"
    assert rows.loc["cliff/141/bart", "score"] == by_sentences.set_index("example_id").loc["cliff/141/bart", "score"]
    assert rows.loc["cliff/empty", "decomposition"] == "none" and np.isnan(rows.loc["cliff/empty", "score"])
    assert rows.loc[DOUG, "decomposition"] == "qas" and rows.loc[DOUG, "n_sentences_without_qas"] == 1
    assert counts["examples_without_qas"] == 2  # the bart summary and the empty output
    assert counts["examples_scored_by_sentences_fallback"] == 1
    assert counts["examples_without_output_sentences"] == counts["examples_scored_nan"] == 1
    assert counts["output_sentences_without_qas"] == 1  # Doug Sheehan's sentence 2 (3 QAs dropped)


def test_bad_qa_tables_name_file_record_and_field(
    scorer: AlignerScorer, responses: pd.DataFrame, sentences: pd.DataFrame, gold: pd.DataFrame
) -> None:
    parsed = parser_table(gold)
    cases = [
        (
            "parser",
            parsed.assign(sentence_index=np.where(parsed["example_id"] == "cliff/141/bart", 1, parsed["sentence_index"])),
            r"sentence_index 1 but the output has 1 sentences .*\(file qas.parquet, record example cliff/141/bart "
            r"sentence 1 predicate 5, field 'sentence_index'\)",
        ),
        ("parser", parsed.assign(question=parsed["question"].where(parsed.index != 3, " ")), r"record .* field 'question'"),
        ("parser", parsed.drop(columns="answer"), r"lacks the columns \['answer'\] \(file qas.parquet, field 'answer'\)"),
        (
            "parser",
            parsed.assign(answer_char_end=parsed["answer_char_end"] + 500),
            r"is outside its output sentence \[0, \d+\) \(a stale qas.parquet\?\) \(file qas.parquet, record example "
            r".* field 'answer_char_start/answer_char_end'\)",
        ),
        (
            "gold",
            gold.assign(response=gold["response"].where(gold["example_id"] != "cliff/141/bart/qa2", "A boat .")),
            r"not the example's output \(file qas.parquet, record cliff/141/bart/qa2, field 'response'\)",
        ),
        (
            "gold",
            gold.assign(predicate_idx=gold["predicate_idx"].where(gold["example_id"] != "cliff/141/bart/qa0", 99)),
            r"predicate_idx 99 is outside the response \(file qas.parquet, record cliff/141/bart/qa0, field 'predicate_idx'\)",
        ),
        (
            "gold",
            gold.assign(doc_id="other"),
            r"no gold QA belongs to an example of benchmark 'qasem_consistency'.*field 'doc_id'",
        ),
    ]
    for source, table, message in cases:
        with pytest.raises(DataError, match=message) as error:
            score_benchmark(
                responses,
                sentences,
                scorer,
                settings(qa_source=source),
                ENGINE,
                qas=table,
                qas_file="qas.parquet",
                benchmark="qasem_consistency",
            )
        assert "\n" not in str(error.value)
    with pytest.raises(ConfigError, match="needs the gold QA table"):
        score_benchmark(responses, sentences, scorer, settings(), ENGINE)


def test_bad_settings_are_config_errors(tmp_path: Path) -> None:
    for bad in (
        {"decomposition": "predicates"},
        {"qa_source": "oracle"},
        {"aggregation": "median"},
        {"threshold": 1.5},
        {"threshold": True},
        {"words_per_chunk": 0},
        {"chunk_policy": "fixed"},
        {"support_head": "regression"},
        {"class_prior": "uniform"},
        {"class_prior": "balanced"},  # without the training labels' aligned share
    ):
        with pytest.raises(ConfigError, match="qasem_consistency"):
            settings(**bad)
    choice = tmp_path / "choice.json"
    tuned = {"support_head": "three_way", "words_per_chunk": 60, "aggregation": "mean", "chunk_policy": "even"}
    choice.write_text(json.dumps(tuned))
    params = {"decomposition": "qas", "qa_source": "gold", "aggregation": "share", "threshold": 0.5, "support_head": "three_way"}
    params["class_prior"] = "trained"
    assert job_settings(json.dumps(params), str(choice), "even") == settings(
        qa_source="gold", words_per_chunk=60, chunk_policy="even"
    )
    with pytest.raises(ConfigError, match=r"missing \['threshold'\]"):
        job_settings(json.dumps({k: v for k, v in params.items() if k != "threshold"}), str(choice), "even")
    with pytest.raises(ConfigError, match=r"unknown \['model'\]"):
        job_settings(json.dumps({**params, "model": "trained"}), str(choice), "even")
    with pytest.raises(ConfigError, match="tuned with chunk policy 'even', but the configured chunk policy .* is 'reference'"):
        job_settings(json.dumps(params), str(choice), "reference")


def command(tmp_path: Path, decomposition: str, qas: str, head: str = "binary", prior: str = "trained") -> list[str]:
    params = {"decomposition": decomposition, "qa_source": "gold", "aggregation": "share", "threshold": 0.5, "support_head": head}
    params["class_prior"] = prior
    return [
        "score", "qasem-consistency", "--benchmark", "qasem_consistency", "--data", str(tmp_path / "data.parquet"),
        "--sentences", str(tmp_path / "sentences.parquet"), "--max-examples", "all", "--sample-examples", "all",
        "--shard", "0", "--shards", "1", "--threads", "1", "--out", str(tmp_path / f"scores_{decomposition}.parquet"),
        "--report", str(tmp_path / f"scores_{decomposition}.json"),
        "--model", str(tmp_path / "aligner"), "--entailment-label", "entailment", "--token-budget", "4096",
        "--max-batch-pairs", "16", "--precision", "fp32", "--device", "cpu", "--qas", qas,
        "--choice", str(tmp_path / "choice.json"), "--chunk-policy", "reference", "--settings", json.dumps(params),
    ]  # fmt: skip


def test_command_writes_the_scores_of_both_decompositions(
    tmp_path: Path, responses: pd.DataFrame, sentences: pd.DataFrame, gold: pd.DataFrame, capsys: pytest.CaptureFixture[str]
) -> None:
    torch.manual_seed(6)
    network, tokenizer = new_network(AlignerConfig(encoder_layers=1, max_length=256))
    save_aligner(network, tokenizer, tmp_path / "aligner", {"seed": 6})
    responses.to_parquet(tmp_path / "data.parquet")
    sentences.to_parquet(tmp_path / "sentences.parquet")
    gold.to_parquet(tmp_path / "gold.parquet")
    choice = {"support_head": "binary", "words_per_chunk": WORDS, "aggregation": "min", "chunk_policy": "reference"}
    (tmp_path / "choice.json").write_text(json.dumps(choice))
    assert main(command(tmp_path, "qas", str(tmp_path / "gold.parquet"))) == 0
    assert main(command(tmp_path, "sentences", "none")) == 0
    report = json.loads((tmp_path / "scores_qas.json").read_text())
    assert report["scorer"] == "qasem_consistency" and report["model"].startswith("aligner:")
    assert report["settings"] == {
        "decomposition": "qas",
        "qa_source": "gold",
        "aggregation": "share",
        "threshold": 0.5,
        "support_head": "binary",
        "class_prior": "trained",
        "words_per_chunk": WORDS,
        "chunk_policy": "reference",
        "aligned_share": None,
    }
    assert report["qa_hypotheses"] == 40 and report["examples"] == 4
    qa_scores = pd.read_parquet(tmp_path / "scores_qas.parquet")
    sentence_scores = pd.read_parquet(tmp_path / "scores_sentences.parquet")
    assert {unit["unit"] for units in sentence_scores["units"] for unit in units} == {"sentence"}
    aligner = load_pair_scorer(str(tmp_path / "aligner"), device="cpu")
    direct, _ = score_benchmark(responses, sentences, aligner, settings(support_head="binary"), ENGINE, qas=gold)
    assert qa_scores["score"].to_numpy() == pytest.approx(direct["score"].to_numpy(), abs=1e-6)
    # class_prior balanced: every QA's support read under equal priors, from the mixture's train labels (2 of 5
    # known aligned: 3-way 0 is aligned; validation rows and unlabelled ones do not count)
    pd.DataFrame(
        {
            "split": ["train"] * 6 + ["validation"] * 2,
            "label_bin": [1, 0, None, None, 0, None, 1, 1],
            "label_3way": [None, None, 0, 2, None, None, None, None],
            "score": [None] * 5 + [0.7, None, None],
        }
    ).to_parquet(tmp_path / "mixture.parquet")
    balanced_command = command(tmp_path, "qas", str(tmp_path / "gold.parquet"), prior="balanced")
    assert main([*balanced_command, "--training-mixture", str(tmp_path / "mixture.parquet")]) == 0
    balanced = pd.read_parquet(tmp_path / "scores_qas.parquet")
    assert json.loads((tmp_path / "scores_qas.json").read_text())["settings"]["aligned_share"] == pytest.approx(0.4)
    plain_units = [unit["score"] for units in qa_scores["units"] for unit in units]
    balanced_units = [unit["score"] for units in balanced["units"] for unit in units]
    expected = expit(logit(np.clip(plain_units, 1e-12, 1 - 1e-12)) + np.log(0.6 / 0.4))  # logit + log((1 - pi) / pi)
    assert balanced_units == pytest.approx(expected, abs=1e-6)
    assert main(balanced_command) == 1  # no mixture given: an error, not the trained prior
    three_way, _ = score_benchmark(responses, sentences, aligner, settings(), ENGINE, qas=gold)
    assert three_way["score"].to_numpy() != pytest.approx(direct["score"].to_numpy())  # the heads differ
    assert main(command(tmp_path, "qas", str(tmp_path / "gold.parquet"), head="three_way")) == 0
    assert pd.read_parquet(tmp_path / "scores_qas.parquet")["score"].to_numpy() == pytest.approx(
        three_way["score"].to_numpy(), abs=1e-6
    )

    # a QA table for a missing file is one error line
    capsys.readouterr()
    assert main(command(tmp_path, "qas", str(tmp_path / "missing.parquet"))) == 1
    assert capsys.readouterr().err.strip() == f"factlab: error: QA table not found (file {tmp_path / 'missing.parquet'})"
    assert main(command(tmp_path, "qas", "none")) == 1


def test_the_aligned_share_is_the_training_targets_share() -> None:
    """aligned_share restates the training's binary targets (row_targets, not imported by scoring): both agree on
    every kind of row, and only train rows count."""
    from factlab.score.qasem_consistency_command import aligned_share
    from factlab.train.aligner import row_targets

    rows = pd.DataFrame(
        {
            "split": ["train"] * 7 + ["validation"],
            "label_bin": [1, 0, None, None, None, 1, None, 0],
            "label_3way": [None, None, 0, 1, 2, None, None, None],
            "score": [None] * 6 + [0.4, None],
        }
    )
    targets = row_targets(rows[rows["split"] == "train"]).binary.numpy()
    assert aligned_share(rows) == pytest.approx(targets[targets >= 0].mean()) == pytest.approx(3 / 6)
    with pytest.raises(DataError, match="no train row"):
        aligned_share(rows[rows["split"] == "validation"].assign(split="train", label_bin=None))


def test_balanced_support_is_the_posterior_under_equal_priors() -> None:
    """P(aligned) trained under a 38% prior, read under 50%: the logit shifted by log((1 - pi) / pi) (scipy)."""
    from scipy.special import expit, logit

    support = np.array([0.0, 0.1, 0.382, 0.5, 0.9, 1.0])
    shifted = balanced_support(support, 0.382)
    assert shifted[1:-1] == pytest.approx(expit(logit(support[1:-1]) + np.log(0.618 / 0.382)), abs=1e-12)
    assert (shifted[0], shifted[-1]) == (0.0, 1.0) and shifted[2] == pytest.approx(0.5)  # the prior itself reads even
    assert (np.diff(shifted) > 0).all()  # the order, so every AUC, is kept
    assert balanced_support(support, 0.5) == pytest.approx(support)
    for bad in (0.0, 1.0):
        with pytest.raises(ConfigError, match="aligned share"):
            balanced_support(support, bad)
