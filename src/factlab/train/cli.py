"""`factlab train …`: train factlab's models (written under results/models/ only).

- `qasem-parser`: the QASem parser (factlab.train.parser_command).
- `aligner-mixture`, `leakage-check`, `aligner`: the alignment model's training mixture, the check
  that no training pair shares an 8-word run with evaluated text (factlab.train.mixture_command), and its
  training (factlab.train.aligner_command).
- `export-graph`: the trained aligner as an ONNX graph for OpenVINO, checked against torch (factlab.train.graph_command).
"""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "qasem-parser": "factlab.train.parser_command",
    "aligner-mixture": "factlab.train.mixture_command",
    "leakage-check": "factlab.train.mixture_command",
    "aligner": "factlab.train.aligner_command",
    "unpack-mpnet": "factlab.train.encoder_command",
    "export-graph": "factlab.train.graph_command",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
