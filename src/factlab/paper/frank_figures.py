"""Figures of the rebuilt FRANK meta-evaluation: Williams p-values, metric-metric correlations, error-category ablation.

Inputs are the result tables of factlab.metaeval.analyses.published.frank_command (already ordered by the
caller, usually by all-data partial Pearson, best first); each function writes one PNG.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import BoundaryNorm, Colormap, ListedColormap, Normalize
from matplotlib.figure import Figure

from factlab.errors import DataError
from factlab.paper.figures import new_figure, save_figure

# p-value bands: the eye should separate "clearly different" from "not distinguishable" at once.
P_BOUNDS = [0.0, 0.001, 0.01, 0.05, 0.1, 1.0]
P_COLOURS = ListedColormap(["#08306b", "#2171b5", "#6baed6", "#c6dbef", "#f7f7f7"])
GROUPED_CATEGORY_LABELS = {
    "Semantic_Frame_Errors": "Semantic frame",
    "Discourse_Errors": "Discourse",
    "Content_Verifiability_Errors": "Content verifiability",
}


def _p_label(p: float) -> str:
    return "<.001" if p < 0.001 else f"{p:.3f}".lstrip("0")


def _heatmap(
    figure: Figure,
    axes: Axes,
    matrix: pd.DataFrame,
    cmap: Colormap | str,
    norm: Normalize,
    labels: np.ndarray,
    colourbar_label: str,
) -> None:
    """Square heatmap with a text label in every non-empty cell (dark cells get white text)."""
    image = axes.imshow(matrix.to_numpy(dtype=float), cmap=cmap, norm=norm)
    axes.set_xticks(range(len(matrix.columns)), matrix.columns, rotation=45, ha="right", fontsize=8)
    axes.set_yticks(range(len(matrix.index)), matrix.index, fontsize=8)
    for (row, column), text in np.ndenumerate(labels):
        value = matrix.iat[row, column]
        if not text or pd.isna(value):
            continue
        rgba = image.cmap(image.norm(value))
        luminance = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
        axes.text(column, row, text, ha="center", va="center", fontsize=6, color="white" if luminance < 0.5 else "black")
    figure.colorbar(image, ax=axes, shrink=0.8, label=colourbar_label)


def _require_square(matrix: pd.DataFrame, what: str) -> None:
    if list(matrix.index) != list(matrix.columns) or matrix.empty:
        raise DataError(f"{what} must be a non-empty square matrix with the same metric order on both axes")


def plot_williams_pvalues(p_values: pd.DataFrame, variant: str, path: str | Path) -> None:
    """Heatmap of Williams-test p-values between every pair of metrics (diagonal left blank)."""
    _require_square(p_values, "the Williams p-value matrix")
    figure, axes = new_figure(8.5, 7.0)
    labels = np.vectorize(lambda p: "" if pd.isna(p) else _p_label(p))(p_values.to_numpy(dtype=float))
    _heatmap(figure, axes, p_values, P_COLOURS, BoundaryNorm(P_BOUNDS, P_COLOURS.N), labels, f"Williams p ({variant})")
    axes.set_title(
        f"FRANK: Williams test between metrics' partial correlations with Factuality\n"
        f"(all data, system-residualised; p-value variant: {variant}; metrics ordered by partial Pearson)",
        fontsize=9,
    )
    save_figure(figure, path)


def plot_metric_matrix(correlations: pd.DataFrame, path: str | Path) -> None:
    """Heatmap of the metric-metric partial Pearson correlations (system as confounder)."""
    _require_square(correlations, "the metric-metric matrix")
    figure, axes = new_figure(8.5, 7.0)
    labels = np.vectorize(lambda r: f"{r:.2f}")(correlations.to_numpy(dtype=float))
    _heatmap(figure, axes, correlations, "RdBu_r", Normalize(-1.0, 1.0), labels, "partial Pearson r")
    axes.set_title("FRANK: partial correlation between metrics (all data, system as confounder)", fontsize=9)
    save_figure(figure, path)


def plot_ablation(
    ablation: pd.DataFrame,
    metrics: Sequence[str],
    path: str | Path,
    categories: Sequence[str] = tuple(GROUPED_CATEGORY_LABELS),
) -> None:
    """FRANK's ablation figure: per metric, the drop in partial Pearson when a category's errors are flipped."""
    if ablation.empty:
        raise DataError("no ablation rows to plot (the all-data subset is needed)")
    # dropna=False: a metric whose cells are all NaN (a sample's flipped ratings one per system) keeps its empty bars
    table = ablation.pivot_table(index="metric", columns="category", values="pearson_influence", aggfunc="first", dropna=False)
    missing = [m for m in metrics if m not in table.index] + [c for c in categories if c not in table.columns]
    if missing:
        raise DataError(f"the ablation table lacks the metrics or categories {missing}")
    table = table.loc[list(metrics), list(categories)]
    figure, axes = new_figure(10.0, 4.5)
    width = 0.8 / len(categories)
    positions = np.arange(len(metrics))
    for index, category in enumerate(categories):
        offset = (index - (len(categories) - 1) / 2) * width
        label = GROUPED_CATEGORY_LABELS.get(category, category)
        axes.bar(positions + offset, table[category].to_numpy(), width, label=label)
    axes.axhline(0.0, color="black", linewidth=0.8)
    axes.set_xticks(positions, list(metrics), rotation=45, ha="right", fontsize=8)
    axes.set_ylabel("partial Pearson: Factuality − flipped")
    axes.set_title("FRANK: influence of each error category on the metrics' correlation with Factuality (all data)", fontsize=9)
    axes.legend(title="errors flipped", fontsize=8, title_fontsize=8)
    axes.grid(axis="y", linewidth=0.3)
    save_figure(figure, path)
