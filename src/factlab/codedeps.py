"""Which factlab source files a `factlab <stage> <command>` run executes: a workflow rule's code inputs.

The import closure is found statically (ast): every `factlab` module a module imports, at any depth
inside it (function-level imports run too), plus the packages' `__init__.py` files that importing
runs. Stage CLIs dispatch lazily (factlab.commands: `importlib`, invisible here), so a command's
own module is named explicitly instead of every command module of its stage. With these as rule
inputs, editing a module reruns exactly the rules whose commands execute it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import factlab

PACKAGE_DIR = Path(factlab.__file__).resolve().parent
TOP = "factlab"
# A module that imports every module of a package by name at run time declares the package here.
DISCOVERY_NAME = "DISCOVERED_PACKAGES"


def module_file(module: str) -> Path | None:
    """The source file of a factlab module or package, None for a name that is not one (an attribute)."""
    if module == TOP:
        return PACKAGE_DIR / "__init__.py"
    relative = Path(*module.split(".")[1:])
    for candidate in (PACKAGE_DIR / relative.with_suffix(".py"), PACKAGE_DIR / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache  # the workflow asks for ~25 closures that share most files: parse each once
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@cache  # every closure walks the shared modules again otherwise: the dry run's largest cost (2,974 walks, 135 closures)
def imported_modules(path: Path) -> frozenset[str]:
    found: set[str] = {module for package in literal_constant(path, DISCOVERY_NAME) or () for module in package_modules(package)}
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == TOP)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] == TOP:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return frozenset(found)


def package_modules(package: str) -> list[str]:
    folder = PACKAGE_DIR / Path(*package.split(".")[1:])
    return [f"{package}.{path.stem}" for path in sorted(folder.glob("*.py")) if path.stem != "__init__"]


def literal_constant(path: Path, name: str) -> object:
    """The value of a module-level `name = <literal>` read without importing the module (None if absent)."""
    for node in parsed(path).body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == name for target in node.targets):
            return ast.literal_eval(node.value)
    return None


def with_parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def module_closure(modules: Iterable[str]) -> list[str]:
    """Sorted repository-relative paths (src/factlab/...) of every file the modules execute on import."""
    seen: set[str] = set()
    files: set[Path] = set()
    stack = [name for module in modules for name in with_parents(module)]
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        path = module_file(module)
        if path is None:
            continue
        files.add(path)
        for imported in imported_modules(path):
            stack.extend(with_parents(imported))
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
