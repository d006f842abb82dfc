"""ScreenEval detection analyses rebuilt from SCALE's released score files (Lattimer et al., 2023).

Input: the `screeneval_published` table (one row per experiment, metric and example; label 1 =
consistent; see factlab.data.adapters.scale_published). Outputs, one function each:

* `detection_table` — one row per released score (metric), with
  - on *all* items, as SCALE reports: Pearson and Kendall τ-b between score and label, ROC AUC
    (positive class = consistent), ECE with K equal-width bins (`ece_equal_width_<K>`; NaN with
    an `ece_note` when the scores are not in [0, 1], since ECE reads a score as P(consistent)) and
    SCALE's min-max variant for every metric (`ece_scale_minmax_<K>`, named as such);
  - on the *test* part of a fixed validation/test split: balanced accuracy under each named
    threshold policy (`bacc_fixed05`, `bacc_val_tuned` with the threshold tuned on the validation
    part, `bacc_oracle` tuned on the test part itself — optimistic, labelled "oracle").
  The column `computed_on` says this in every row.
* `stratified_split` — the split: stratified by label, `val_fraction` of each class to
  validation, drawn from `seed`. Items are the `example_index` of an *item set*: all 614-example
  files share one item set (same labels in the same order), the three 226-example files
  (experiment `accuracy_226`) another, so each gets its own split.
* `chunk_size_table` — AUC and runtime of SCALE-large against its chunk size (the
  `scale_large_<size>` files of experiment `chunk_size`).
* `reliability_table` — reliability-diagram bins of a few metrics.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.errors import ConfigError, DataError
from factlab.metaeval.variants import THRESHOLD_POLICIES, ThresholdPolicy

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

ITEM_KEY = ["item_set", "example_index"]
CHUNK_SIZE_METRIC = re.compile(r"^scale_large_(?P<size>\d+)$")
# Metrics shown in the reliability diagrams: SCALE at two sizes and the two NLI baselines whose
# scores are probabilities (all in [0, 1]); the other metrics are not probabilities.
RELIABILITY_METRICS = ("scale_large", "scale_xl", "summac_conv", "sentli_large")
RELIABILITY_EXPERIMENT = "accuracy"
# SCALE's own AUCs for the chunk-size experiment: the printed output of
# asappresearch/scale-score experiments/chunk_size/chunk_size_graph.ipynb (sklearn roc_auc_score
# on the same files), kept to compare with; not an input of any statistic.
SCALE_NOTEBOOK_CHUNK_SIZE_AUC = {
    100: 0.6662747732616727,
    300: 0.7198382040085096,
    500: 0.735415966857015,
    750: 0.7545347665435,
    1000: 0.7614348897099987,
    2000: 0.7561723211286531,
    3000: 0.7603571828462657,
}
SCALE_NOTEBOOK_SOURCE = "asappresearch/scale-score experiments/chunk_size/chunk_size_graph.ipynb (printed output)"


def item_set_name(n_examples: int) -> str:
    """Files with the same number of examples list the same items (checked in `item_labels`)."""
    return f"n{n_examples}"


def with_item_set(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(item_set=frame["n_examples"].map(item_set_name))


def item_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per item (item_set, example_index, label); raises if two files disagree on a label."""
    rows = with_item_set(frame)[[*ITEM_KEY, "label", "file"]]
    disagreeing = rows.groupby(ITEM_KEY)["label"].nunique()
    if (disagreeing > 1).any():
        item_set, index = disagreeing[disagreeing > 1].index[0]
        files = sorted(rows.loc[(rows["item_set"] == item_set) & (rows["example_index"] == index), "file"].unique())
        raise DataError(f"files {files} give different labels to example {index} of item set {item_set}", field="label")
    return rows.drop_duplicates(ITEM_KEY)[[*ITEM_KEY, "label"]].sort_values(ITEM_KEY).reset_index(drop=True)


def stratified_split(items: pd.DataFrame, val_fraction: float, seed: int) -> pd.DataFrame:
    """Add `split` ("val"/"test"): per item set and label, round(val_fraction · count) items go to val.

    Each item set draws from its own generator seeded with `seed`, classes in sorted order, so
    the split depends only on the item set's labels, `val_fraction` and `seed`.
    """
    import numpy as np
    import pandas as pd

    if not 0 < val_fraction < 1:
        raise ConfigError(f"val_fraction must lie in (0, 1), got {val_fraction}")
    parts = []
    for _, group in items.groupby("item_set", sort=True):
        rng = np.random.default_rng(seed)
        split = pd.Series("test", index=group.index)
        for _, members in group.groupby("label", sort=True):
            n_val = int(round(val_fraction * len(members)))
            if n_val == 0:
                raise ConfigError(
                    f"metaeval.screeneval.val_fraction {val_fraction} leaves no validation item of label "
                    f"{members['label'].iloc[0]} in item set {group['item_set'].iloc[0]!r} ({len(members)} items)"
                )
            split[rng.permutation(members.index.to_numpy())[:n_val]] = "val"
        parts.append(group.assign(split=split))
    return pd.concat(parts).sort_values(ITEM_KEY).reset_index(drop=True)


def outside_unit_interval_note(scores: np.ndarray) -> str:
    """Why ECE is undefined for these scores, or "" when they all lie in [0, 1]."""
    import numpy as np

    low, high = float(np.min(scores)), float(np.max(scores))
    if low >= 0.0 and high <= 1.0:
        return ""
    return f"scores span [{low:.6g}, {high:.6g}], outside [0, 1]: not a probability, equal-width ECE undefined"


def calibration_columns(labels: np.ndarray, scores: np.ndarray, n_bins: int) -> dict[str, Any]:
    """Equal-width ECE (NaN + note outside [0, 1]) and SCALE's min-max variant, named with K."""
    from factlab.metaeval import expected_calibration_error

    note = outside_unit_interval_note(scores)
    equal_width = float("nan") if note else expected_calibration_error(labels, scores, n_bins=n_bins).ece
    minmax = expected_calibration_error(labels, scores, n_bins=n_bins, binning="scale_minmax")
    return {
        f"ece_equal_width_{n_bins}": equal_width,
        "ece_note": note,
        f"ece_scale_minmax_{n_bins}": minmax.ece,
        "ece_scale_minmax_n_excluded": minmax.n_excluded,
    }


def threshold_columns(
    labels: np.ndarray, scores: np.ndarray, is_val: np.ndarray, policies: Sequence[ThresholdPolicy]
) -> dict[str, Any]:
    """Balanced accuracy and threshold of each policy on the test part (val_tuned tunes on val)."""
    from factlab.metaeval import threshold_policy_result

    test = ~is_val
    columns: dict[str, Any] = {"n_val": int(is_val.sum()), "n_test": int(test.sum())}
    for policy in policies:
        validation = {"val_true": labels[is_val], "val_score": scores[is_val]} if policy == "val_tuned" else {}
        result = threshold_policy_result(policy, labels[test], scores[test], **validation)
        columns[f"bacc_{policy}"] = result.balanced_accuracy
        columns[f"threshold_{policy}"] = result.threshold
    return columns


def computed_on_note(policies: Sequence[ThresholdPolicy]) -> str:
    tuned = "; val_tuned threshold tuned on the n_val validation items" if "val_tuned" in policies else ""
    oracle = "; oracle threshold tuned on the test items themselves (optimistic)" if "oracle" in policies else ""
    return f"pearson, kendall, roc_auc, ece_*: all n items; bacc_*, threshold_*: the n_test test items{tuned}{oracle}"


def detection_table(
    frame: pd.DataFrame, split: pd.DataFrame, *, ece_bins: int, policies: Sequence[ThresholdPolicy] = THRESHOLD_POLICIES
) -> pd.DataFrame:
    """One row per (experiment, metric): correlations, AUC, ECE on all items; balanced accuracy on test."""
    import numpy as np
    import pandas as pd

    from factlab.metaeval import kendall, pearson, roc_auc

    unknown = sorted(set(policies) - set(THRESHOLD_POLICIES))
    if unknown:
        raise ConfigError(f"unknown threshold policies {unknown}; choose from {THRESHOLD_POLICIES}")
    rows = with_item_set(frame).merge(split[[*ITEM_KEY, "split"]], on=ITEM_KEY, how="left", validate="many_to_one")
    if rows["split"].isna().any():
        raise DataError("some examples have no split; build the split from the same table", field="example_index")
    records = []
    for (experiment, metric), group in rows.groupby(["experiment", "metric"], sort=True):
        group = group.sort_values("example_index")
        labels = group["label"].to_numpy(dtype=np.int64)
        scores = group["score"].to_numpy(dtype=float)
        records.append(
            {
                "metric": metric,
                "experiment": experiment,
                "file": group["file"].iloc[0],
                "n": len(group),
                "pearson": pearson(scores, labels).r,
                "kendall": kendall(scores, labels).r,
                "roc_auc": roc_auc(labels, scores),
                "runtime_s": float(group["runtime_s"].iloc[0]),
                **calibration_columns(labels, scores, ece_bins),
                **threshold_columns(labels, scores, group["split"].eq("val").to_numpy(), policies),
                "score_min": float(scores.min()),
                "score_max": float(scores.max()),
                "positive_share": float(labels.mean()),
                "computed_on": computed_on_note(policies),
            }
        )
    return pd.DataFrame.from_records(records)


def chunk_size_table(detection: pd.DataFrame) -> pd.DataFrame:
    """AUC and runtime of SCALE-large per chunk size (experiment `chunk_size`), by chunk size."""
    import pandas as pd

    rows = []
    for row in detection[detection["experiment"] == "chunk_size"].itertuples(index=False):
        match = CHUNK_SIZE_METRIC.match(row.metric)
        if match:
            rows.append({"chunk_size": int(match["size"]), "roc_auc": row.roc_auc, "runtime_s": row.runtime_s})
    if not rows:
        raise DataError("no scale_large_<chunk size> metric in experiment chunk_size", field="metric")
    return pd.DataFrame(rows).sort_values("chunk_size").reset_index(drop=True)


def published_comparison(chunk_sizes: pd.DataFrame) -> pd.DataFrame:
    """Our chunk-size AUCs beside the ones SCALE's notebook printed for the same files."""
    import pandas as pd

    published = pd.DataFrame(
        {"chunk_size": list(SCALE_NOTEBOOK_CHUNK_SIZE_AUC), "published_roc_auc": list(SCALE_NOTEBOOK_CHUNK_SIZE_AUC.values())}
    )
    table = chunk_sizes[["chunk_size", "roc_auc"]].merge(published, on="chunk_size", how="outer", validate="one_to_one")
    table.insert(0, "metric", "scale_large_" + table["chunk_size"].astype(str))
    return table.assign(difference=table["roc_auc"] - table["published_roc_auc"], source=SCALE_NOTEBOOK_SOURCE)


def reliability_table(
    frame: pd.DataFrame, *, n_bins: int, metrics: Sequence[str] = RELIABILITY_METRICS, experiment: str = RELIABILITY_EXPERIMENT
) -> pd.DataFrame:
    """Equal-width reliability bins (count, mean score, share consistent) of each metric, on all items."""
    import pandas as pd

    from factlab.metaeval import reliability_records

    rows = []
    for metric in metrics:
        group = frame[(frame["experiment"] == experiment) & (frame["metric"] == metric)]
        if group.empty:
            raise DataError(f"no scores of metric {metric!r} in experiment {experiment!r}", field="metric")
        rows += [{"metric": metric, **record} for record in reliability_records(group["label"], group["score"], n_bins=n_bins)]
    return pd.DataFrame(rows)


def headline_metrics(detection: pd.DataFrame, split: pd.DataFrame, *, ece_bins: int) -> dict[str, Any]:
    """metrics.json: per metric of the main (614-item accuracy) experiment, AUC, ECE and val-tuned bacc."""
    main = detection[detection["experiment"] == "accuracy"].set_index("metric")
    ece = f"ece_equal_width_{ece_bins}"
    metrics: dict[str, Any] = {
        "roc_auc": main["roc_auc"].round(6).to_dict(),
        ece: main[ece].dropna().round(6).to_dict(),
        "split_sizes": split.groupby(["item_set", "split"]).size().unstack().to_dict(orient="index"),
    }
    for column in [c for c in main.columns if c.startswith("bacc_")]:
        metrics[column] = main[column].round(6).to_dict()
    best = main["roc_auc"].idxmax()
    metrics["best_roc_auc"] = {"metric": best, "roc_auc": round(float(main.loc[best, "roc_auc"]), 6)}
    return metrics


# --- command line -------------------------------------------------------------------------


def register(commands: Any) -> None:
    evaluate = commands.add_parser("screeneval", help="ScreenEval detection tables from SCALE's released scores")
    evaluate.add_argument("--data", required=True, help="results/data/screeneval_published.parquet")
    evaluate.add_argument("--out-dir", required=True, help="writes detection, split, chunk_size, reliability csv + metrics.json")
    evaluate.add_argument("--ece-bins", type=int, required=True)
    evaluate.add_argument("--reliability-bins", type=int, required=True)
    evaluate.add_argument("--val-fraction", type=float, required=True)
    evaluate.add_argument("--seed", type=int, required=True)
    evaluate.add_argument("--policies", nargs="+", required=True, choices=THRESHOLD_POLICIES)
    evaluate.set_defaults(func=run_screeneval)


def run_screeneval(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.io import write_json, write_text

    frame = pd.read_parquet(args.data)
    split = stratified_split(item_labels(frame), args.val_fraction, args.seed)
    detection = detection_table(frame, split, ece_bins=args.ece_bins, policies=args.policies)
    chunk_sizes = chunk_size_table(detection)
    out = Path(args.out_dir)
    write_text(detection.to_csv(index=False), out / "detection.csv")
    write_text(split.to_csv(index=False), out / "split.csv")
    write_text(chunk_sizes.to_csv(index=False), out / "chunk_size.csv")
    write_text(published_comparison(chunk_sizes).to_csv(index=False), out / "published_comparison.csv")
    write_text(reliability_table(frame, n_bins=args.reliability_bins).to_csv(index=False), out / "reliability.csv")
    write_json(headline_metrics(detection, split, ece_bins=args.ece_bins), out / "metrics.json")
