"""`factlab metaeval qa-detection`: QASemConsistency's QA-level detection for every factlab scorer.

The protocol of Cattan et al. (2024): each gold QA of `qasem_consistency_qas` (label = majority of
its 3 votes, 1 = supported) is scored against the response's source, and a QA is predicted supported
iff its score >= 0.5, with no threshold tuning; balanced accuracy and ROC AUC per task (CLIFF,
FActScore, Verifiability) on the test split. Rows per (scorer, task, split), tasks also pooled (`all`):

* every score-stage scorer of the `qasem_consistency_qas` benchmark (`results/score/qasem_consistency_qas/
  <scorer>.parquet`), which reads the QA as the benchmark's output text (`question answer`; a scorer that
  splits outputs into sentences sees the question and the answer as two);
* `qasem_consistency`: the QASemConsistency scorer's own reading of each gold QA (one hypothesis
  `question + " " + answer`, max over source chunks: the `units` of its gold-QA table, rule
  `score_qa_decomposition`), the paper's protocol.

Besides the untuned `bacc_fixed05`, `bacc_dev_tuned` applies one threshold per scorer tuned on the dev
split (its tasks pooled) to the test split: the benchmark's own validation data, so the test rows stay
untouched by tuning (on the dev rows it would be in-sample, so it is left empty there). ROC AUC has a
percentile bootstrap CI that resamples source documents, as the detection table's document bootstrap does:
the QAs of one response are dependent, and so are the responses of one source (CLIFF and FActScore give two
systems' outputs per source, Verifiability several responses per source text). The balanced accuracy at 0.5
has an interval from the same resampling, so a published number can be read against it. `qa_detection_published.csv`
holds the published balanced accuracies, kept to compare with only; `metrics.json` (`dvc metrics show`) the test
split's balanced accuracy at 0.5 and ROC AUC per scorer and task, and per task the best scorer's beside the published.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments
from factlab.errors import DataError
from factlab.io import write_json, write_text
from factlab.metaeval.analyses.detection_command import best_candidates, discrimination, grouped_interval
from factlab.metaeval.analyses.qa_decomposition_command import ALL, unit_rows
from factlab.metaeval.arguments import headline_number

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

PROTOCOL_SCORER = "qasem_consistency"
TUNING_SPLIT = "dev"  # the benchmark's validation split (upstream data/dev.jsonl)
COLUMNS = [
    "scorer",
    "task",
    "split",
    "sampled",
    "n",
    "n_unscored",
    "supported",
    "roc_auc",
    "roc_auc_ci_low",
    "roc_auc_ci_high",
    "bacc_fixed05",
    "bacc_fixed05_ci_low",
    "bacc_fixed05_ci_high",
    "threshold_dev_tuned",
    "bacc_dev_tuned",
]
PUBLISHED_SOURCE = "Cattan et al. (2024), QASemConsistency, QA-level balanced accuracy at 0.5 on the test split"
# Published balanced accuracy x 100 at s >= 0.5 on the test split, per task (CLIFF, FActScore, Verifiability).
PUBLISHED_BACC_X100: dict[str, dict[str, float]] = {
    "TRUE-11B": {"cliff": 61.4, "factscore": 72.5, "verifiability": 68.5},
    "MiniCheck": {"cliff": 70.4, "factscore": 78.0, "verifiability": 76.3},
}
PUBLISHED_SPLIT = "test"


GOLD_COLUMNS = ("example_id", "source", "task", "split", "label")


def gold_qa_scores(gold_qas: pd.DataFrame, scores: pd.DataFrame, what: str, gold_file: str) -> pd.DataFrame:
    """The gold QAs with one scorer's score (NaN where it gave none); every scored id must be a gold QA, once."""
    for column in GOLD_COLUMNS:
        if column not in gold_qas.columns:
            raise DataError(f"the gold QA table lacks {column!r}", file=gold_file, field=column)
    for column in ("example_id", "score"):
        if column not in scores.columns:
            raise DataError(f"the score table lacks {column!r}", file=what, field=column)
    repeated = scores["example_id"].duplicated()
    if repeated.any():
        raise DataError("QA scored twice", file=what, record=str(scores.loc[repeated, "example_id"].iloc[0]), field="example_id")
    unknown = sorted(set(scores["example_id"]) - set(gold_qas["example_id"]))
    if unknown:
        raise DataError(
            "scored QA is not a gold QA of qasem_consistency_qas", file=what, record=str(unknown[0]), field="example_id"
        )
    joined = gold_qas[list(GOLD_COLUMNS)].merge(scores[["example_id", "score"]], on="example_id", how="left")
    return joined[joined["label"].notna()].assign(label=lambda frame: frame["label"].astype(int))


def protocol_scores(gold_qa_table: pd.DataFrame, what: str) -> pd.DataFrame:
    """`example_id, score` per gold QA from the QASemConsistency scorer's gold-QA table (its `qa` units)."""
    units = unit_rows(gold_qa_table, "qa", what)
    if units["qa_id"].duplicated().any():
        raise DataError(
            "a gold QA is scored twice", file=what, record=str(units.loc[units["qa_id"].duplicated(), "qa_id"].iloc[0])
        )
    # a unit's example_id is its response; the gold QA's own id is its qa_id
    return units[["qa_id", "score"]].rename(columns={"qa_id": "example_id"})


def detection_row(
    frame: pd.DataFrame, threshold: float | None, *, resamples: int, confidence: float, seed: int, name: str
) -> dict[str, Any]:
    """n, AUC with a source-bootstrap CI, and balanced accuracy at 0.5 and at `threshold` (NaN: one class, or no threshold)."""
    import numpy as np

    scored = frame.dropna(subset=["score"])
    row: dict[str, Any] = dict.fromkeys(COLUMNS[4:], np.nan)
    row.update(n=len(scored), n_unscored=len(frame) - len(scored), supported=int(scored["label"].sum()))
    row["threshold_dev_tuned"] = np.nan if threshold is None else threshold
    if scored["label"].nunique() < 2:
        return row
    statistics = discrimination(
        scored, threshold, resamples=resamples, confidence=confidence, seed=seed, name=name, groups="source"
    )
    row.update(
        {column: statistics.get(column, np.nan) for column in ("roc_auc", "roc_auc_ci_low", "roc_auc_ci_high", "bacc_fixed05")}
    )
    row["bacc_dev_tuned"] = statistics.get("bacc_val_tuned", np.nan)
    row["bacc_fixed05_ci_low"], row["bacc_fixed05_ci_high"] = grouped_interval(
        fixed05_balanced_accuracy,
        scored["label"].to_numpy(dtype=int),
        scored["score"].to_numpy(dtype=float),
        scored["source"].astype(str).to_numpy(),
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        what=f"{name} balanced accuracy",
    )
    return row


def fixed05_balanced_accuracy(labels: np.ndarray, scores: np.ndarray) -> float:
    from factlab.metaeval.detection import fixed05

    return fixed05(labels, scores).balanced_accuracy


def qa_detection(
    scored: Mapping[str, pd.DataFrame], *, resamples: int, confidence: float, seed: int, sampled: Sequence[str] = ()
) -> pd.DataFrame:
    """Per scorer (its gold QAs with scores, `gold_qa_scores`), split and task (and `all`): COLUMNS; `sampled`: the
    scorers that scored a seeded sample of the QAs (score.sample)."""
    import pandas as pd

    from factlab.metaeval.detection import validation_threshold

    rows = []
    for scorer, frame in scored.items():
        # one threshold per scorer, tuned on the dev QAs of every task pooled
        threshold = validation_threshold({TUNING_SPLIT: frame[frame["split"] == TUNING_SPLIT]})
        for split in sorted(set(frame["split"])):
            in_split = frame[frame["split"] == split]
            for task in [*sorted(set(in_split["task"])), ALL]:
                part = in_split if task == ALL else in_split[in_split["task"] == task]
                # on the dev rows a dev-tuned threshold would be scored on the data it was tuned on
                statistics = detection_row(
                    part,
                    None if split == TUNING_SPLIT else threshold,
                    resamples=resamples,
                    confidence=confidence,
                    seed=seed,
                    name=f"{scorer} on {task} {split}",
                )
                rows.append({"scorer": scorer, "task": task, "split": split, "sampled": scorer in sampled, **statistics})
    return pd.DataFrame(rows, columns=COLUMNS)


def published_table() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(
        [
            {"system": system, "task": task, "split": PUBLISHED_SPLIT, "bacc_fixed05_x100": value, "source": PUBLISHED_SOURCE}
            for system, by_task in PUBLISHED_BACC_X100.items()
            for task, value in by_task.items()
        ]
    )


def headline_metrics(table: pd.DataFrame) -> dict[str, Any]:
    """On the published split (test): per scorer and task, the balanced accuracy at 0.5 and the ROC AUC; per task, the
    scorer with the highest balanced accuracy at 0.5 beside the published ones (fractions, as the table's), among those
    that scored every QA where any did."""
    test = table[table["split"] == PUBLISHED_SPLIT]
    scorers: dict[str, dict[str, Any]] = {}
    for row in test.itertuples(index=False):
        scorers.setdefault(str(row.scorer), {})[str(row.task)] = {
            "bacc_fixed05": headline_number(row.bacc_fixed05),
            "roc_auc": headline_number(row.roc_auc),
        }
    best: dict[str, Any] = {}
    for task, rows in test.dropna(subset=["bacc_fixed05"]).groupby("task", sort=True):
        candidates = best_candidates(rows)  # a BAcc on a seeded sample is not set beside the published ones
        top = candidates.loc[candidates["bacc_fixed05"].idxmax()]
        published = {
            system: headline_number(by_task[str(task)] / 100)
            for system, by_task in PUBLISHED_BACC_X100.items()
            if task in by_task
        }
        best[str(task)] = {
            "scorer": str(top["scorer"]),
            "bacc_fixed05": headline_number(top["bacc_fixed05"]),
            "published": published,
        }
    return {"split": PUBLISHED_SPLIT, "scorers": scorers, "best_bacc_fixed05": best}


def scorer_name(path: str) -> str:
    """results/score/qasem_consistency_qas/<scorer>.parquet -> <scorer>."""
    return Path(path).stem


def load_scored(gold_path: str, score_paths: Sequence[str], protocol_path: str | None) -> dict[str, pd.DataFrame]:
    import pandas as pd

    gold_qas = pd.read_parquet(gold_path)
    scored: dict[str, pd.DataFrame] = {}
    for path in score_paths:
        if scorer_name(path) in scored:
            raise DataError(f"{scorer_name(path)!r} is given twice (--scores and --sampled-scores)", file=path)
        scored[scorer_name(path)] = gold_qa_scores(gold_qas, pd.read_parquet(path), path, gold_path)
    if protocol_path is not None:
        if PROTOCOL_SCORER in scored:
            raise DataError(f"{PROTOCOL_SCORER!r} given both as a scorer table and as --protocol-scores", file=protocol_path)
        protocol = protocol_scores(pd.read_parquet(protocol_path), protocol_path)
        scored[PROTOCOL_SCORER] = gold_qa_scores(gold_qas, protocol, protocol_path, gold_path)
    return scored


def run_qa_detection(args: argparse.Namespace) -> None:
    scored = load_scored(args.gold_qas, [*args.scores, *args.sampled_scores], args.protocol_scores)
    if not scored:
        raise DataError("no score table given (--scores or --protocol-scores)", field="scores")
    sampled = [scorer_name(path) for path in args.sampled_scores]
    table = qa_detection(scored, resamples=args.resamples, confidence=args.confidence, seed=args.seed, sampled=sampled)
    write_text(table.to_csv(index=False, float_format="%.6g"), args.out)
    write_text(published_table().to_csv(index=False), args.out_published)
    write_json(headline_metrics(table), args.out_metrics)


def register(commands: Any) -> None:
    command = commands.add_parser("qa-detection", help="QASemConsistency QA-level detection (BAcc at 0.5, AUC) of every scorer")
    command.add_argument(
        "--gold-qas", required=True, help="results/data/qasem_consistency_qas.parquet (QA labels, tasks, splits)"
    )
    command.add_argument("--scores", nargs="*", required=True, help="results/score/qasem_consistency_qas/<scorer>.parquet")
    command.add_argument(
        "--sampled-scores", nargs="*", default=[], help="score tables of a seeded sample of the QAs (score.sample)"
    )
    command.add_argument(
        "--protocol-scores",
        help="the QASemConsistency scorer's gold-QA table (results/score/qasem_consistency/qa_decomposition.gold_qas.parquet)",
    )
    add_bootstrap_arguments(command)
    command.add_argument("--out", required=True, help="CSV: qa_detection.csv")
    command.add_argument("--out-published", required=True, help="CSV: the published balanced accuracies")
    command.add_argument("--out-metrics", required=True, help="metrics.json: the test split's headline numbers")
    command.set_defaults(func=run_qa_detection)
