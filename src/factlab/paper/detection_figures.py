"""Figures of the published detection analyses: ScreenEval chunk size and reliability diagrams.

Each function takes the result table written by factlab.metaeval.analyses.published.screeneval_command and
returns a matplotlib Figure; the command saves it with `save_figure`.
"""

from __future__ import annotations

import math

import pandas as pd
from matplotlib.figure import Figure

from factlab.errors import DataError
from factlab.paper.figures import new_figure, new_grid

AUC_COLOUR = "tab:blue"
RUNTIME_COLOUR = "tab:orange"


def chunk_size_figure(table: pd.DataFrame) -> Figure:
    """ROC AUC (left axis) and runtime (right axis, log scale) of SCALE-large against chunk size."""
    table = table.sort_values("chunk_size")
    figure, auc_axes = new_figure(6.0, 3.8)
    auc_axes.plot(table["chunk_size"], table["roc_auc"], marker="o", color=AUC_COLOUR, label="ROC AUC")
    auc_axes.set_xscale("log")
    auc_axes.set_xticks(table["chunk_size"], [str(size) for size in table["chunk_size"]])
    auc_axes.minorticks_off()
    auc_axes.set_xlabel("chunk size (tokens)")
    auc_axes.set_ylabel("ROC AUC (positive = consistent)", color=AUC_COLOUR)
    auc_axes.tick_params(axis="y", labelcolor=AUC_COLOUR)
    auc_axes.grid(alpha=0.3)
    runtime_axes = auc_axes.twinx()
    runtime_axes.plot(table["chunk_size"], table["runtime_s"], marker="s", linestyle="--", color=RUNTIME_COLOUR, label="runtime")
    runtime_axes.set_yscale("log")
    runtime_axes.set_ylabel("runtime on 614 items (s, log)", color=RUNTIME_COLOUR)
    runtime_axes.tick_params(axis="y", which="both", labelcolor=RUNTIME_COLOUR)
    handles = auc_axes.get_lines() + runtime_axes.get_lines()
    auc_axes.legend(handles, [h.get_label() for h in handles], loc="lower right")
    auc_axes.set_title("SCALE-large on ScreenEval: chunk size vs AUC and runtime")
    return figure


def reliability_figure(table: pd.DataFrame, n_cols: int = 2) -> Figure:
    """One reliability diagram per metric (n_cols per row): share consistent per equal-width score bin, counts on the bars."""
    metrics = list(dict.fromkeys(table["metric"]))
    if not metrics:
        raise DataError("no reliability bins to plot (no scorer with a diagram)", field="metric")
    n_cols = min(n_cols, len(metrics))
    n_rows = math.ceil(len(metrics) / n_cols)
    figure, panels = new_grid(n_rows, n_cols, 4.0, 3.4, sharex=True, sharey=True)
    for axes, metric in zip(panels, metrics, strict=False):
        bins = table[table["metric"] == metric]
        widths = bins["upper"] - bins["lower"]
        centres = bins["lower"] + widths / 2
        heights = bins["consistent_share"].fillna(0.0)
        axes.bar(centres, heights, width=widths, edgecolor="black", alpha=0.7, label="share consistent")
        # A calibrated bin's bar would end at its mean score: the marker shows that height.
        axes.plot(
            centres, bins["mean_score"], marker="_", markersize=12, mew=2, linestyle="", color="tab:red", label="mean score"
        )
        axes.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
        for centre, count in zip(centres, bins["count"], strict=True):
            if count:
                axes.text(centre, 1.02, str(count), ha="center", va="bottom", fontsize=6)
        axes.set_title(f"{metric} (n per bin on top)", fontsize=9)
        axes.set_xlim(0, 1)
        axes.set_ylim(0, 1.1)  # room for the bin counts above the plot area's top
    for axes in panels[len(metrics) :]:
        axes.set_visible(False)
    for axes in panels[::n_cols]:
        axes.set_ylabel("share consistent")
    for axes in panels[-n_cols:]:
        axes.set_xlabel("score (bin)")
    handles, labels = panels[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=8)
    return figure
