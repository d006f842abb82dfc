"""The rule files share names only in include order: no file reads a name that only a later file defines, common.smk's
functions read only common.smk's names (whichever file calls them), and no name is defined in two files. Each file
is translated to Python by Snakemake's own parser and read with ast."""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^include:\s*"(?P<path>[^"]+)"', re.M)


def python_of(path: Path) -> ast.Module:
    import snakemake.api  # noqa: F401  (imports the workflow module the parser needs)
    from snakemake.parser import parse
    from snakemake.sourcecache import LocalSourceFile

    opener = types.SimpleNamespace(open=lambda source, mode="r": open(source.get_path_or_uri(secret_free=True), mode))
    return ast.parse(parse(LocalSourceFile(str(path)), types.SimpleNamespace(sourcecache=opener), {})[0])


def top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.FunctionDef) and not node.name.startswith("__"):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def loaded_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def rule_files(snakefile: Path) -> list[Path]:
    return [snakefile.parent / match["path"] for match in INCLUDE.finditer(snakefile.read_text())]


def layering_problems(snakefile: Path) -> list[str]:
    files = rule_files(snakefile)
    trees = {path.name: python_of(path) for path in files}
    defined = {name: top_level_names(tree) for name, tree in trees.items()}
    order = list(trees)
    problems = []
    first_owner: dict[str, str] = {}
    for name in order:
        for symbol in defined[name]:
            if symbol in first_owner and not symbol.startswith("_") and not symbol.islower():
                problems.append(f"{symbol} is defined in {first_owner[symbol]} and {name}")
            first_owner.setdefault(symbol, name)
    for position, name in enumerate(order):
        for symbol in sorted(loaded_names(trees[name])):
            owner = first_owner.get(symbol)
            if owner is not None and order.index(owner) > position:
                problems.append(f"{name} reads {symbol}, which {owner} defines later")
    common, *rest = order
    later = set().union(*(defined[name] for name in rest)) - defined[common]
    for node in trees[common].body:
        if isinstance(node, ast.FunctionDef):
            read = sorted(loaded_names(node) & later)
            problems += [f"{common}'s {node.name} reads {symbol} of a later file" for symbol in read]
    return problems


def test_rule_files_share_names_in_include_order():
    assert len(rule_files(ROOT / "Snakefile")) >= 10
    assert layering_problems(ROOT / "Snakefile") == []


@pytest.mark.parametrize(
    ("common", "later", "expected"),
    [
        ("def f():\n    return LATER\n", "LATER = 1\n", "common.smk's f reads LATER of a later file"),
        ("A = 1\n", "A = 2\n", "A is defined in common.smk and later.smk"),
        ("A = B\n", "B = 1\n", "common.smk reads B, which later.smk defines later"),
    ],
)
def test_a_forward_name_is_found(tmp_path: Path, common: str, later: str, expected: str):
    (tmp_path / "common.smk").write_text(common)
    (tmp_path / "later.smk").write_text(later)
    (tmp_path / "Snakefile").write_text('include: "common.smk"\ninclude: "later.smk"\n')
    assert expected in layering_problems(tmp_path / "Snakefile")
