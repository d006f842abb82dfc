"""`factlab paper reliability-figure`: reliability diagrams from a metaeval reliability.csv.

The tables come from `factlab metaeval screeneval` (published metrics on ScreenEval) and
`factlab metaeval detection` (factlab's scorers, raw and isotonic-calibrated); one panel per `metric`.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(commands: Any) -> None:
    reliability = commands.add_parser("reliability-figure", help="reliability diagrams with bin counts, one panel per metric")
    reliability.add_argument("--table", required=True, help="reliability.csv (metric, bounds, count, mean_score, share)")
    reliability.add_argument("--columns", type=int, required=True, help="panels per row")
    reliability.add_argument("--out", required=True, help="PNG path")
    reliability.set_defaults(func=run_reliability_figure)


def run_reliability_figure(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.paper.detection_figures import reliability_figure
    from factlab.paper.figures import save_figure

    save_figure(reliability_figure(pd.read_csv(args.table), n_cols=args.columns), args.out)
