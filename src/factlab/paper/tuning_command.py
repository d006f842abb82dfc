"""`factlab paper alignscore-tuning-figure`: factlab's own chunk-size sweep, AlignScore's tuning on validation.

`results/score/alignscore_tuning.csv` holds the ROC AUC of every cell of the grid (support head x words per chunk x
aggregation) on each validation benchmark, and of the chosen cell with each `top_chunks` candidate of the lexical
pre-ranker; `alignscore_choice.json` the cell chosen by their macro mean and its `top_chunks`. One panel
per support head: per aggregation, the macro-mean AUC against the chunk size (the criterion; thin lines: each
benchmark's AUC), with the model pairs each size cost (right axis, log), the chosen cell starred and, where the
choice scores fewer than every chunk, its chosen reading's macro AUC crossed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.errors import DataError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

TUNING_COLUMNS = ("support_head", "words_per_chunk", "aggregation", "benchmark", "roc_auc", "pairs")
AGGREGATION_STYLES = {"mean": "-", "min": "--"}
PAIRS_COLOUR = "tab:gray"


def read_tuning(path: str | Path) -> pd.DataFrame:
    import pandas as pd

    table = pd.read_csv(path)
    missing = [column for column in TUNING_COLUMNS if column not in table.columns]
    if missing:
        raise DataError("missing column", file=path, record="header", field=missing[0])
    if table.empty:
        raise DataError("no tuning cell", file=path)
    return table


def macro_means(table: pd.DataFrame) -> pd.DataFrame:
    """Per (support head, aggregation, words per chunk): the mean AUC over the validation benchmarks (the criterion)
    and the model pairs summed over them."""
    keys = ["support_head", "aggregation", "words_per_chunk"]
    return table.groupby(keys, sort=True).agg(roc_auc=("roc_auc", "mean"), pairs=("pairs", "sum")).reset_index()


def alignscore_tuning_figure(table: pd.DataFrame, choice: dict[str, Any]) -> Figure:
    from factlab.paper.figures import new_grid

    if "top_chunks" in table.columns:  # the grid reads every chunk; the pre-ranker's candidates are in the choice
        table = table[table["top_chunks"] == 0]
    heads = list(dict.fromkeys(table["support_head"]))
    means = macro_means(table)
    sizes = sorted(table["words_per_chunk"].unique())
    figure, panels = new_grid(1, len(heads), 4.6, 3.6, sharey=True)
    for axes, head in zip(panels, heads, strict=True):
        for aggregation, rows in means[means["support_head"] == head].groupby("aggregation", sort=True):
            style = AGGREGATION_STYLES.get(str(aggregation), ":")
            line = axes.plot(
                rows["words_per_chunk"], rows["roc_auc"], style, marker="o", lw=2, label=f"{aggregation} over sentences"
            )
            cells = table[(table["support_head"] == head) & (table["aggregation"] == aggregation)]
            for _, benchmark in cells.groupby("benchmark", sort=True):
                benchmark = benchmark.sort_values("words_per_chunk")
                axes.plot(benchmark["words_per_chunk"], benchmark["roc_auc"], style, lw=0.7, alpha=0.5, color=line[0].get_color())
        if choice.get("support_head") == head:
            chosen = means[
                (means["support_head"] == head)
                & (means["aggregation"] == choice["aggregation"])
                & (means["words_per_chunk"] == choice["words_per_chunk"])
            ]
            axes.plot(chosen["words_per_chunk"], chosen["roc_auc"], "*", markersize=16, color="tab:red", label="chosen", zorder=5)
            if (top := int(choice.get("top_chunks", 0))) > 0:
                axes.plot(
                    [choice["words_per_chunk"]],
                    [choice["chosen_mean_roc_auc"]],
                    "X",
                    markersize=9,
                    color="black",
                    label=f"chosen, {top} best chunk{'s' if top > 1 else ''} per sentence",
                    zorder=6,
                )
        pairs_axes = axes.twinx()
        cost = means[means["support_head"] == head].groupby("words_per_chunk")["pairs"].max()
        pairs_axes.plot(cost.index, cost.to_numpy(), "s:", color=PAIRS_COLOUR, label="model pairs")
        pairs_axes.set_yscale("log")
        pairs_axes.tick_params(axis="y", which="both", labelcolor=PAIRS_COLOUR, labelsize=7)
        if head == heads[-1]:
            pairs_axes.set_ylabel("model pairs (log)", color=PAIRS_COLOUR)
        axes.set_xscale("log")
        axes.set_xticks(sizes, [str(size) for size in sizes])
        axes.minorticks_off()
        axes.set_xlabel("words per chunk")
        axes.set_title(f"support head: {head}")
        axes.grid(alpha=0.3)
        axes.legend(fontsize=7, loc="lower right")
    panels[0].set_ylabel("validation ROC AUC")
    return figure


def run_alignscore_tuning_figure(args: argparse.Namespace) -> None:
    from factlab.paper.figures import save_figure

    choice = json.loads(Path(args.choice).read_text(encoding="utf-8"))
    save_figure(alignscore_tuning_figure(read_tuning(args.table), choice), args.out)


def register(commands: Any) -> None:
    command = commands.add_parser(
        "alignscore-tuning-figure", help="AlignScore's validation AUC against words per chunk, per support head"
    )
    command.add_argument("--table", required=True, help="results/score/alignscore_tuning.csv")
    command.add_argument("--choice", required=True, help="results/score/alignscore_choice.json")
    command.add_argument("--out", required=True, help="PNG path")
    command.set_defaults(func=run_alignscore_tuning_figure)
