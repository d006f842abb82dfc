"""factlab's chunk-size sweep figure (factlab.paper.tuning_command) from a real tuning table: the lines drawn are the macro
means worked here with numpy, the star is the recorded choice, and a table without its columns is a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from factlab.cli import main
from factlab.errors import DataError
from factlab.paper.tuning_command import alignscore_tuning_figure, read_tuning

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "alignscore_tuning"


def test_lines_are_the_macro_means_and_the_star_is_the_choice() -> None:
    table = read_tuning(FIXTURES / "alignscore_tuning.csv")
    choice = json.loads((FIXTURES / "alignscore_choice.json").read_text())
    figure = alignscore_tuning_figure(table, choice)
    panels = {axes.get_title().removeprefix("support head: "): axes for axes in figure.axes if axes.get_title()}
    assert set(panels) == {"three_way", "binary"}
    for head, axes in panels.items():
        drawn = {line.get_label(): line for line in axes.get_lines()}
        for aggregation in ("mean", "min"):
            cells = table[(table["support_head"] == head) & (table["aggregation"] == aggregation)]
            sizes = sorted(cells["words_per_chunk"].unique())
            expected = [np.mean(cells.loc[cells["words_per_chunk"] == size, "roc_auc"]) for size in sizes]
            line = drawn[f"{aggregation} over sentences"]
            assert list(line.get_xdata()) == sizes
            assert np.allclose(line.get_ydata(), expected)
        assert cells["benchmark"].nunique() == 2  # two benchmarks: a sum, max or first value would draw another line
        if head == choice["support_head"]:
            star = drawn["chosen"]
            assert list(star.get_xdata()) == [choice["words_per_chunk"]]
            assert star.get_ydata()[0] == pytest.approx(choice["mean_roc_auc"], abs=1e-4)  # the choice rounds to 4
        else:
            assert "chosen" not in drawn
    # the cost axis: the model pairs of each chunk size summed over the benchmarks, 590 + 952 at 60 words, 140 + 121 at 350
    (pairs,) = {tuple(line.get_ydata()) for axes in figure.axes for line in axes.get_lines() if line.get_label() == "model pairs"}
    assert pairs == (590 + 952, 140 + 121)


def test_the_command_writes_a_png_and_names_a_missing_column(tmp_path, capsys) -> None:
    out = tmp_path / "tuning.png"
    arguments = ["paper", "alignscore-tuning-figure", "--choice", str(FIXTURES / "alignscore_choice.json")]
    assert main([*arguments, "--table", str(FIXTURES / "alignscore_tuning.csv"), "--out", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    broken = tmp_path / "broken.csv"
    pd.read_csv(FIXTURES / "alignscore_tuning.csv").drop(columns=["pairs"]).to_csv(broken, index=False)
    with pytest.raises(DataError, match="missing column"):
        read_tuning(broken)
    assert main([*arguments, "--table", str(broken), "--out", str(tmp_path / "other.png")]) != 0
    assert "pairs" in capsys.readouterr().err and not (tmp_path / "other.png").exists()


def test_the_pre_rankers_rows_leave_the_grid_as_it_was_and_the_chosen_reading_is_crossed() -> None:
    """The candidates' rows (top_chunks > 0) are not grid cells: the lines, star and cost read the grid only; the
    chosen reading (the chosen cell with its top_chunks) is crossed at its macro AUC."""
    grid = read_tuning(FIXTURES / "alignscore_tuning.csv").assign(top_chunks=0, pairs_left_out=0)
    choice = json.loads((FIXTURES / "alignscore_choice.json").read_text())
    cell = grid[
        (grid["support_head"] == choice["support_head"])
        & (grid["words_per_chunk"] == choice["words_per_chunk"])
        & (grid["aggregation"] == choice["aggregation"])
    ]
    candidates = cell.assign(top_chunks=1, roc_auc=0.99, pairs=1, pairs_left_out=cell["pairs"] - 1)
    plain = alignscore_tuning_figure(grid, choice)
    chosen = choice | {"top_chunks": 1, "chosen_mean_roc_auc": 0.99, "exhaustive_mean_roc_auc": choice["mean_roc_auc"]}
    crossed = alignscore_tuning_figure(pd.concat([grid, candidates], ignore_index=True), chosen)

    def lines(figure) -> dict[str, tuple]:
        return {
            f"{axes.get_title()}|{line.get_label()}|{index}": (tuple(line.get_xdata()), tuple(line.get_ydata()))
            for axes in figure.axes
            for index, line in enumerate(axes.get_lines())
        }

    drawn, before = lines(crossed), lines(plain)
    (cross,) = [key for key in drawn if "chosen, 1 best chunk per sentence" in key]
    assert drawn.pop(cross) == ((choice["words_per_chunk"],), (0.99,))
    assert drawn == before
