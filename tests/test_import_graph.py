"""factlab's modules import each other without cycles, function-level imports included (they run too): a module
can be read, and its code closure is what it uses, not everything in a cycle with it."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parent.parent / "src"


def module_names(root: Path) -> dict[str, Path]:
    names = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package modules it imports anywhere in its text (`from a.b import c` names a.b, and a.b.c
    when that is a module)."""
    modules = module_names(root)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            graph[name] |= {target for target in targets if target in modules and target != name}
    return graph


def test_factlab_has_no_import_cycle():
    graph = import_graph(SOURCE)
    assert len(graph) > 100
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the cycle


def test_a_cycle_is_found(tmp_path: Path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg.b import g\n")  # a function-level import counts
    (package / "b.py").write_text("from pkg import a\n")
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(import_graph(tmp_path)).prepare()
