"""Paper table of annotator agreement (results/metaeval/agreement/agreement.csv)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from factlab.paper import captions
from factlab.paper.tables import write_tables

if TYPE_CHECKING:
    import pandas as pd


def agreement_layout(agreement: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(
        {
            "dataset": agreement["dataset"],
            "items": agreement["items"].astype(str),
            "votes per item": agreement["raters"].astype(str),
            "Fleiss kappa": [f"{v:.3f}" for v in agreement["fleiss_kappa"]],
            "Krippendorff alpha": [f"{v:.3f}" for v in agreement["krippendorff_alpha"]],
            "% votes = majority": [f"{100 * v:.1f}" for v in agreement["majority_agreement_share"]],
            "excluded from kappa": agreement["n_excluded"].astype(str),
        }
    )


def register(commands: Any) -> None:
    command = commands.add_parser("agreement-table", help="annotator agreement table")
    command.add_argument("--agreement", required=True, help="agreement.csv")
    command.add_argument("--out-md", required=True)
    command.add_argument("--out-tex", required=True)
    command.set_defaults(func=run_table)


def run_table(args: argparse.Namespace) -> None:
    import pandas as pd

    table = agreement_layout(pd.read_csv(args.agreement))
    write_tables(table, args.out_md, args.out_tex, caption=captions.AGREEMENT, label="tab:agreement")
