"""`factlab report …`: static HTML pages for reading a scorer's outputs (results/report/<benchmark>/<scorer>.html)."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "localise": "factlab.report.localise_command",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
