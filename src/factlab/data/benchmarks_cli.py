"""`factlab benchmarks …`: the built benchmarks as plain files, for metrics that run outside factlab."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {"export": "factlab.data.export_command"}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
