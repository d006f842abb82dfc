"""`factlab checker …`: the checker folder built from the trained models, and its latency benchmark."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "package": "factlab.checker.pipeline.package_command",
    "latency": "factlab.checker.pipeline.latency_command",
    "correction": "factlab.checker.pipeline.correction_command",
    "explanations": "factlab.checker.pipeline.explanation_command",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
