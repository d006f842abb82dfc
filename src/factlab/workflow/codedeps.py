"""Which factlab source files a `factlab <stage> <command>` run executes: a workflow rule's code inputs.

The import closure is found statically (ast): every `factlab` module a module imports, at any depth
inside it (function-level imports run too), plus the packages' `__init__.py` files that importing
runs. Stage CLIs dispatch lazily (factlab.commands: `importlib`, invisible here), so a command's
own module is named explicitly instead of every command module of its stage.

A rule's code input is one file per command, `results/code/<stage>.<command>.sha256`: the sha256 of its closure's
paths and contents, written whenever the workflow is read and rewritten only when that changes. Editing a module
reruns exactly the rules whose commands execute it (and undoing the edit, or a checkout that leaves the text as it
was, reruns nothing); Snakemake checks one input per job instead of the closure's dozens of files, most of a dry
run's time. `closure_of_digest` maps the file back to the sources, which dvc.yaml lists as the stage's deps.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # src/factlab
TOP = "factlab"
# A module that imports every module of a package by name at run time declares the package here.
DISCOVERY_NAME = "DISCOVERED_PACKAGES"
# A package whose names are imported from its submodules on first use (PEP 562) maps them here: name -> submodule.
LAZY_EXPORTS_NAME = "LAZY_EXPORTS"
# A module that reads files shipped beside it (package data) names them here, relative to its folder.
PACKAGE_DATA_NAME = "PACKAGE_DATA"
# Module-level literals read without importing: the three above, and a stage CLI's command -> module map.
CONSTANT_NAMES = (DISCOVERY_NAME, LAZY_EXPORTS_NAME, PACKAGE_DATA_NAME, "COMMAND_MODULES")
# What a source file imports depends on its text alone, so parses are kept across runs keyed by the text's
# sha256: every `snakemake` call (a dry run too) needs all closures, and parsing every module again would be a
# large share of a dry run. Bump the version when `ModuleFacts` or its extraction changes.
CACHE_VERSION = 3
# Past this many entries a save keeps only the files this process read (edits leave old texts behind).
CACHE_MAX_ENTRIES = 2000
# Where the rules' code digests are written, relative to the workflow's working directory.
DIGEST_DIR = Path("results/code")
DIGEST_SUFFIX = ".sha256"


def cache_path() -> Path:
    """$FACTLAB_CACHE_DIR, else $XDG_CACHE_HOME/factlab, else ~/.cache/factlab; the file is codedeps.json."""
    base = os.environ.get("FACTLAB_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "factlab"
    return Path(base) / "codedeps.json"


@dataclass(frozen=True)
class ModuleFacts:
    """What the closure needs of one source file: the factlab modules it names in imports, and its
    module-level literal `CONSTANT_NAMES`."""

    imports: frozenset[str]
    constants: dict[str, Any]


def facts_of_source(text: str, filename: str) -> ModuleFacts:
    tree = ast.parse(text, filename=filename)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == TOP)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] == TOP:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)  # `from pkg import module`
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if getattr(target, "id", None) in CONSTANT_NAMES:
                    constants[target.id] = ast.literal_eval(node.value)  # type: ignore[attr-defined]
    return ModuleFacts(frozenset(found), constants)


class FactsCache:
    """`ModuleFacts` by source sha256, loaded once and saved once (atomically) if anything was added.

    A missing, unreadable or stale cache only costs the parses; concurrent runs each replace the whole
    file, and an entry lost that way is parsed again next time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.added = False
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = {}
        entries = stored.get("entries", {}) if isinstance(stored, dict) and stored.get("version") == CACHE_VERSION else {}
        self.entries: dict[str, dict[str, Any]] = entries if isinstance(entries, dict) else {}
        self.used: set[str] = set()

    def facts(self, path: Path) -> ModuleFacts:
        data = path.read_bytes()
        key = hashlib.sha256(data).hexdigest()
        self.used.add(key)
        entry = self.entries.get(key)
        if entry is None:
            facts = facts_of_source(data.decode("utf-8"), str(path))
            self.entries[key] = {"imports": sorted(facts.imports), "constants": facts.constants}
            self.added = True
            return facts
        return ModuleFacts(frozenset(entry["imports"]), entry["constants"])

    def save(self) -> None:
        if not self.added:
            return
        if len(self.entries) > CACHE_MAX_ENTRIES:
            self.entries = {key: entry for key, entry in self.entries.items() if key in self.used}
        try:
            replace_atomically(self.path, json.dumps({"version": CACHE_VERSION, "entries": self.entries}, sort_keys=True))
            self.added = False
        except OSError:  # a read-only home or a full disk: parse every time, as without a cache
            return


def replace_atomically(path: Path, text: str) -> None:
    """`path` replaced by `text` through a temporary beside it, which is removed if the write fails.

    Not factlab.io.atomic_path: it sweeps the target's stray temporaries, assuming one writer per artefact, while
    concurrent `snakemake` calls share these files (and it would import pandas into every Snakefile read)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        raise


@cache  # ~4,000 lookups of ~300 names per workflow
def module_file(module: str) -> Path | None:
    """The source file of a factlab module or package, None for a name that is not one (an attribute)."""
    if module == TOP:
        return PACKAGE_DIR / "__init__.py"
    relative = Path(*module.split(".")[1:])
    for candidate in (PACKAGE_DIR / relative.with_suffix(".py"), PACKAGE_DIR / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache  # one cache object per process: loaded on first use
def facts_cache() -> FactsCache:
    return FactsCache(cache_path())


@cache  # the workflow asks for ~25 closures that share most files: read each once
def module_facts(path: Path) -> ModuleFacts:
    return facts_cache().facts(path)


@cache  # every closure walks the shared modules again otherwise: the dry run's largest cost (2,974 walks, 135 closures)
def imported_modules(path: Path) -> frozenset[str]:
    discovered = {module for package in literal_constant(path, DISCOVERY_NAME) or () for module in package_modules(package)}
    return module_facts(path).imports | discovered


def package_modules(package: str) -> list[str]:
    folder = PACKAGE_DIR / Path(*package.split(".")[1:])
    return [f"{package}.{path.stem}" for path in sorted(folder.glob("*.py")) if path.stem != "__init__"]


def literal_constant(path: Path, name: str) -> Any:
    """The value of a module-level `name = <literal>` (a `CONSTANT_NAMES` entry) read without importing
    the module (None if absent)."""
    if name not in CONSTANT_NAMES:
        raise KeyError(f"{name!r} is not read from sources; known: {CONSTANT_NAMES}")
    return module_facts(path).constants.get(name)


def with_parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def module_closure(modules: Iterable[str]) -> list[str]:
    """Sorted repository-relative paths (src/factlab/...) of every file the modules execute on import, and of the
    package data they read (`PACKAGE_DATA`)."""
    seen: set[str] = set()
    files: set[Path] = set()
    stack = [name for module in modules for name in with_parents(module)]
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        path = module_file(module)
        if path is None:  # `from package import name`: a name the package may import lazily from a submodule
            package, _, name = module.rpartition(".")
            package_file = module_file(package) if package else None
            submodule = (literal_constant(package_file, LAZY_EXPORTS_NAME) or {}).get(name) if package_file else None
            if submodule:
                stack.append(f"{package}.{submodule}")
            continue
        files.add(path)
        files.update(path.parent / name for name in literal_constant(path, PACKAGE_DATA_NAME) or ())
        for imported in imported_modules(path):
            stack.extend(with_parents(imported))
    facts_cache().save()
    root = PACKAGE_DIR.parent.parent
    return sorted(str(path.relative_to(root)) for path in files)


def command_modules(stage: str, command: str | None = None) -> list[str]:
    """The modules `factlab <stage> <command>` imports: the entry point, the stage CLI, the command's module."""
    from factlab.cli import STAGES

    stage_cli = STAGES[stage][0]
    modules = [f"{TOP}.cli", stage_cli]
    command_map = literal_constant(module_file(stage_cli), "COMMAND_MODULES") or {}
    if command is not None and command in command_map:
        modules += [f"{TOP}.commands", command_map[command]]
    elif command_map:
        raise KeyError(f"{stage_cli} has no command {command!r}")
    return modules


def command_code(stage: str, command: str | None = None) -> list[str]:
    """The source files a workflow rule running `factlab <stage> <command>` depends on."""
    return list(cached_command_code(stage, command))  # a copy: the caller may extend its list


@cache  # input functions ask for one command's closure once per job (69 baseline jobs)
def cached_command_code(stage: str, command: str | None) -> tuple[str, ...]:
    return tuple(module_closure(command_modules(stage, command)))


@cache  # closures share most files: each is read once per process
def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def closure_digest(files: Iterable[str], root: Path) -> str:
    """The text of a closure's digest file: the sha256 of its files' paths and contents (`files` relative to `root`),
    then the files, one per line, so that a reader sees what it covers."""
    files = sorted(files)
    listing = "".join(f"{name}\t{file_sha256(root / name)}\n" for name in files)
    return hashlib.sha256(listing.encode()).hexdigest() + "\n" + "".join(f"{name}\n" for name in files)


def write_if_changed(path: Path, text: str) -> None:
    """`path` holding `text`, replaced (atomically: concurrent workflow reads share it) only if it holds anything
    else, so that its mtime moves only when the text does."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    replace_atomically(path, text)


def digest_name(stage: str, command: str | None) -> str:
    return f"{stage}.{command}{DIGEST_SUFFIX}" if command else f"{stage}{DIGEST_SUFFIX}"


@cache  # one write check per command and process
def command_digest(stage: str, command: str | None = None) -> str:
    """The code input of a rule running `factlab <stage> <command>`: its closure's digest file (relative to the
    working directory), written now where it is missing or out of date."""
    path = DIGEST_DIR / digest_name(stage, command)
    write_if_changed(path, closure_digest(cached_command_code(stage, command), PACKAGE_DIR.parent.parent))
    return str(path)


def closure_of_digest(path: str) -> list[str] | None:
    """The source files a code digest file (`command_digest`) covers; None for any other path."""
    name = Path(path).name
    if Path(path).parent != DIGEST_DIR or not name.endswith(DIGEST_SUFFIX):
        return None
    stage, _, command = name.removesuffix(DIGEST_SUFFIX).partition(".")
    return command_code(stage, command or None)
