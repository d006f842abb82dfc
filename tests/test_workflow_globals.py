"""The rule files share no names but common.smk's (the plan, `PLAN`, and its input functions): no rule file reads a
module-level name another rule file defines, common.smk's functions read only common.smk's names (whichever file calls
them), and no name is defined in two files. Each file is translated to Python by Snakemake's own parser and read with
ast. Rules refer to each other's outputs through Snakemake's `rules` object, which is the DAG's edges, not a name."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
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
    common, *rest = order
    for name in order:
        for symbol in sorted(loaded_names(trees[name])):
            owner = first_owner.get(symbol)
            if owner not in (None, common, name):
                problems.append(f"{name} reads {symbol}, which {owner} defines")
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
        ("A = B\n", "B = 1\n", "common.smk reads B, which later.smk defines"),
    ],
)
def test_a_forward_name_is_found(tmp_path: Path, common: str, later: str, expected: str):
    (tmp_path / "common.smk").write_text(common)
    (tmp_path / "later.smk").write_text(later)
    (tmp_path / "Snakefile").write_text('include: "common.smk"\ninclude: "later.smk"\n')
    assert expected in layering_problems(tmp_path / "Snakefile")


def test_a_name_read_across_rule_files_is_found(tmp_path: Path):
    (tmp_path / "common.smk").write_text("PLAN = 1\n")
    (tmp_path / "first.smk").write_text("SHARED = PLAN\n")
    (tmp_path / "second.smk").write_text("OWN = SHARED + PLAN\n")
    (tmp_path / "Snakefile").write_text('include: "common.smk"\ninclude: "first.smk"\ninclude: "second.smk"\n')
    assert layering_problems(tmp_path / "Snakefile") == ["second.smk reads SHARED, which first.smk defines"]


def dry_run_jobs(snakefile: Path) -> list[str]:
    """Every job of `snakemake -n -p --forceall` with `snakefile` (rule, wildcards, inputs, outputs, command), sorted,
    without what differs between two dry runs of one DAG (job ids, times, the reasons)."""
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "-p", "--forceall", "--nolock", "--snakefile", snakefile.name],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    text = done.stdout.replace(snakefile.name, "Snakefile")
    jobs = re.split(r"\n(?=(?:local)?rule \w+:\n)", text)[1:]
    skipped = re.compile(r"\s+(jobid|reason):|\[\w{3} \w{3} +\d+ [\d:]+ \d{4}\]|Would remove|Job stats|This was a dry")
    return sorted("\n".join(line for line in job.split("\n") if not skipped.match(line)).strip() for job in jobs)


def test_another_include_order_builds_the_same_dag():
    """The rule files in another order that keeps each after the rules it names (`rules.<name>`): the same jobs."""
    snakefile = (ROOT / "Snakefile").read_text()
    order = ["common", "train", "download", "data", "preprocess", "score", "report", "checker", "metaeval", "paper"]
    includes = "".join(f'include: "workflow/rules/{name}.smk"\n' for name in order)
    reordered = INCLUDE.sub("", snakefile).replace('configfile: "params.yaml"\n', f'configfile: "params.yaml"\n{includes}')
    assert INCLUDE.findall(reordered) != INCLUDE.findall(snakefile)
    variant = ROOT / "Snakefile.include-order"
    variant.write_text(reordered)
    try:
        jobs = dry_run_jobs(ROOT / "Snakefile")
        assert len(jobs) > 500
        assert dry_run_jobs(variant) == jobs
    finally:
        variant.unlink()
