"""Figure helpers shared by every plot: a headless backend and atomic PNG writes."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on servers and CI

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from factlab.io import atomic_path  # noqa: E402

DPI = 150


def new_figure(width_in: float = 6.0, height_in: float = 4.0) -> tuple[Figure, plt.Axes]:
    figure, axes = plt.subplots(figsize=(width_in, height_in), constrained_layout=True)
    return figure, axes


def new_grid(
    n_rows: int, n_cols: int, panel_width_in: float, panel_height_in: float, **shared: bool
) -> tuple[Figure, list[plt.Axes]]:
    """A figure of n_rows x n_cols panels, returned as a flat list (row-major)."""
    figure, axes = plt.subplots(
        n_rows,
        n_cols,
        figsize=(panel_width_in * n_cols, panel_height_in * n_rows),
        constrained_layout=True,
        squeeze=False,
        **shared,
    )
    return figure, list(axes.ravel())


def save_figure(figure: Figure, path: str | Path) -> None:
    """Write a PNG atomically (metadata stripped so the bytes are reproducible) and close it."""
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(figure)
