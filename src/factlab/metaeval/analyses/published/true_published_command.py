"""TRUE (Honovich et al., 2022) detection results rebuilt from the baseline scores SCALE released.

Input: the `true_published` table — SummaC-ZS, SummaC-Conv, UniEval and BERTScore-F scores on
the 11 TRUE sets, label 1 = consistent (factlab.data.adapters.scale_published). Outputs:

* `detection_table` — per (metric, set): n, share consistent, ROC AUC (positive = consistent,
  as TRUE), ECE with K equal-width bins (NaN with a note when scores leave [0, 1]: SummaC-ZS lies
  in [−1, 1], BERTScore is rescaled and reaches below 0 and 1 + 1e−6) and SCALE's min-max ECE
  variant for every metric (named `ece_scale_minmax_<K>`). Shared with ScreenEval:
  `calibration_columns`.
* `published_comparison` — our AUCs beside published ones (see PUBLISHED_AUC_X100).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.metaeval.analyses.published.screeneval_command import calibration_columns

if TYPE_CHECKING:
    import pandas as pd

METRICS = ("summac_zs", "summac_conv", "unieval", "bert_score_f")
# Sets that AlignScore (and TRUE's "AVG-OOD"/leaderboard column) leave out of the mean because
# NLI-style scorers train on them; the mean over the other 8 is what those tables report.
NLI_TRAINING_SETS = ("fever", "paws", "vitc")
PUBLISHED_SOURCE = "AlignScore (Zha et al., ACL 2023), TRUE ROC AUC table"
PUBLISHED_MEAN_SOURCE = "yuh-zha/AlignScore README leaderboard, TRUE column (mean of 8 sets)"
# Published ROC AUC × 100 of the same baselines on the TRUE sets (AlignScore's TRUE table; its
# columns SE, PAWS, Q2, VitC, FVR, FRK, DF, MNBM, Q-C, Q-X, BEGIN). Kept to compare with only.
PUBLISHED_AUC_X100: dict[str, dict[str, float]] = {
    "summac_zs": {
        "summeval": 77.6, "paws": 89.0, "q2": 81.8, "vitc": 97.2, "fever": 92.8, "frank": 86.9,
        "dialfact": 87.1, "mnbm": 58.0, "qags_cnndm": 76.0, "qags_xsum": 75.3, "begin": 83.2,
    },
    "summac_conv": {
        "summeval": 79.1, "paws": 88.2, "q2": 77.5, "vitc": 97.5, "fever": 92.0, "frank": 89.0,
        "dialfact": 81.2, "mnbm": 67.2, "qags_cnndm": 77.7, "qags_xsum": 76.0, "begin": 81.6,
    },
    "unieval": {
        "summeval": 81.2, "paws": 80.1, "q2": 70.4, "vitc": 79.1, "fever": 92.1, "frank": 88.1,
        "dialfact": 80.4, "mnbm": 66.8, "qags_cnndm": 86.5, "qags_xsum": 76.7, "begin": 73.6,
    },
}  # fmt: skip
PUBLISHED_MEAN_8_X100 = {"summac_zs": 78.2, "summac_conv": 78.7, "unieval": 78.0, "bert_score_f": 68.6}
MEAN_ALL = "mean (11 sets)"
MEAN_8 = "mean (8 sets, excl. fever, paws, vitc)"


def detection_table(frame: pd.DataFrame, *, ece_bins: int) -> pd.DataFrame:
    """One row per (metric, TRUE set): n, share consistent, ROC AUC and ECE on all its examples."""
    import numpy as np
    import pandas as pd

    from factlab.metaeval import roc_auc

    records = []
    for (metric, dataset), group in frame.groupby(["metric", "dataset"], sort=True):
        labels = group["label"].to_numpy(dtype=np.int64)
        scores = group["score"].to_numpy(dtype=float)
        records.append(
            {
                "metric": metric,
                "dataset": dataset,
                "n": len(group),
                "positive_share": float(labels.mean()),
                "roc_auc": roc_auc(labels, scores),
                **calibration_columns(labels, scores, ece_bins),
                "score_min": float(scores.min()),
                "score_max": float(scores.max()),
            }
        )
    return pd.DataFrame.from_records(records)


def published_comparison(detection: pd.DataFrame) -> pd.DataFrame:
    """Our AUC × 100 beside the published per-set values and the published 8-set means."""
    import pandas as pd

    ours = detection.assign(roc_auc_x100=100 * detection["roc_auc"])[["metric", "dataset", "roc_auc_x100"]]
    rows = [
        {"metric": metric, "dataset": dataset, "published_auc_x100": value, "source": PUBLISHED_SOURCE}
        for metric, by_set in PUBLISHED_AUC_X100.items()
        for dataset, value in by_set.items()
    ]
    table = ours.merge(pd.DataFrame(rows), on=["metric", "dataset"], how="inner", validate="one_to_one")
    kept = ours[~ours["dataset"].isin(NLI_TRAINING_SETS)]
    means = kept.groupby("metric", as_index=False)["roc_auc_x100"].mean().assign(dataset=MEAN_8, source=PUBLISHED_MEAN_SOURCE)
    means["published_auc_x100"] = means["metric"].map(PUBLISHED_MEAN_8_X100)
    table = pd.concat([table, means.dropna(subset=["published_auc_x100"])], ignore_index=True)
    return table.assign(difference=table["roc_auc_x100"] - table["published_auc_x100"])[
        ["metric", "dataset", "roc_auc_x100", "published_auc_x100", "difference", "source"]
    ]


def headline_metrics(detection: pd.DataFrame, comparison: pd.DataFrame) -> dict[str, Any]:
    """metrics.json: mean AUC per metric (11 and 8 sets) and the largest gap to the published AUCs."""
    kept = detection[~detection["dataset"].isin(NLI_TRAINING_SETS)]
    per_set = comparison[comparison["dataset"] != MEAN_8]
    return {
        "mean_roc_auc_11_sets": detection.groupby("metric")["roc_auc"].mean().round(6).to_dict(),
        "mean_roc_auc_8_sets": kept.groupby("metric")["roc_auc"].mean().round(6).to_dict(),
        "max_abs_difference_to_published_auc_x100": per_set["difference"]
        .abs()
        .groupby(per_set["metric"])
        .max()
        .round(3)
        .to_dict(),
        "examples_per_metric": int(detection.groupby("metric")["n"].sum().iloc[0]),
    }


# --- command line -------------------------------------------------------------------------


def register(commands: Any) -> None:
    command = commands.add_parser("true-published", help="TRUE AUC/ECE tables from SCALE's released baseline scores")
    command.add_argument("--data", required=True, help="results/data/true_published.parquet")
    command.add_argument("--out-dir", required=True, help="writes detection.csv, published_comparison.csv, metrics.json")
    command.add_argument("--ece-bins", type=int, required=True)
    command.set_defaults(func=run_true_published)


def run_true_published(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.io import write_json, write_text

    detection = detection_table(pd.read_parquet(args.data), ece_bins=args.ece_bins)
    comparison = published_comparison(detection)
    out = Path(args.out_dir)
    write_text(detection.to_csv(index=False), out / "detection.csv")
    write_text(comparison.to_csv(index=False), out / "published_comparison.csv")
    write_json(headline_metrics(detection, comparison), out / "metrics.json")
