"""`factlab preprocess …`: text units (sentences, triples, report) and QA units of one benchmark."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "sentences": "factlab.preprocess.commands",
    "triples": "factlab.preprocess.commands",
    "report": "factlab.preprocess.commands",
    "qas": "factlab.preprocess.qas",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
