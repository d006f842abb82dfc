"""`factlab metaeval qasem-parser`: score factlab's trained QASem parser.

QA-SRL GS test and QANom test with gold predicates -> `scores.csv` (UA/LA as fractions 0-1),
`predicate_detection.csv`, the predicted QAs, and coverage of the QASemConsistency gold QAs ->
`consistency_coverage.csv`; `metrics.json` with the headline numbers. The paper table is rendered
from scores.csv and predicate_detection.csv by the paper stage.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.errors import FactlabError
from factlab.io import write_json, write_parquet, write_text
from factlab.runtime import DEVICES, set_threads

LOG = logging.getLogger(__name__)
SCORE_COLUMNS = ["dataset", "unlabeled_precision", "unlabeled_recall", "unlabeled_f1", "labeled_f1", "n_gold", "n_pred"]
TEST_SETS = (("qasrl_gs_test", "qasrl_gs", "test"), ("qanom_test", "qanom", "test"))


def register(commands: Any) -> None:
    evaluate = commands.add_parser("qasem-parser", help="score a trained QASem parser")
    evaluate.add_argument("--model-dir", required=True)
    evaluate.add_argument("--qasrl-gs", required=True)
    evaluate.add_argument("--qanom", required=True)
    evaluate.add_argument("--consistency-responses", required=True, help="results/data/qasem_consistency.parquet")
    evaluate.add_argument("--consistency-qas", required=True, help="results/data/qasem_consistency_qas.parquet")
    evaluate.add_argument("--out-dir", required=True)
    evaluate.add_argument("--iou-threshold", type=float, required=True)
    evaluate.add_argument("--max-sentences", type=int, required=True, help="first n sentences per set (0 = all; smoke runs)")
    evaluate.add_argument("--batch-size", type=int, required=True)
    evaluate.add_argument("--threads", type=int, required=True)
    evaluate.add_argument("--device", required=True, choices=DEVICES)
    evaluate.set_defaults(func=run_evaluate)


def limited(sentences: list[Any], max_sentences: int) -> list[Any]:
    return sentences[:max_sentences] if max_sentences > 0 else sentences


def run_evaluate(args: argparse.Namespace) -> None:
    from factlab.models.qasem.benchmark import consistency_coverage, detection_scores, score_on_gold
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
        detection.append(
            {"dataset": name, **detection_scores(parser.detect_predicates([s.tokens for s in sentences]), sentences, kind)}
        )
        metrics[name] = {
            "unlabeled_f1": round(counts.unlabeled_f1, 4),
            "labeled_f1": round(counts.labeled_f1, 4),
            "parse_seconds": round(seconds, 1),
            "gold": {**count_arguments(sentences), **gold_counts},
            "parser_counts": dict(parser.counts),
        }
        LOG.info("%s: %s (%.0fs)", name, counts.as_row(), seconds)
    scores = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    write_text(scores.to_csv(index=False), out / "scores.csv")
    detection_frame = pd.DataFrame(detection)
    write_text(detection_frame.to_csv(index=False), out / "predicate_detection.csv")

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
