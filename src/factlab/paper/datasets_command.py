"""Paper table of the dataset statistics (results/data/statistics.csv)."""

from __future__ import annotations

import argparse
from typing import Any

from factlab.paper import captions
from factlab.paper.tables import write_tables


def register(commands: Any) -> None:
    command = commands.add_parser("datasets-table", help="dataset statistics table")
    command.add_argument("--statistics", required=True, help="results/data/statistics.csv")
    command.add_argument("--out-md", required=True)
    command.add_argument("--out-tex", required=True)
    command.set_defaults(func=run_table)


def run_table(args: argparse.Namespace) -> None:
    import pandas as pd

    table = pd.read_csv(args.statistics)
    write_tables(table, args.out_md, args.out_tex, caption=captions.DATASETS, label="tab:datasets")
