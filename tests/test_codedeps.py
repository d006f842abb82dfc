"""Rules' code inputs (factlab.workflow.codedeps): the static import closure of each command covers every
factlab module the command really imports, and an edit to one analysis reaches only its own rules."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from factlab.cli import STAGES
from factlab.metaeval.cli import COMMAND_MODULES as METAEVAL_COMMANDS
from factlab.paper.cli import COMMAND_MODULES as PAPER_COMMANDS
from factlab.preprocess.cli import COMMAND_MODULES as PREPROCESS_COMMANDS
from factlab.score.cli import COMMAND_MODULES as SCORE_COMMANDS
from factlab.train.cli import COMMAND_MODULES as TRAIN_COMMANDS
from factlab.workflow import codedeps
from factlab.workflow.codedeps import FactsCache, command_code, module_closure

FRANK = "src/factlab/metaeval/analyses/published/frank_command.py"
COMMANDS = [
    ("download", None),
    ("data", None),
    ("benchmarks", "export"),
    *[("train", command) for command in TRAIN_COMMANDS],
    *[("preprocess", command) for command in PREPROCESS_COMMANDS],
    *[("score", command) for command in SCORE_COMMANDS],
    *[("metaeval", command) for command in METAEVAL_COMMANDS],
    *[("paper", command) for command in PAPER_COMMANDS],
]

# Builds the parser of one command as `factlab` does, then lists the factlab source files imported.
PROBE = """
import json, sys
from factlab.cli import build_parser
argv = sys.argv[1:]
build_parser(argv)
modules = [m for name, m in list(sys.modules.items()) if name.split(".")[0] == "factlab"]
files = sorted(m.__file__ for m in modules if getattr(m, "__file__", None))
print(json.dumps(files))
"""


@pytest.mark.parametrize(("stage", "command"), COMMANDS)
def test_static_closure_covers_what_the_command_imports(stage: str, command: str | None) -> None:
    argv = [stage] + ([command] if command else [])
    result = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True)
    imported = {path[path.index("src/factlab/") :] for path in json.loads(result.stdout)}
    missing = imported - set(command_code(stage, command))
    assert not missing, f"factlab {' '.join(argv)} imports files its rules would not list: {sorted(missing)}"


def test_package_data_a_module_reads_is_a_code_input() -> None:
    # the report page's stylesheet and script: the rule rendering the page reruns when either changes
    report_code = command_code("report", "localise")
    assert {"src/factlab/report/static/page.css", "src/factlab/report/static/page.js"} <= set(report_code)
    # every declared file exists beside its module (a rename would otherwise drop the input silently)
    declared = [
        path.parent / name
        for path in codedeps.PACKAGE_DIR.rglob("*.py")
        for name in codedeps.literal_constant(path, codedeps.PACKAGE_DATA_NAME) or ()
    ]
    assert declared and all(path.is_file() for path in declared), declared


def test_frank_module_reaches_only_frank_commands() -> None:
    reaching = {(stage, command) for stage, command in COMMANDS if FRANK in command_code(stage, command)}
    assert reaching == {
        ("metaeval", "frank-correlations"),
        ("metaeval", "frank-williams"),
        ("metaeval", "frank-ablation"),
        ("metaeval", "frank-summary"),
        ("metaeval", "frank-scorers"),  # factlab's scorers under FRANK's protocol
        ("metaeval", "summeval-scorers"),  # the same protocol on SummEval, with FRANK's functions
        ("paper", "frank-table"),
        ("paper", "frank-williams-figure"),
        ("paper", "frank-ablation-figure"),
    }


def test_no_upward_imports() -> None:
    """No stage runs code of a later stage (train and preprocess run no scoring, metaeval or paper code)."""
    for stage, command in [
        *[("train", c) for c in TRAIN_COMMANDS],
        ("download", None),
        ("data", None),
        ("benchmarks", "export"),
        *[("preprocess", c) for c in PREPROCESS_COMMANDS],
        *[("score", c) for c in SCORE_COMMANDS],
    ]:
        later = ("/metaeval/", "/paper/") if stage == "score" else ("/score/", "/metaeval/", "/paper/")
        upward = [path for path in command_code(stage, command) if any(part in path for part in later)]
        assert not upward, (stage, command, upward)


def test_adapters_found_by_discovery_are_inputs_of_data_builds() -> None:
    files = command_code("data", "build")
    assert "src/factlab/data/adapters/summeval.py" in files and "src/factlab/data/adapters/qasrl.py" in files


def test_closure_includes_parent_packages_and_rejects_unknown_commands() -> None:
    assert module_closure(["factlab.models.qasem.lexicon"])[:3] == [
        "src/factlab/__init__.py",
        "src/factlab/errors.py",
        "src/factlab/models/__init__.py",
    ]
    assert list(STAGES) == [
        "download",
        "data",
        "benchmarks",
        "preprocess",
        "train",
        "score",
        "metaeval",
        "paper",
        "report",
        "checker",
        "check",
        "export",
        "calibrate",
    ]
    with pytest.raises(KeyError, match="no command"):
        command_code("metaeval", "frank-everything")


def test_a_cached_closure_is_not_changed_by_a_caller_editing_its_copy() -> None:
    """The workflow asks for one command's closure once per job, from a cache: a rule that appends to the list it got
    must not change what the next rule gets."""
    first = command_code("score", "ensemble-fit")
    expected = list(first)
    first.append("src/factlab/not_a_module.py")
    assert command_code("score", "ensemble-fit") == expected
    assert "src/factlab/score/ensemble.py" in expected


def clear_process_caches() -> None:
    for function in (codedeps.facts_cache, codedeps.module_facts, codedeps.imported_modules, codedeps.cached_command_code):
        function.cache_clear()


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty parse cache of this test's own, and no closures remembered by this process."""
    monkeypatch.setenv("FACTLAB_CACHE_DIR", str(tmp_path / "cache"))
    clear_process_caches()
    yield tmp_path / "cache"
    clear_process_caches()  # later tests get closures from the user's cache again


def every_closure() -> dict[tuple[str, str | None], list[str]]:
    return {(stage, command): command_code(stage, command) for stage, command in COMMANDS}


def test_a_second_run_reads_closures_from_the_cache_without_parsing(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = every_closure()
    stored = json.loads((cache_dir / "codedeps.json").read_text())
    assert len(stored["entries"]) >= 100  # one per source file the closures read
    clear_process_caches()

    def no_parse(*args: object, **kwargs: object) -> ast.Module:
        raise AssertionError("parsed a source the cache holds")

    monkeypatch.setattr(codedeps.ast, "parse", no_parse)
    assert every_closure() == parsed


def test_an_edited_source_is_parsed_again_and_a_broken_cache_is_ignored(tmp_path: Path) -> None:
    """Entries are keyed by the text, not the path: a cache written before an edit cannot hide the edit."""
    module, cache_file = tmp_path / "module.py", tmp_path / "codedeps.json"
    module.write_text("import factlab.io\nCOMMAND_MODULES = {'a': 'factlab.a'}\n")
    first = FactsCache(cache_file)
    assert first.facts(module) == codedeps.ModuleFacts(frozenset({"factlab.io"}), {"COMMAND_MODULES": {"a": "factlab.a"}})
    first.save()
    module.write_text("from factlab.score import engine\n")
    assert FactsCache(cache_file).facts(module).imports == {"factlab.score", "factlab.score.engine"}
    cache_file.write_text("{not json")
    assert FactsCache(cache_file).facts(module).imports == {"factlab.score", "factlab.score.engine"}


def test_a_failed_save_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk at the rename: no cache this time, and no temporary file left beside where it would be."""
    cache = FactsCache(tmp_path / "cache" / "codedeps.json")
    cache.facts(Path(codedeps.__file__))

    def disk_full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(codedeps.os, "replace", disk_full)
    cache.save()
    assert list((tmp_path / "cache").iterdir()) == []
    monkeypatch.undo()
    cache.save()  # still marked unsaved, so the next save writes it
    assert [path.name for path in (tmp_path / "cache").iterdir()] == ["codedeps.json"]


def test_a_name_a_package_imports_lazily_brings_in_only_its_submodule() -> None:
    # `from factlab.metaeval import fleiss_kappa`: factlab.metaeval imports it from .agreement on first use (LAZY_EXPORTS)
    closure = module_closure(["factlab.metaeval.analyses.published.agreement_command"])
    assert "src/factlab/metaeval/agreement.py" in closure
    assert "src/factlab/metaeval/williams.py" not in closure


def test_lazy_packages_are_imported_only_in_forms_the_closure_follows() -> None:
    # codedeps follows `from factlab.metaeval import name` to the submodule defining it; `import factlab.metaeval`,
    # `from factlab import metaeval` and `from factlab.metaeval import *` reach names it cannot see.
    lazy = {
        ".".join(("factlab", *path.parent.relative_to(codedeps.PACKAGE_DIR).parts))
        for path in codedeps.PACKAGE_DIR.rglob("__init__.py")
        if codedeps.literal_constant(path, codedeps.LAZY_EXPORTS_NAME)
    }
    assert "factlab.metaeval" in lazy
    offending = []
    for path in sorted(codedeps.PACKAGE_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                offending += [f"{path}: import {alias.name}" for alias in node.names if alias.name in lazy]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = {f"{node.module}.{alias.name}" for alias in node.names}
                if names & lazy or (node.module in lazy and "*" in {alias.name for alias in node.names}):
                    offending.append(f"{path}: from {node.module} import ...")
    assert not offending


def test_a_digest_file_moves_only_when_its_text_does(tmp_path: Path) -> None:
    path = tmp_path / "code" / "score.alignscore.sha256"
    codedeps.write_if_changed(path, "abc\n")
    first = path.stat().st_mtime_ns
    codedeps.write_if_changed(path, "abc\n")  # the same text: not written
    assert path.stat().st_mtime_ns == first and path.read_text() == "abc\n"
    os.utime(path, ns=(first - 10**9, first - 10**9))
    codedeps.write_if_changed(path, "abd\n")
    assert path.read_text() == "abd\n" and path.stat().st_mtime_ns > first - 10**9
    assert [item.name for item in path.parent.iterdir()] == [path.name]  # no temporary left


def test_a_closure_digest_follows_its_files_contents(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    digest = codedeps.closure_digest(["b.py", "a.py"], tmp_path)
    lines = digest.splitlines()
    a_sha, b_sha = (hashlib.sha256(text).hexdigest() for text in (b"x = 1\n", b"y = 2\n"))
    listing = f"a.py\t{a_sha}\nb.py\t{b_sha}\n"
    assert lines[0] == hashlib.sha256(listing.encode()).hexdigest()  # worked by hand: paths and contents, sorted
    assert lines[1:] == ["a.py", "b.py"]
    codedeps.file_sha256.cache_clear()
    (tmp_path / "b.py").write_text("y = 3\n")
    assert codedeps.closure_digest(["a.py", "b.py"], tmp_path).splitlines()[0] != lines[0]
    codedeps.file_sha256.cache_clear()


def test_a_rule_code_input_is_its_closure_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    codedeps.command_digest.cache_clear()
    path = codedeps.command_digest("metaeval", "frank-williams")
    assert path == "results/code/metaeval.frank-williams.sha256"
    text = Path(path).read_text().splitlines()
    assert text[1:] == command_code("metaeval", "frank-williams") and FRANK in text
    assert codedeps.closure_of_digest(path) == command_code("metaeval", "frank-williams")
    assert codedeps.closure_of_digest("results/code/download.sha256") == command_code("download")
    assert codedeps.closure_of_digest("results/data/frank.parquet") is None
    codedeps.command_digest.cache_clear()
