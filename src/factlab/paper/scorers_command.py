"""Tables of factlab's own models and scorers: the aligner's training mixture, and TRUE ROC AUC.

`mixture-table` renders results/models/aligner_data/mixture_report.json; `true-detection-table`
renders results/metaeval/true/auc.csv: factlab's scorers, the published ones (SCALE's released scores, entered as a
user's scores are: published_<metric>) and the user's. Nothing is recomputed here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.paper import captions
from factlab.paper.tables import write_tables

if TYPE_CHECKING:
    import pandas as pd


def register(commands: Any) -> None:
    mixture = commands.add_parser("mixture-table", help="the aligner's training mixture per origin")
    mixture.add_argument("--report", required=True, help="results/models/aligner_data/mixture_report.json")
    mixture.add_argument("--out-md", required=True)
    mixture.add_argument("--out-tex", required=True)
    mixture.set_defaults(func=run_mixture_table)

    true = commands.add_parser("true-detection-table", help="ROC AUC of factlab's scorers on the TRUE sets")
    true.add_argument("--auc", required=True, help="results/metaeval/true/auc.csv")
    true.add_argument("--out-md", required=True)
    true.add_argument("--out-tex", required=True)
    true.set_defaults(func=run_true_table)


def mixture_frame(report: dict[str, Any]) -> pd.DataFrame:
    import pandas as pd

    rows = [
        {
            "origin": origin,
            "available": counts["available"],
            "sampled": counts["sampled"],
            "removed (8-word overlap)": counts.get("removed_leakage", 0),
            "train": counts.get("train", 0),
            "validation": counts.get("validation", 0),
        }
        for origin, counts in sorted(report["origins"].items())
    ]
    frame = pd.DataFrame(rows)
    total = {"origin": "total", **{column: int(frame[column].sum()) for column in frame.columns if column != "origin"}}
    return pd.concat([frame, pd.DataFrame([total])], ignore_index=True)


def run_mixture_table(args: argparse.Namespace) -> None:
    report = json.loads(Path(args.report).read_text())
    write_tables(
        mixture_frame(report), args.out_md, args.out_tex, captions.aligner_mixture(report["leakage_ngram"]), "tab:mixture"
    )


def true_frame(auc: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    table = pd.DataFrame({"set": sorted(name.removeprefix("true_") for name in auc["benchmark"].unique())})
    for scorer, rows in auc.groupby("scorer", sort=True):
        by_set = rows.assign(set=rows["benchmark"].str.removeprefix("true_")).set_index("set")
        table[f"{scorer} AUC"] = table["set"].map(100 * by_set["roc_auc"])
        table[f"{scorer} 95% CI"] = table["set"].map(
            lambda name, by_set=by_set: (
                f"{100 * by_set.at[name, 'roc_auc_ci_low']:.1f}-{100 * by_set.at[name, 'roc_auc_ci_high']:.1f}"
                if name in by_set.index and pd.notna(by_set.at[name, "roc_auc_ci_low"])
                else ""
            )
        )
    return table


def run_true_table(args: argparse.Namespace) -> None:
    import pandas as pd

    frame = true_frame(pd.read_csv(args.auc))
    write_tables(frame, args.out_md, args.out_tex, captions.TRUE_DETECTION, "tab:true-detection")
