"""`factlab score merge`: one scorer's shards of a benchmark -> `<scorer>.parquet` and its report."""

from __future__ import annotations

import argparse
from typing import Any

from factlab.commands import write_report
from factlab.errors import FactlabError
from factlab.io import write_parquet


def register(commands: Any) -> None:
    merge = commands.add_parser("merge", help="merge a scorer's shards of one benchmark")
    merge.add_argument("--scores", nargs="+", required=True, help="the shards' score tables")
    merge.add_argument("--reports", nargs="+", required=True, help="the shards' reports, same order")
    merge.add_argument("--out", required=True)
    merge.add_argument("--report", required=True)
    merge.set_defaults(func=run_merge)


def run_merge(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.score.jobs import merge_shards, read_reports

    if len(args.scores) != len(args.reports):
        raise FactlabError(f"--scores gives {len(args.scores)} shards but --reports {len(args.reports)}")
    merged, report = merge_shards([pd.read_parquet(path) for path in args.scores], read_reports(args.reports))
    write_parquet(merged, args.out)
    write_report(report, args.report)
