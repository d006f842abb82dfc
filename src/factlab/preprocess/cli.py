"""`factlab preprocess …`: text units (sentences, triples, report) and QA units of one benchmark."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "sentences": "factlab.preprocess.benchmark_command",
    "triples": "factlab.preprocess.benchmark_command",
    "report": "factlab.preprocess.benchmark_command",
    "qas": "factlab.preprocess.qas_command",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
