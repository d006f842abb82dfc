"""FRANK's paper table and figures, from the metaeval CSVs of results/metaeval/frank_baselines/."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from factlab.errors import DataError
from factlab.io import write_text
from factlab.metaeval.analyses.published.frank_command import (
    BASELINE_METRICS,
    SIGNIFICANCE_LEVEL,
    SUBSET_LABELS,
    metrics_by_correlation,
    pairwise_matrix,
)
from factlab.paper import captions
from factlab.paper.tables import to_latex, to_markdown

if TYPE_CHECKING:
    import pandas as pd


def marked(r: float, p: float, alpha: float = SIGNIFICANCE_LEVEL) -> str:
    """A coefficient to two decimals, as in FRANK's table, with `*` when p < alpha."""
    return f"{r:.2f}{'*' if p < alpha else ''}"


def frank_layout(correlations: pd.DataFrame, subsets: Sequence[str], metrics: Sequence[str] = BASELINE_METRICS) -> pd.DataFrame:
    """FRANK's layout: a row per metric, a (Pearson, Spearman) column pair per subset; `*` = p < 0.05."""
    import pandas as pd

    indexed = correlations.set_index(["metric", "subset"])
    columns = [("Metric", "")]
    columns += [(SUBSET_LABELS[subset], name) for subset in subsets for name in ("Pearson", "Spearman")]
    rows = []
    for metric in metrics:
        row: list[str] = [metric]
        for subset in subsets:
            if (metric, subset) not in indexed.index:
                raise DataError(f"no correlation row for {metric!r} on {subset!r}", field="subset")
            values = indexed.loc[(metric, subset)]
            row += [marked(values["pearson"], values["pearson_p"]), marked(values["spearman"], values["spearman_p"])]
        rows.append(row)
    return pd.DataFrame(rows, columns=pd.MultiIndex.from_tuples(columns))


def flat_columns(table: pd.DataFrame) -> pd.DataFrame:
    """The table with its two-level header joined into one ("All data Pearson"), for Markdown."""
    flat = table.copy()
    flat.columns = [" ".join(part for part in column if part) for column in table.columns]
    return flat


def register(commands: Any) -> None:
    table = commands.add_parser("frank-table", help="FRANK: correlation table in the paper's layout")
    table.add_argument("--correlations", required=True)
    table.add_argument("--subsets", nargs="+", required=True, choices=list(SUBSET_LABELS))
    table.add_argument("--out-md", required=True)
    table.add_argument("--out-tex", required=True)
    table.set_defaults(func=run_table)

    plot_williams = commands.add_parser("frank-williams-figure", help="FRANK: Williams p-value and metric-matrix heatmaps")
    plot_williams.add_argument("--williams", required=True)
    plot_williams.add_argument("--correlations", required=True, help="orders the metrics by all-data partial Pearson")
    plot_williams.add_argument("--out", required=True)
    plot_williams.add_argument("--out-matrix", required=True)
    plot_williams.set_defaults(func=run_plot_williams)

    plot_ablation = commands.add_parser("frank-ablation-figure", help="FRANK: error-category influence bar chart")
    plot_ablation.add_argument("--ablation", required=True)
    plot_ablation.add_argument("--correlations", required=True)
    plot_ablation.add_argument("--out", required=True)
    plot_ablation.set_defaults(func=run_plot_ablation)


def run_table(args: argparse.Namespace) -> None:
    import pandas as pd

    correlations = pd.read_csv(args.correlations)
    table = frank_layout(correlations, args.subsets, correlations["metric"].unique().tolist())
    variant = str(correlations["variant"].iloc[0])
    write_text(to_markdown(flat_columns(table)), args.out_md)
    write_text(to_latex(table, captions.frank_baselines(variant), "tab:frank-baselines"), args.out_tex)


def run_plot_williams(args: argparse.Namespace) -> None:
    import numpy as np
    import pandas as pd

    from factlab.paper.frank_figures import plot_metric_matrix, plot_williams_pvalues

    comparisons = pd.read_csv(args.williams)
    order = metrics_by_correlation(pd.read_csv(args.correlations))
    variant = str(comparisons["variant"].iloc[0])
    plot_williams_pvalues(pairwise_matrix(comparisons, "p", order, diagonal=np.nan), variant, args.out)
    plot_metric_matrix(pairwise_matrix(comparisons, "r23", order, diagonal=1.0), args.out_matrix)


def run_plot_ablation(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.paper.frank_figures import plot_ablation

    ablation = pd.read_csv(args.ablation)
    order = metrics_by_correlation(pd.read_csv(args.correlations))
    plot_ablation(ablation[ablation["subset"] == "all"], order, args.out)
