"""tests/paper_headers.py (make smoke-check): a committed paper table whose header differs from the code's is
found, up to the columns named after the run's scorers, benchmarks and FRANK subsets; checked on committed tables
and hand-edited copies."""

from __future__ import annotations

from pathlib import Path

import pytest
from paper_headers import compare_tables, default_names, header, header_problems, main, placeholders

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "paper" / "tables"
NAMES = default_names(ROOT / "params.yaml")
PATTERNS = placeholders(NAMES)


def edited(markdown: str, old: str, new: str) -> str:
    """`markdown` with its header line's `old` cell text replaced by `new` (the rows untouched)."""
    lines = markdown.splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("|"))
    assert old in lines[index]
    lines[index] = lines[index].replace(old, new)
    return "\n".join(lines) + "\n"


def test_the_header_is_the_first_table_row() -> None:
    assert header("Caption line\n\n| a | b c |\n|---|---|\n| 1 | 2 |\n") == ["a", "b c"]
    assert header("no table here\n") == []


@pytest.mark.parametrize("name", sorted(path.name for path in TABLES.glob("*.md")))
def test_a_committed_table_agrees_with_itself_and_not_with_a_hand_edit(name: str) -> None:
    table = (TABLES / name).read_text(encoding="utf-8")
    columns = header(table)
    assert columns, name
    assert header_problems(table, table, PATTERNS) == []
    # the first column (a fixed name in every table) renamed by hand in the committed copy: both directions named
    renamed = edited(table, f"| {columns[0]} |", f"| {columns[0]} (edited) |")
    problems = header_problems(table, renamed, PATTERNS)
    assert len(problems) == 2 and "lacks" in problems[0] and "no longer writes" in problems[1], problems


def test_scorer_benchmark_and_subset_names_are_placeholders() -> None:
    written = "| metric | Pearson all | Pearson cnndm | Williams p vs factlab rouge (all) | summac_conv AUC |\n|-|-|-|-|-|\n"
    committed = (
        "| metric | Pearson all | Pearson cnndm | Pearson xsum | Williams p vs factlab ensemble (all) | summac_conv AUC |"
        " summac_zs AUC |\n|-|-|-|-|-|-|-|\n"
    )
    assert header_problems(written, committed, PATTERNS) == []
    # summac_conv is one scorer, not summac followed by text: a different scorer name is still a placeholder
    assert header_problems("| summac_conv AUC |\n", "| summac_conv CI |\n", PATTERNS) != []


def test_missing_and_trailing_tables_are_reported_and_the_command_fails(tmp_path: Path, capsys) -> None:
    written, committed = tmp_path / "written", tmp_path / "committed"
    written.mkdir()
    committed.mkdir()
    table = (TABLES / "localisation.md").read_text(encoding="utf-8")
    columns = header(table)
    (written / "localisation.md").write_text(table)
    (written / "new_table.md").write_text("| a |\n|---|\n| 1 |\n")
    # the committed copy lacks a column the code writes, as a table written before that column existed
    (committed / "localisation.md").write_text(edited(table, f"| {columns[-1]} |", "|"))
    problems = compare_tables(written, committed, NAMES)
    assert problems["new_table.md"] == ["the run writes this table; paper/ lacks it"]
    assert problems["localisation.md"] == [f"columns the code writes that paper/ lacks: ['{columns[-1]}']"]
    assert main([str(written), str(committed), "--params", str(ROOT / "params.yaml")]) == 1
    assert "2 committed table(s) trail the code" in capsys.readouterr().err
    # a pending table (a default run regenerates it) is reported, not failed; the others still fail
    assert list(compare_tables(written, committed, NAMES, pending=["new_table"])) == ["localisation.md"]
    assert main([str(written), str(committed), "--params", str(ROOT / "params.yaml"), "--pending", "new_table"]) == 1
    err = capsys.readouterr().err
    assert "new_table.md: the run writes this table; paper/ lacks it (pending" in err
    assert "1 committed table(s) trail the code" in err
    assert (
        main([str(written), str(committed), "--params", str(ROOT / "params.yaml"), "--pending", "new_table", "localisation"]) == 0
    )
    (committed / "localisation.md").write_text(table)
    (committed / "new_table.md").write_text("| a |\n|---|\n| 2 |\n")
    assert main([str(written), str(committed), "--params", str(ROOT / "params.yaml")]) == 0
