"""factlab's chunk-size sweep figure (factlab.paper.tuning) from a real tuning table: the lines drawn are the macro
means worked here with numpy, the star is the recorded choice, and a table without its columns is a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from factlab.cli import main
from factlab.errors import DataError
from factlab.paper.tuning import alignscore_tuning_figure, read_tuning

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
