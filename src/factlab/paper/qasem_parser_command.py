"""Paper table of factlab's QASem parser (results/metaeval/qasem_parser/{scores,predicate_detection,bootstrap}.csv)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from factlab.metaeval.analyses.qasem_parser_command import PUBLISHED_T5_SMALL_UA_F1
from factlab.paper import captions
from factlab.paper.scorer_tables_command import interval
from factlab.paper.tables import write_tables

if TYPE_CHECKING:
    import pandas as pd

TEST_SET_NAMES = {"qasrl_gs_test": "QA-SRL GS test (verbal)", "qanom_test": "QANom test (nominal)"}


def qasem_parser_layout(
    scores: pd.DataFrame, detection: pd.DataFrame, bootstrap: pd.DataFrame, bootstrap_file: str = "bootstrap.csv"
) -> pd.DataFrame:
    """One row per test set: argument UA/LA (gold predicates) with the sentence bootstrap's intervals of their
    F1, predicate detection F1, and the published T5-small UA-F1 (empty for a set it did not report).

    The intervals are what a retrained parser's move across machines (CPU kernels) is read against."""
    import pandas as pd

    from factlab.data.schema import validate_table

    detection_f1 = dict(zip(detection["dataset"], detection["f1"], strict=True))
    key = ("dataset", "statistic")
    bounds = validate_table(bootstrap, bootstrap_file, (*key, "low", "high"), key).set_index(list(key))[["low", "high"]]

    def f1_interval(statistic: str) -> list[str]:
        return [
            interval(*bounds.loc[(name, statistic)], decimals=3) if (name, statistic) in bounds.index else ""
            for name in scores["dataset"]
        ]

    return pd.DataFrame(
        {
            "Test set": [TEST_SET_NAMES.get(name, name) for name in scores["dataset"]],
            "UA-P": scores["unlabeled_precision"].to_numpy(),
            "UA-R": scores["unlabeled_recall"].to_numpy(),
            "UA-F1": scores["unlabeled_f1"].to_numpy(),
            "UA-F1 95% CI": f1_interval("unlabeled_f1"),
            "LA-F1": scores["labeled_f1"].to_numpy(),
            "LA-F1 95% CI": f1_interval("labeled_f1"),
            "Gold args": scores["n_gold"].to_numpy(),
            "Predicted args": scores["n_pred"].to_numpy(),
            "Predicate F1": [detection_f1.get(name, float("nan")) for name in scores["dataset"]],
            "T5-small UA-F1": [PUBLISHED_T5_SMALL_UA_F1.get(name, float("nan")) for name in scores["dataset"]],
        }
    )


def register(commands: Any) -> None:
    command = commands.add_parser("qasem-parser-table", help="QASem parser test-set scores beside T5-small")
    command.add_argument("--scores", required=True, help="scores.csv")
    command.add_argument("--detection", required=True, help="predicate_detection.csv")
    command.add_argument("--bootstrap", required=True, help="bootstrap.csv: the F1 intervals over resampled sentences")
    command.add_argument("--iou-threshold", type=float, required=True)
    command.add_argument("--out-md", required=True)
    command.add_argument("--out-tex", required=True)
    command.set_defaults(func=run_table)


def run_table(args: argparse.Namespace) -> None:
    import pandas as pd

    table = qasem_parser_layout(
        pd.read_csv(args.scores), pd.read_csv(args.detection), pd.read_csv(args.bootstrap), bootstrap_file=args.bootstrap
    )
    write_tables(table, args.out_md, args.out_tex, caption=captions.qasem_parser(args.iou_threshold), label="tab:qasem-parser")
