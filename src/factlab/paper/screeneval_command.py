"""ScreenEval's chunk-size figure from results/metaeval/screeneval_published/chunk_size.csv (its reliability
diagrams: `factlab paper reliability-figure`)."""

from __future__ import annotations

import argparse
from typing import Any


def register(commands: Any) -> None:
    chunk = commands.add_parser("screeneval-chunk-size-figure", help="AUC and runtime against chunk size")
    chunk.add_argument("--table", required=True, help="chunk_size.csv")
    chunk.add_argument("--out", required=True, help="PNG path")
    chunk.set_defaults(func=run_chunk_size_figure)


def run_chunk_size_figure(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.paper.detection_figures import chunk_size_figure
    from factlab.paper.figures import save_figure

    save_figure(chunk_size_figure(pd.read_csv(args.table)), args.out)
