"""factlab's QASem parser: network pieces by hand, tiny end-to-end training on real sentences,
save/load, parsing, and the `factlab train qasem-parser` / `factlab metaeval qasem-parser` commands on a tmp dir.

The tiny models keep MiniLM's first layer only and small heads, so all of this runs in seconds.
"""

from __future__ import annotations

import json
import math
from dataclasses import fields
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml

from factlab.cli import main
from factlab.data.registry import get_spec
from factlab.errors import FactlabError
from factlab.io import write_parquet
from factlab.metaeval.analyses.qasem_parser_command import SCORE_COLUMNS
from factlab.models.qasem.benchmark import score_on_gold
from factlab.models.qasem.data import IGNORE
from factlab.models.qasem.decoding import DECODING_GRID, SpanDecoding
from factlab.models.qasem.model import (
    BIO_B,
    BIO_I,
    BIO_O,
    PredicateTarget,
    argument_row,
    bio_spans,
    choose_templates,
    encode_sentences,
    make_batch,
    sentence_row,
)
from factlab.models.qasem.parser import FactlabQASemParser
from factlab.models.qasem.templates import semantic_role
from factlab.models.qasem.types import Predicate
from factlab.runtime import load_encoder, load_tokenizer, select_device
from factlab.train.qasem import TrainingData, TrainSettings, prepare_training, train_parser

TINY = {
    "encoder_layers": 1,
    "head_dim": 32,
    "head_layers": 1,
    "min_template_count": 1,
    "log_every": 1,
    "seed": 3,
    "verbal_validation_sentences": 3,
    "detection_sentences": 4,
}


@pytest.fixture(scope="module")
def tables(raw) -> dict[str, pd.DataFrame]:
    names = ("qasrl_gs", "qanom", "qasem_consistency", "qasem_consistency_qas")
    return {name: get_spec(name).build(raw).frame for name in names}


@pytest.fixture(scope="module")
def tiny_data(tables: dict[str, pd.DataFrame]) -> TrainingData:
    settings = TrainSettings(max_train_sentences=8, validation_sentences=4, qasrl_gs_repeats=1, **TINY)
    return prepare_training(tables["qasrl_gs"], tables["qanom"], settings)


def test_bio_spans_by_hand() -> None:
    O, B, I = BIO_O, BIO_B, BIO_I  # noqa: E741
    assert bio_spans([B, I, O, I, I, B]) == [(0, 2), (3, 5), (5, 6)]
    assert bio_spans([O, O]) == []
    assert bio_spans([B, B, I]) == [(0, 1), (1, 3)]


def test_choose_templates_decides_the_role_first() -> None:
    # Templates 0 and 1 share role A (0.3 + 0.3), template 2 alone is role B (0.4): role A wins,
    # although template 2 is the single most probable.
    logits = torch.log(torch.tensor([[0.3, 0.3, 0.4], [0.1, 0.2, 0.7]]))
    roles = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert choose_templates(logits, roles).tolist() == [0, 2]


def test_encode_rows_and_batch() -> None:
    tokenizer = load_tokenizer()
    sentences = [["Searches", "are", "suspended", "until", "morning", "."], ["Rain", "fell", "."]]
    encoded = encode_sentences(tokenizer, sentences, max_seq_len=6)
    assert [piece >= 0 for piece in encoded[0].word_pieces] == [True, True, True, True, False, False]  # cut at 6 pieces
    assert encoded[1].word_pieces[0] == 1 and encoded[1].word_piece_ends[0] == 2  # after [CLS]
    verb = tokenizer("suspend", add_special_tokens=False)["input_ids"]
    marked = argument_row(encoded[0], PredicateTarget(2, 0, [(0, 1), (3, 5)], [4, IGNORE]), verb, tokenizer.sep_token_id)
    start, end = encoded[0].word_pieces[2], encoded[0].word_piece_ends[2]
    # The predicate's pieces and the appended "verb [SEP]" segment are type 1, the rest type 0.
    assert marked.token_type_ids == [int(start <= i < end) for i in range(6)] + [1] * (len(verb) + 1)
    assert marked.input_ids == encoded[0].input_ids + verb + [tokenizer.sep_token_id]
    plain = sentence_row(encoded[1], [0, 1, 0])
    assert set(plain.token_type_ids) == {0} and plain.predicates == []
    batch = make_batch([marked, plain])
    assert batch.input_ids.shape == batch.token_type_ids.shape and batch.word_mask.shape == (2, 6)
    assert batch.bio[0].tolist() == [BIO_B, BIO_O, BIO_O, BIO_B, IGNORE, IGNORE]  # cut words carry no label
    assert batch.detection[0].tolist() == [IGNORE] * 6  # argument rows train no detection
    assert batch.detection[1].tolist() == [0, 1, 0, IGNORE, IGNORE, IGNORE]
    assert batch.span_template.tolist() == [4, IGNORE]
    assert batch.pred_sentence.tolist() == [0] and batch.pred_index.tolist() == [2]
    with pytest.raises(ValueError):
        argument_row(encoded[0], PredicateTarget(5, 0), verb, tokenizer.sep_token_id)  # a cut predicate


def test_device_selection() -> None:
    assert select_device("cpu").type == "cpu"
    assert select_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(FactlabError):
        select_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(FactlabError):
            select_device("cuda")


def test_encoder_layers_are_cut() -> None:
    assert len(load_encoder(pretrained=False, layers=2).encoder.layer) == 2
    assert len(load_encoder(pretrained=False).encoder.layer) == 6  # cutting one model leaves the shared config alone
    with pytest.raises(FactlabError):
        load_encoder(pretrained=False, layers=9)


def test_prepare_training_samples_both_sources(tiny_data: TrainingData) -> None:
    sources = {sentence.source for sentence in tiny_data.train}
    # 8 sampled from GS dev + QANom train, and QANom dev in the same share as QANom train (at least 1).
    assert sources == {"qasrl_gs", "qanom"} and len(tiny_data.train) == 8 + 1
    assert tiny_data.counts["qanom_dev_train_sentences"] == 1
    validation = {s.sentence_id for s in tiny_data.validation}
    assert not validation & {s.sentence_id for s in tiny_data.train}  # the nominal validation does not train
    assert len(tiny_data.validation) == 4 and all(s.source == "qanom" for s in tiny_data.validation)
    assert len(tiny_data.verbal_validation) == 3 and all(s.source == "qasrl_gs" for s in tiny_data.verbal_validation)
    held_out = {s.sentence_id for s in tiny_data.verbal_validation}
    assert not held_out & {s.sentence_id for s in tiny_data.train}  # held out of training
    assert all(p.verb_form for s in tiny_data.train for p in s.predicates)  # GS verbs lemmatised for the marker
    assert tiny_data.noun_verbs["orientation"] == "orientate"


@pytest.mark.slow
def test_tiny_training_learns_and_the_parser_round_trips(tiny_data: TrainingData, tmp_path: Path) -> None:
    """A handful of real sentences, trained until it fits them: the losses fall, the parser finds
    the training arguments again, and save/load gives the same parse."""
    settings = TrainSettings(
        epochs=20,
        batch_sentences=8,
        encoder_lr=1e-3,
        head_lr=3e-3,
        warmup_fraction=0.0,
        validation_sentences=4,
        qasrl_gs_repeats=1,
        **TINY,
    )
    parser, log = train_parser(tiny_data, settings, device="cpu")
    losses = [sum(epoch[f"loss_{part}"] for part in ("detection", "arguments", "templates")) for epoch in log["epochs"]]
    assert all(math.isfinite(loss) for loss in losses) and losses[-1] < 0.5 * losses[0]
    assert len(log["epochs"]) == 20 and {"validation_unlabeled_f1", "verbal_validation_unlabeled_f1"} <= set(log["epochs"][-1])
    chosen = {kind: SpanDecoding.from_json(tuning["chosen"]) for kind, tuning in log["decoding_tuning"].items()}
    assert set(chosen) == {"nominal", "verbal"} and all(
        len(t["grid"]) == len(DECODING_GRID) for t in log["decoding_tuning"].values()
    )
    assert parser.decoding == {1: chosen["nominal"], 0: chosen["verbal"]}
    for kind, tuning in log["decoding_tuning"].items():  # the choice is the grid's best
        assert max(row["unlabeled_f1"] for row in tuning["grid"]) == pytest.approx(
            next(
                row["unlabeled_f1"]
                for row in tuning["grid"]
                if SpanDecoding.from_json({name: row[name] for name in SpanDecoding.__dataclass_fields__}) == chosen[kind]
            )
        )
    tuned = dict(parser.decoding)
    parser.decoding = {0: SpanDecoding(), 1: SpanDecoding()}  # plain argmax: the decoding was tuned on other sentences
    counts, predictions = score_on_gold(parser, tiny_data.train)
    assert counts.unlabeled_f1 > 0.7  # it has learnt its training sentences (measured 0.78)
    parser.decoding = tuned
    assert set(predictions["source"]) == {"model"}
    for row in predictions.itertuples():
        assert 0 <= row.answer_start < row.answer_end and row.question.endswith("?") and row.question[0].isupper()

    parser.save(tmp_path / "parser", log["settings"])
    loaded = FactlabQASemParser.load(tmp_path / "parser", device="cpu", copular=False)
    assert loaded.decoding == parser.decoding
    config_path = tmp_path / "parser" / "config.json"  # a parser saved before span decoding: only O biases
    config = json.loads(config_path.read_text())
    config["decoding"] = {"argument_bias_verbal": 0.5, "argument_bias_nominal": 1.0}
    config_path.write_text(json.dumps(config))
    legacy = FactlabQASemParser.load(tmp_path / "parser", device="cpu", copular=False)
    assert legacy.decoding == {0: SpanDecoding(outside_bias=0.5), 1: SpanDecoding(outside_bias=1.0)}
    parser.save(tmp_path / "parser", log["settings"])
    sentences = [s.tokens for s in tiny_data.train]
    predicates = [
        [Predicate(p.index, s.tokens[p.index], p.is_verbal, p.verb_form or "") for p in s.predicates] for s in tiny_data.train
    ]
    before = parser.parse(sentences, predicates)
    after = loaded.parse(sentences, predicates)
    assert [[(qa.question, qa.answer_start, qa.answer_end) for qa in p.qas] for p in before] == [
        [(qa.question, qa.answer_start, qa.answer_end) for qa in p.qas] for p in after
    ]
    for parse in after:
        for qa in parse.qas:
            assert qa.role == semantic_role(qa.slots) and qa.answer == " ".join(parse.tokens[qa.answer_start : qa.answer_end])

    # Detection on raw sentences, copular QAs included; a bad predicate index is an error.
    loaded.copular = True
    (parse,) = loaded.parse([["Paris", "is", "a", "city", "."]])
    assert ("What is a city?", "Paris") in [(qa.question, qa.answer) for qa in parse.qas]
    for found, tokens in zip(loaded.detect_predicates(sentences), sentences, strict=True):
        assert all(0 <= p.index < len(tokens) and p.verb_form for p in found)
    with pytest.raises(Exception, match="outside"):
        loaded.parse([["Rain", "fell"]], [[Predicate(5, "x", True, "fall")]])


@pytest.mark.slow
def test_marker_mode_trains_saves_and_parses(tiny_data: TrainingData, tmp_path: Path) -> None:
    """Marker mode: one encoder row per predicate; the saved parser remembers its mode."""
    settings = TrainSettings(
        epochs=2,
        batch_sentences=8,
        predicate_marker=True,
        validation_sentences=4,
        qasrl_gs_repeats=1,
        tune_decoding=False,
        **TINY,
    )
    parser, log = train_parser(tiny_data, settings, device="cpu")
    assert log["counts"]["rows_per_epoch"] == log["counts"]["predicates_per_epoch"] + 4  # + the detection sample
    parser.save(tmp_path / "marker", log["settings"])
    loaded = FactlabQASemParser.load(tmp_path / "marker", device="cpu", copular=False)
    assert loaded.network.config.predicate_marker and loaded.decoding == {0: SpanDecoding(), 1: SpanDecoding()}
    sentences = [s.tokens for s in tiny_data.train]
    assert [[qa.question for qa in p.qas] for p in loaded.parse(sentences)] == [
        [qa.question for qa in p.qas] for p in parser.parse(sentences)
    ]


@pytest.mark.slow
def test_template_loss_weight_zero_leaves_the_template_head_untrained(tiny_data: TrainingData) -> None:
    """With weight 0 (and no weight decay) the template head keeps its seeded initial weights
    however long it trains, while the span head learns; at weight 1 the template head learns too."""

    def trained(epochs: int, weight: float) -> dict[str, torch.Tensor]:
        settings = TrainSettings(
            epochs=epochs,
            batch_sentences=8,
            weight_decay=0.0,
            template_loss_weight=weight,
            tune_decoding=False,
            validation_sentences=4,
            qasrl_gs_repeats=1,
            **TINY,
        )
        return {
            name: value.clone() for name, value in train_parser(tiny_data, settings, device="cpu")[0].network.state_dict().items()
        }

    one, two, learning = trained(1, 0.0), trained(2, 0.0), trained(2, 1.0)
    template = [name for name in one if name.startswith("template.")]
    assert template and all(torch.equal(one[name], two[name]) for name in template)
    assert not torch.equal(one["bio.weight"], two["bio.weight"])
    assert not all(torch.equal(two[name], learning[name]) for name in template)


def test_params_yaml_sets_every_training_setting() -> None:
    """params.yaml `qasem.train` is passed to TrainSettings as is: the keys must be its fields."""
    params = yaml.safe_load((Path(__file__).resolve().parents[1] / "params.yaml").read_text())
    assert set(params["qasem"]["train"]) == {field.name for field in fields(TrainSettings)}
    assert TrainSettings(**params["qasem"]["train"]).epochs >= 1


def test_invalid_settings_are_errors() -> None:
    with pytest.raises(FactlabError):
        TrainSettings(epochs=0)
    with pytest.raises(FactlabError):
        TrainSettings(warmup_fraction=1.0)
    with pytest.raises(FactlabError, match="template_loss_weight"):
        TrainSettings(template_loss_weight=-0.1)


@pytest.mark.slow
def test_commands_train_and_evaluate(tables: dict[str, pd.DataFrame], tmp_path: Path) -> None:
    paths = {}
    for name, frame in tables.items():
        paths[name] = tmp_path / f"{name}.parquet"
        write_parquet(frame, paths[name])
    settings = json.dumps({"epochs": 1, "max_train_sentences": 6, "validation_sentences": 2, **TINY})
    model = tmp_path / "model"

    def train_command(out_dir: Path, settings: str) -> list[str]:
        return [
            "train", "qasem-parser", "--qasrl-gs", str(paths["qasrl_gs"]), "--qanom", str(paths["qanom"]),
            "--out-dir", str(out_dir), "--settings", settings, "--threads", "1", "--device", "cpu", "--precision", "fp32",
        ]  # fmt: skip

    assert main(train_command(model, settings)) == 0
    assert {"model.safetensors", "config.json", "templates.json", "noun_verbs.json", "training_log.json", "metrics.json"} <= {
        p.name for p in model.iterdir()
    }
    assert json.loads((model / "metrics.json").read_text())["epochs"] == 1

    out = tmp_path / "eval"
    assert (
        main(
            [
                "metaeval",
                "qasem-parser",
                "--model-dir",
                str(model),
                "--qasrl-gs",
                str(paths["qasrl_gs"]),
                "--qanom",
                str(paths["qanom"]),
                "--consistency-responses",
                str(paths["qasem_consistency"]),
                "--consistency-qas",
                str(paths["qasem_consistency_qas"]),
                "--out-dir",
                str(out),
                "--iou-threshold",
                "0.3",
                "--resamples",
                "50",
                "--confidence",
                "0.95",
                "--seed",
                "1",
                "--max-sentences",
                "3",
                "--batch-size",
                "32",
                "--threads",
                "1",
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "paper",
                "qasem-parser-table",
                "--scores",
                str(out / "scores.csv"),
                "--detection",
                str(out / "predicate_detection.csv"),
                "--bootstrap",
                str(out / "bootstrap.csv"),
                "--iou-threshold",
                "0.3",
                "--out-md",
                str(out / "table.md"),
                "--out-tex",
                str(out / "table.tex"),
            ]
        )
        == 0
    )
    scores = pd.read_csv(out / "scores.csv")
    table = (out / "table.md").read_text().splitlines()
    assert table[0].startswith("| Test set | UA-P |") and len(table) == 4  # header, rule, one row per test set
    assert table[3].startswith("| QANom test (nominal) |") and table[3].endswith("| 0.592 |")  # published T5-small UA-F1
    assert f"{scores['unlabeled_f1'].iloc[0]:.3f}" in table[2]
    gs = pd.read_csv(out / "bootstrap.csv").query("dataset == 'qasrl_gs_test' and statistic == 'unlabeled_f1'").iloc[0]
    assert f"| [{gs['low']:.3f}, {gs['high']:.3f}] |" in table[2]  # the sentence bootstrap's UA-F1 interval
    assert "\\label{tab:qasem-parser}" in (out / "table.tex").read_text()
    assert list(scores.columns) == SCORE_COLUMNS
    assert list(scores["dataset"]) == ["qasrl_gs_test", "qanom_test"]
    assert scores[SCORE_COLUMNS[1:5]].apply(lambda column: column.between(0, 1)).all().all()
    # The bootstrap's full-data estimate sums per-sentence counts: it must equal the pooled score.
    intervals = pd.read_csv(out / "bootstrap.csv").set_index(["dataset", "statistic"])
    for row in scores.itertuples():
        for statistic in ("unlabeled_f1", "labeled_f1"):
            ci = intervals.loc[(row.dataset, statistic)]
            assert ci["estimate"] == pytest.approx(getattr(row, statistic), abs=1e-12)
            assert ci["low"] <= ci["estimate"] <= ci["high"] and ci["resamples"] == 50
    coverage = pd.read_csv(out / "consistency_coverage.csv")
    assert coverage["task"].iloc[-1] == "all" and coverage["coverage"].between(0, 1).all()
    assert coverage["n_gold_qas"].iloc[:-1].sum() == coverage["n_gold_qas"].iloc[-1]
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics) >= {"qasrl_gs_test", "qanom_test", "consistency_coverage"}

    # Unknown training settings are refused, not ignored.
    assert main(train_command(tmp_path / "bad", '{"epoch": 1}')) == 1
