"""`factlab metaeval detection`: factlab's scorers as binary detectors of inconsistent outputs.

Per (scorer, benchmark): ROC AUC with a percentile bootstrap CI (examples resampled by source
document, so summaries of one article move together), ECE (equal-width bins), balanced accuracy at
0.5 (`fixed05`) and at a threshold tuned on validation data (`val_tuned`): the SummaC validation
cuts (or whichever `--validation` benchmarks were scored), pooled, the threshold recorded in the
table. A benchmark whose documents overlap the tuning data is marked (`overlaps_tuning`): TRUE's
FRANK set is FRANK's validation split, and SummaC's cuts share documents with several test sets.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from factlab.commands import write_report
from factlab.errors import FactlabError
from factlab.io import write_text
from factlab.metaeval.bootstrap import bootstrap_ci
from factlab.metaeval.calibration import expected_calibration_error
from factlab.metaeval.detection import balanced_accuracy, roc_auc, tune_threshold
from factlab.metaeval.errors import StatisticsError

LOG = logging.getLogger(__name__)
COLUMNS = (
    "scorer",
    "benchmark",
    "n",
    "n_unscored",
    "roc_auc",
    "roc_auc_ci_low",
    "roc_auc_ci_high",
    "ece",
    "bacc_val_tuned",
    "bacc_fixed05",
    "threshold_val_tuned",
    "overlaps_tuning",
)


def register(commands: Any) -> None:
    detection = commands.add_parser("detection", help="AUC, ECE and balanced accuracy of factlab's scorers")
    detection.add_argument("--scores", nargs="+", required=True, help="results/score/<benchmark>/<scorer>.parquet")
    detection.add_argument("--data", nargs="+", required=True, help="results/data/<benchmark>.parquet of the same benchmarks")
    detection.add_argument("--validation", nargs="*", default=[], help="benchmarks whose scores tune the val_tuned threshold")
    detection.add_argument("--resamples", type=int, required=True)
    detection.add_argument("--confidence", type=float, required=True)
    detection.add_argument("--seed", type=int, required=True)
    detection.add_argument("--ece-bins", type=int, required=True)
    detection.add_argument("--out", required=True, help="CSV")
    detection.add_argument("--report", required=True, help="JSON: thresholds and what was left out")
    detection.set_defaults(func=run_detection)


def labelled_scores(data: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Scores joined to labels and documents; every scored example must be in the benchmark."""
    joined = scores[["example_id", "score"]].merge(
        data[["example_id", "doc_id", "source", "label"]], on="example_id", how="left", validate="one_to_one"
    )
    if joined["doc_id"].isna().any():
        missing = joined.loc[joined["doc_id"].isna(), "example_id"].iloc[0]
        raise FactlabError(f"scored example {missing!r} is not in the benchmark")
    return joined[joined["label"].notna()]


def validation_threshold(tuning: Mapping[str, pd.DataFrame]) -> float | None:
    frames = [frame.dropna(subset=["score"]) for frame in tuning.values()]
    pooled = pd.concat(frames) if frames else pd.DataFrame()
    if pooled.empty or pooled["label"].nunique() < 2:
        return None
    return tune_threshold(pooled["label"].astype(int).to_numpy(), pooled["score"].to_numpy())


def detection_row(
    scorer: str,
    benchmark: str,
    frame: pd.DataFrame,
    threshold: float | None,
    tuning_sources: set[str],
    *,
    resamples: int,
    confidence: float,
    seed: int,
    ece_bins: int,
) -> dict[str, Any]:
    scored = frame.dropna(subset=["score"])
    labels = scored["label"].astype(int).to_numpy()
    values = scored["score"].to_numpy(dtype=float)
    row: dict[str, Any] = dict.fromkeys(COLUMNS, np.nan)
    row.update(scorer=scorer, benchmark=benchmark, n=len(scored), n_unscored=len(frame) - len(scored))
    row["overlaps_tuning"] = bool(set(scored["source"].astype(str)) & tuning_sources)
    if len(set(labels)) < 2:
        LOG.warning("%s on %s: one class only (%d examples): no AUC", scorer, benchmark, len(labels))
        return row
    row["roc_auc"] = roc_auc(labels, values)
    try:
        ci = bootstrap_ci(
            roc_auc,
            labels,
            values,
            groups=scored["doc_id"].astype(str).to_numpy(),
            n_resamples=resamples,
            confidence=confidence,
            rng=np.random.default_rng(seed),
        )
        row["roc_auc_ci_low"], row["roc_auc_ci_high"] = ci.low, ci.high
    except StatisticsError as error:
        LOG.warning("%s on %s: no AUC interval (%s)", scorer, benchmark, error)
    if values.min() >= 0 and values.max() <= 1:
        row["ece"] = expected_calibration_error(labels, values, n_bins=ece_bins).ece
    row["bacc_fixed05"] = balanced_accuracy(labels, (values >= 0.5).astype(int))
    if threshold is not None:
        row["threshold_val_tuned"] = threshold
        row["bacc_val_tuned"] = balanced_accuracy(labels, (values >= threshold).astype(int))
    return row


def run_detection(args: argparse.Namespace) -> None:
    data = {Path(path).stem: pd.read_parquet(path) for path in args.data}
    by_scorer: dict[str, dict[str, pd.DataFrame]] = {}
    for path in args.scores:
        scorer, benchmark = Path(path).stem, Path(path).parent.name
        if benchmark not in data:
            raise FactlabError(f"{path}: no --data file for benchmark {benchmark!r}")
        by_scorer.setdefault(scorer, {})[benchmark] = labelled_scores(data[benchmark], pd.read_parquet(path))
    rows, report = [], {"validation": sorted(args.validation), "thresholds": {}}
    for scorer, frames in sorted(by_scorer.items()):
        tuning = {name: frame for name, frame in frames.items() if name in args.validation}
        threshold = validation_threshold(tuning)
        report["thresholds"][scorer] = threshold
        # Overlap by source text: doc_ids are benchmark-prefixed, so the same article has a different id in each.
        tuning_sources = {text for frame in tuning.values() for text in frame["source"].astype(str)}
        for benchmark, frame in sorted(frames.items()):
            if benchmark in tuning:
                continue
            rows.append(
                detection_row(
                    scorer,
                    benchmark,
                    frame,
                    threshold,
                    tuning_sources,
                    resamples=args.resamples,
                    confidence=args.confidence,
                    seed=args.seed,
                    ece_bins=args.ece_bins,
                )
            )
    write_text(pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(index=False, float_format="%.6g"), args.out)
    write_report(report, args.report)
