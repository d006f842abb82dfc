"""The committed paper's tables against what the code writes: a committed Markdown table whose header differs from
the one the same table has in a run of this code (the smoke run) trails the code, and so does a table the run
writes that paper/ lacks.

Some columns are named after the run's scorers, benchmarks or FRANK subsets, which differ between the smoke and
the default configurations (the smoke scores fewer). Those names are read as placeholders, so two headers agree when
they have the same columns up to them: "alignscore AUC" and "rouge AUC" are both "{scorer} AUC".

    python tests/paper_headers.py .smoke/paper/tables paper/tables      (make smoke-check)
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from factlab.data.registry import builtin_specs

FRANK_SUBSETS = ("cnndm", "xsum")


def header(markdown: str) -> list[str]:
    """The column names of the first table of a Markdown text (empty when it holds none)."""
    for line in markdown.splitlines():
        if line.startswith("|"):
            return [cell.strip() for cell in line.strip().strip("|").split("|")]
    return []


def placeholders(names: Mapping[str, Iterable[str]]) -> list[tuple[re.Pattern[str], str]]:
    """Whole-word patterns of every name, longest first (so `summac_conv` is read before `summac`), each with the
    placeholder of its kind: `{"scorer": [...], "benchmark": [...]}` -> ("alignscore" -> "{scorer}", ...)."""
    pairs = [(name, f"{{{kind}}}") for kind, values in names.items() for name in values]
    pairs.sort(key=lambda pair: -len(pair[0]))
    return [(re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])"), holder) for name, holder in pairs]


def normalised(columns: Iterable[str], patterns: list[tuple[re.Pattern[str], str]]) -> set[str]:
    result = set()
    for column in columns:
        for pattern, holder in patterns:
            column = pattern.sub(holder, column)
        result.add(column)
    return result


def header_problems(written: str, committed: str, patterns: list[tuple[re.Pattern[str], str]]) -> list[str]:
    """How the committed table's header differs from the written one's, up to the placeholders (none: they agree)."""
    ours, theirs = normalised(header(written), patterns), normalised(header(committed), patterns)
    problems = []
    if ours - theirs:
        problems.append(f"columns the code writes that paper/ lacks: {sorted(ours - theirs)}")
    if theirs - ours:
        problems.append(f"columns in paper/ the code no longer writes: {sorted(theirs - ours)}")
    return problems


def default_names(params: Path) -> dict[str, list[str]]:
    """Every name a column can carry: the scorers of params.yaml (factlab's and the published ones), every built-in
    benchmark, FRANK's subsets."""
    config = yaml.safe_load(params.read_text(encoding="utf-8"))
    return {
        "scorer": list(config["score"]["scorers"]) + [f"published_{metric}" for metric in config["score"]["published"]],
        "benchmark": sorted(builtin_specs()),
        "subset": list(FRANK_SUBSETS),
    }


def compare_tables(
    written_dir: Path, committed_dir: Path, names: Mapping[str, Iterable[str]], pending: Iterable[str] = ()
) -> dict[str, list[str]]:
    """Per table the run wrote (`written_dir/*.md`), what is wrong with paper/'s copy (`committed_dir`). A table that
    `pending` names (by stem) is one whose numbers only a default run gives: what is wrong with it is printed, not
    returned, until that run regenerates paper/."""
    patterns = placeholders(names)
    problems: dict[str, list[str]] = {}
    for written in sorted(written_dir.glob("*.md")):
        committed = committed_dir / written.name
        if not committed.exists():
            found = ["the run writes this table; paper/ lacks it"]
        else:
            found = header_problems(written.read_text(encoding="utf-8"), committed.read_text(encoding="utf-8"), patterns)
        if found and written.stem in pending:
            for problem in found:
                print(f"{committed}: {problem} (pending: a default run regenerates it)", file=sys.stderr)
        elif found:
            problems[written.name] = found
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("written", type=Path, help="the tables a run of this code wrote, e.g. .smoke/paper/tables")
    parser.add_argument("committed", type=Path, help="the committed tables, paper/tables")
    parser.add_argument("--params", type=Path, default=Path("params.yaml"))
    parser.add_argument("--pending", nargs="*", default=[], help="tables a default run regenerates, by stem")
    args = parser.parse_args(argv)
    problems = compare_tables(args.written, args.committed, default_names(args.params), args.pending)
    for name, found in problems.items():
        for problem in found:
            print(f"{args.committed / name}: {problem}", file=sys.stderr)
    if problems:
        print(f"{len(problems)} committed table(s) trail the code: regenerate paper/ with a run of it", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
