"""`factlab models …`: train factlab's QASem parser and evaluate it.

- `train-qasem`: QANom train (+ dev) + QA-SRL GS dev -> a parser folder (weights as safetensors, config,
  templates, noun verb forms) plus `training_log.json` and `metrics.json` (DVC metrics).
- `evaluate-qasem`: QA-SRL GS test and QANom test with gold predicates -> `scores.csv` (UA/LA as
  fractions 0-1), predicate detection, the predicted QAs, and coverage of the QASemConsistency
  gold QAs -> `consistency_coverage.csv`; `metrics.json` with the headline numbers; the paper table
  (`--out-md`, `--out-tex`, both required as in every table command).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.errors import FactlabError
from factlab.io import write_json, write_parquet, write_text
from factlab.report.tables import write_tables

LOG = logging.getLogger(__name__)
SCORE_COLUMNS = ["dataset", "unlabeled_precision", "unlabeled_recall", "unlabeled_f1", "labeled_f1", "n_gold", "n_pred"]
TEST_SETS = (("qasrl_gs_test", "qasrl_gs", "test"), ("qanom_test", "qanom", "test"))


def register(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train-qasem", help="train factlab's QASem parser")
    train.add_argument("--qasrl-gs", required=True, help="results/data/qasrl_gs.parquet")
    train.add_argument("--qanom", required=True, help="results/data/qanom.parquet")
    train.add_argument("--out-dir", required=True)
    train.add_argument("--settings", default="{}", help="JSON object of training settings (params.yaml qasem.train)")
    train.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)")
    train.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    train.set_defaults(func=run_train)

    evaluate = commands.add_parser("evaluate-qasem", help="score a trained QASem parser")
    evaluate.add_argument("--model-dir", required=True)
    evaluate.add_argument("--qasrl-gs", required=True)
    evaluate.add_argument("--qanom", required=True)
    evaluate.add_argument("--consistency-responses", required=True, help="results/data/qasem_consistency.parquet")
    evaluate.add_argument("--consistency-qas", required=True, help="results/data/qasem_consistency_qas.parquet")
    evaluate.add_argument("--out-dir", required=True)
    evaluate.add_argument("--out-md", required=True, help="paper table of the test-set scores (Markdown)")
    evaluate.add_argument("--out-tex", required=True, help="the same table in LaTeX")
    evaluate.add_argument("--iou-threshold", type=float, default=0.3)
    evaluate.add_argument("--max-sentences", type=int, default=0, help="first n sentences per set (0 = all; smoke runs)")
    evaluate.add_argument("--batch-size", type=int, default=32)
    evaluate.add_argument("--threads", type=int, default=0)
    evaluate.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    evaluate.set_defaults(func=run_evaluate)


def set_threads(threads: int) -> None:
    import torch

    if threads < 0:
        raise FactlabError(f"--threads must be >= 0, got {threads}")
    if threads:
        torch.set_num_threads(threads)


def train_settings(text: str) -> Any:
    from factlab.models.qasem.train import TrainSettings

    values = json.loads(text)
    if not isinstance(values, dict):
        raise FactlabError("--settings must be a JSON object")
    known = {field.name for field in fields(TrainSettings)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise FactlabError(f"unknown QASem training settings {unknown}; known: {sorted(known)}")
    return TrainSettings(**values)


def run_train(args: argparse.Namespace) -> None:
    from factlab.models.qasem.train import prepare_training, train_parser

    set_threads(args.threads)
    settings = train_settings(args.settings)
    started = time.perf_counter()
    data = prepare_training(pd.read_parquet(args.qasrl_gs), pd.read_parquet(args.qanom), settings)
    parser, log = train_parser(data, settings, device=args.device)
    log["total_seconds_with_data"] = time.perf_counter() - started
    out = Path(args.out_dir)
    parser.save(out, log["settings"])
    write_json(log, out / "training_log.json")
    last = {**log["epochs"][-1], **log["validation_tuned"]}
    metrics = {
        "train_seconds": round(log["total_seconds_with_data"], 1),
        "epochs": len(log["epochs"]),
        "train_sentences": log["counts"]["train_sentences"],
        "rows_per_epoch": log["counts"]["rows_per_epoch"],
        "predicates_per_epoch": log["counts"]["predicates_per_epoch"],
        "templates": log["templates"],
        "template_coverage": round(log["template_coverage"], 4),
        "device": log["device"],
        **{key: round(value, 4) for key, value in last.items() if "validation_" in key and isinstance(value, float)},
        **{key: value for key, value in last.items() if "validation_n_" in key},
        **{f"decoding_{kind}_{name}": value for kind, tuning in log["decoding_tuning"].items() for name, value in tuning["chosen"].items()},
    }
    write_json(metrics, out / "metrics.json")
    LOG.info("parser saved to %s: %s", out, metrics)


def limited(sentences: list[Any], max_sentences: int) -> list[Any]:
    return sentences[:max_sentences] if max_sentences > 0 else sentences


def run_evaluate(args: argparse.Namespace) -> None:
    from factlab.models.qasem.benchmark import consistency_coverage, detection_scores, score_on_gold, scores_table
    from factlab.models.qasem.data import count_arguments, gold_sentences
    from factlab.models.qasem.parser import FactlabQASemParser

    set_threads(args.threads)
    if not 0 < args.iou_threshold <= 1:
        raise FactlabError(f"--iou-threshold must be in (0, 1], got {args.iou_threshold}")
    parser = FactlabQASemParser.load(args.model_dir, device=args.device, batch_size=args.batch_size, copular=False)
    tables = {"qasrl_gs": pd.read_parquet(args.qasrl_gs), "qanom": pd.read_parquet(args.qanom)}
    out = Path(args.out_dir)
    rows, detection, metrics = [], [], {}
    for name, source, split in TEST_SETS:
        sentences, gold_counts = gold_sentences(tables[source], source, split)
        sentences = limited(sentences, args.max_sentences)
        started = time.perf_counter()
        parser.reset_counts()
        counts, predictions = score_on_gold(parser, sentences, args.iou_threshold)
        seconds = time.perf_counter() - started
        rows.append({"dataset": name, **counts.as_row()})
        write_parquet(predictions, out / f"predictions_{name}.parquet")
        kind = "verbal" if source == "qasrl_gs" else "nominal"
        detection.append({"dataset": name, **detection_scores(parser.detect_predicates([s.tokens for s in sentences]), sentences, kind)})
        metrics[name] = {"unlabeled_f1": round(counts.unlabeled_f1, 4), "labeled_f1": round(counts.labeled_f1, 4),
                         "parse_seconds": round(seconds, 1), "gold": {**count_arguments(sentences), **gold_counts},
                         "parser_counts": dict(parser.counts)}
        LOG.info("%s: %s (%.0fs)", name, counts.as_row(), seconds)
    scores = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    write_text(scores.to_csv(index=False), out / "scores.csv")
    detection_frame = pd.DataFrame(detection)
    write_text(detection_frame.to_csv(index=False), out / "predicate_detection.csv")
    write_tables(
        scores_table(scores, detection_frame),
        args.out_md,
        args.out_tex,
        caption=f"factlab's QASem parser (MiniLM, trained offline) on the held-out test sets, gold predicates: argument "
        f"precision, recall and F1 at token IOU $\\geq$ {args.iou_threshold:g} (UA; LA: the question's role matches "
        f"too), predicate detection F1, and the published T5-small QASem parser's UA-F1.",
        label="tab:qasem-parser",
    )

    responses = pd.read_parquet(args.consistency_responses)
    qas = pd.read_parquet(args.consistency_qas)
    if args.max_sentences > 0:
        kept = set(responses["example_id"].head(args.max_sentences))
        responses, qas = responses[responses["example_id"].isin(kept)], qas[qas["doc_id"].isin(kept)]
    parser.copular = True
    parser.reset_counts()
    coverage, per_qa = consistency_coverage(parser, responses, qas, args.iou_threshold)
    write_text(coverage.to_csv(index=False), out / "consistency_coverage.csv")
    write_parquet(per_qa, out / "consistency_coverage_qas.parquet")
    metrics["consistency_coverage"] = {row.task: round(row.coverage, 4) for row in coverage.itertuples()}
    metrics["consistency_parser_counts"] = dict(parser.counts)
    metrics["predicate_detection_f1"] = {row["dataset"]: round(row["f1"], 4) for row in detection}
    write_json(metrics, out / "metrics.json")
