"""Paper table of TRUE's released baseline outputs (results/metaeval/true_published/detection.csv)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from factlab.metaeval.analyses.published.true_published_command import MEAN_8, MEAN_ALL, METRICS, NLI_TRAINING_SETS
from factlab.paper import captions
from factlab.paper.tables import write_tables

if TYPE_CHECKING:
    import pandas as pd


def _mean_rows(wide: pd.DataFrame) -> pd.DataFrame:
    # skipna=False: a mean over the sets where ECE happens to be defined would not be comparable.
    import numpy as np
    import pandas as pd

    everything = wide.mean(numeric_only=True, skipna=False).to_frame().T.assign(dataset=MEAN_ALL, n=wide["n"].sum())
    kept = wide[~wide["dataset"].isin(NLI_TRAINING_SETS)]
    eight = kept.mean(numeric_only=True, skipna=False).to_frame().T.assign(dataset=MEAN_8, n=kept["n"].sum())
    return pd.concat([everything, eight], ignore_index=True).assign(positive_share=np.nan)


def true_published_layout(detection: pd.DataFrame, *, ece_bins: int) -> pd.DataFrame:
    """Rows = TRUE sets then two mean rows; AUC × 100 (1 decimal) and equal-width ECE (3 decimals) per metric.

    Cells are formatted strings so both table formats show TRUE's precision; "--" = undefined ECE.
    """
    import pandas as pd

    ece = f"ece_equal_width_{ece_bins}"
    metrics = [m for m in METRICS if m in set(detection["metric"])]
    per_set = detection.pivot(index="dataset", columns="metric", values=["roc_auc", ece])
    wide = pd.DataFrame({"dataset": per_set.index})
    sizes = detection.drop_duplicates("dataset").set_index("dataset")
    wide["n"] = wide["dataset"].map(sizes["n"]).to_numpy()
    wide["positive_share"] = wide["dataset"].map(sizes["positive_share"]).to_numpy()
    for metric in metrics:
        wide[f"AUC {metric}"] = 100 * per_set[("roc_auc", metric)].to_numpy()
    for metric in metrics:
        wide[f"ECE {metric}"] = per_set[(ece, metric)].to_numpy()
    wide = pd.concat([wide, _mean_rows(wide)], ignore_index=True)
    table = pd.DataFrame({"set": wide["dataset"], "n": wide["n"].astype(int).astype(str)})
    table["% consistent"] = [_fmt(100 * v, 1) for v in wide["positive_share"]]
    for column in wide.columns:
        if column.startswith("AUC "):
            table[column] = [_fmt(v, 1) for v in wide[column]]
        elif column.startswith("ECE "):
            table[column] = [_fmt(v, 3) for v in wide[column]]
    return table


def _fmt(value: float, decimals: int) -> str:
    import pandas as pd

    return "--" if pd.isna(value) else f"{value:.{decimals}f}"


def register(commands: Any) -> None:
    command = commands.add_parser("true-published-table", help="TRUE AUC/ECE table of the released baselines")
    command.add_argument("--detection", required=True, help="detection.csv")
    command.add_argument("--ece-bins", type=int, required=True)
    command.add_argument("--out-md", required=True)
    command.add_argument("--out-tex", required=True)
    command.set_defaults(func=run_table)


def run_table(args: argparse.Namespace) -> None:
    import pandas as pd

    table = true_published_layout(pd.read_csv(args.detection), ece_bins=args.ece_bins)
    write_tables(table, args.out_md, args.out_tex, caption=captions.true_published(args.ece_bins), label="tab:true-published")
