"""Paper table of the QASemConsistency statistics (results/metaeval/qasem_consistency/statistics.csv)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from factlab.paper import captions
from factlab.paper.tables import write_tables

if TYPE_CHECKING:
    import pandas as pd


def qasem_consistency_layout(statistics: pd.DataFrame) -> pd.DataFrame:
    """The statistics with readable headers and fixed precision (strings; "--" = no spans)."""

    import pandas as pd

    def fmt(value: float, decimals: int) -> str:
        return "--" if pd.isna(value) else f"{value:.{decimals}f}"

    return pd.DataFrame(
        {
            "task": statistics["task"],
            "responses": statistics["responses"].astype(str),
            "sentences": statistics["sentences"].astype(str),
            "QAs": statistics["qas"].astype(str),
            "QAs / sentence": [fmt(v, 2) for v in statistics["qas_per_sentence"]],
            "% QAs unsupported": [fmt(100 * v, 1) for v in statistics["unsupported_share"]],
            "% mixed predicates": [fmt(100 * v, 1) for v in statistics["mixed_predicate_share"]],
            "Fleiss kappa (QAs)": [fmt(v, 3) for v in statistics["fleiss_kappa"]],
            "Fleiss kappa (spans)": [fmt(v, 3) for v in statistics["fleiss_kappa_spans"]],
        }
    )


def register(commands: Any) -> None:
    command = commands.add_parser("qasem-consistency-table", help="QASemConsistency statistics table")
    command.add_argument("--statistics", required=True, help="statistics.csv")
    command.add_argument("--out-md", required=True)
    command.add_argument("--out-tex", required=True)
    command.set_defaults(func=run_table)


def run_table(args: argparse.Namespace) -> None:
    import pandas as pd

    table = qasem_consistency_layout(pd.read_csv(args.statistics))
    write_tables(table, args.out_md, args.out_tex, caption=captions.QASEM_CONSISTENCY, label="tab:qasem-consistency")
