"""`factlab metaeval qasem-parser`: score factlab's trained QASem parser.

QA-SRL GS test and QANom test with gold predicates -> `scores.csv` (UA/LA as fractions 0-1),
`predicate_detection.csv`, the predicted QAs, and coverage of the QASemConsistency gold QAs ->
`consistency_coverage.csv`; sentence-bootstrap CIs of UA/LA-F1 and the share of resamples above the
published T5-small parser -> `bootstrap.csv`; `metrics.json` with the headline numbers. The paper table is rendered
from scores.csv, predicate_detection.csv and bootstrap.csv by the paper stage.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments, add_device_arguments
from factlab.errors import FactlabError
from factlab.io import write_json, write_parquet, write_text
from factlab.runtime import set_threads

if TYPE_CHECKING:
    import pandas as pd

LOG = logging.getLogger(__name__)
SCORE_COLUMNS = ["dataset", "unlabeled_precision", "unlabeled_recall", "unlabeled_f1", "labeled_f1", "n_gold", "n_pred"]
TEST_SETS = (("qasrl_gs_test", "qasrl_gs", "test"), ("qanom_test", "qanom", "test"))
# The T5-small QASem parser's UA-F1 (Klein et al., 2022), the published number to beat.
PUBLISHED_T5_SMALL_UA_F1 = {"qasrl_gs_test": 0.686, "qanom_test": 0.592}
COUNT_COLUMNS = ["n_gold", "n_pred", "matched", "matched_labeled"]


def sentence_counts(predicted: Any, gold: Any, threshold: float) -> pd.DataFrame:
    """Argument counts per sentence (rows: sentence_id + COUNT_COLUMNS): the bootstrap's unit. Summed,
    they are evaluation.score_arguments' pooled counts (the same predicates, scored once)."""
    import pandas as pd

    from factlab.models.qasem.evaluation import ArgumentCounts, score_predicate

    by_sentence: dict[str, ArgumentCounts] = {}
    for key, gold_arguments in gold.items():
        scored = score_predicate(predicted.get(key, ()), gold_arguments, threshold)
        by_sentence[key[0]] = by_sentence.get(key[0], ArgumentCounts()) + scored
    rows = [[sentence, *(getattr(counts, column) for column in COUNT_COLUMNS)] for sentence, counts in by_sentence.items()]
    return pd.DataFrame(rows, columns=["sentence_id", *COUNT_COLUMNS])


def pooled(n_gold: Any, n_pred: Any, matched: Any, matched_labeled: Any) -> Any:
    """The ArgumentCounts of sentences' count columns summed (UA/LA over all their predicates)."""
    from factlab.models.qasem.evaluation import ArgumentCounts

    return ArgumentCounts(int(n_gold.sum()), int(n_pred.sum()), int(matched.sum()), int(matched_labeled.sum()))


def f1_of_sums(labeled: bool):
    """UA-F1 (or LA-F1) of summed counts: the statistic a sentence bootstrap resamples."""

    def statistic(*columns: Any) -> float:
        counts = pooled(*columns)
        return counts.labeled_f1 if labeled else counts.unlabeled_f1

    return statistic


def bootstrap_rows(name: str, per_sentence: pd.DataFrame, resamples: int, confidence: float, seed: int) -> list[dict]:
    """Sentence-bootstrap percentile CIs of UA-F1 and LA-F1; for UA-F1 also the share of resamples
    above the published T5-small number (the evidence behind "above the published parser")."""
    import numpy as np

    from factlab.metaeval.bootstrap import bootstrap_distribution, percentile_interval

    arrays = [per_sentence[column].to_numpy() for column in COUNT_COLUMNS]
    rows = []
    for statistic_name, labeled in (("unlabeled_f1", False), ("labeled_f1", True)):
        statistic = f1_of_sums(labeled)
        # One set of resamples serves the interval and the share above the published number.
        values = bootstrap_distribution(statistic, *arrays, n_resamples=resamples, rng=np.random.default_rng(seed)).values
        low, high = percentile_interval(values, confidence)
        published = PUBLISHED_T5_SMALL_UA_F1.get(name) if not labeled else None
        rows.append(
            {
                "dataset": name,
                "statistic": statistic_name,
                "estimate": statistic(*arrays),
                "low": low,
                "high": high,
                "confidence": confidence,
                "n_sentences": len(per_sentence),
                "resamples": resamples,
                "seed": seed,
                "published_t5_small": published if published is not None else float("nan"),
                "share_above_published": float(np.mean(values > published)) if published is not None else float("nan"),
            }
        )
    return rows


def register(commands: Any) -> None:
    evaluate = commands.add_parser("qasem-parser", help="score a trained QASem parser")
    evaluate.add_argument("--model-dir", required=True)
    evaluate.add_argument("--qasrl-gs", required=True)
    evaluate.add_argument("--qanom", required=True)
    evaluate.add_argument("--consistency-responses", required=True, help="results/data/qasem_consistency.parquet")
    evaluate.add_argument("--consistency-qas", required=True, help="results/data/qasem_consistency_qas.parquet")
    evaluate.add_argument("--out-dir", required=True)
    evaluate.add_argument("--iou-threshold", type=float, required=True)
    add_bootstrap_arguments(evaluate, "sentence")
    evaluate.add_argument("--max-sentences", type=int, required=True, help="first n sentences per set (0 = all; smoke runs)")
    evaluate.add_argument("--batch-size", type=int, required=True)
    evaluate.add_argument("--threads", type=int, required=True)
    add_device_arguments(evaluate, precision=False)
    evaluate.set_defaults(func=run_evaluate)


def limited(sentences: list[Any], max_sentences: int) -> list[Any]:
    return sentences[:max_sentences] if max_sentences > 0 else sentences


def run_evaluate(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.models.qasem.benchmark import (
        consistency_coverage,
        detection_scores,
        gold_arguments,
        gold_predicates,
        predicted_arguments,
        predictions_table,
    )
    from factlab.models.qasem.data import count_arguments, gold_sentences
    from factlab.models.qasem.parser import FactlabQASemParser

    set_threads(args.threads)
    if not 0 < args.iou_threshold <= 1:
        raise FactlabError(f"--iou-threshold must be in (0, 1], got {args.iou_threshold}")
    parser = FactlabQASemParser.load(args.model_dir, device=args.device, batch_size=args.batch_size, copular=False)
    tables = {"qasrl_gs": pd.read_parquet(args.qasrl_gs), "qanom": pd.read_parquet(args.qanom)}
    out = Path(args.out_dir)
    rows, detection, intervals, metrics = [], [], [], {}
    for name, source, split in TEST_SETS:
        sentences, gold_counts = gold_sentences(tables[source], source, split)
        sentences = limited(sentences, args.max_sentences)
        started = time.perf_counter()
        parser.reset_counts()
        # As benchmark.score_on_gold, keeping the per-sentence counts for the bootstrap.
        parses = parser.parse([s.tokens for s in sentences], predicates=[gold_predicates(s) for s in sentences])
        ids = [s.sentence_id for s in sentences]
        per_sentence = sentence_counts(predicted_arguments(ids, parses), gold_arguments(sentences), args.iou_threshold)
        counts = pooled(*(per_sentence[column] for column in COUNT_COLUMNS))
        predictions = predictions_table(ids, parses)
        seconds = time.perf_counter() - started
        intervals += bootstrap_rows(name, per_sentence, args.resamples, args.confidence, args.seed)
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
    write_text(pd.DataFrame(intervals).to_csv(index=False), out / "bootstrap.csv")
    for row in intervals:
        metrics[row["dataset"]][f"{row['statistic']}_ci"] = [round(row["low"], 4), round(row["high"], 4)]
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
