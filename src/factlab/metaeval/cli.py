"""`factlab metaeval …`: the commands of every module in factlab.metaeval.published."""

from __future__ import annotations

import argparse
import importlib
import pkgutil


def register(parser: argparse.ArgumentParser) -> None:
    import factlab.metaeval.published as package

    commands = parser.add_subparsers(dest="command", required=True)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(commands)
