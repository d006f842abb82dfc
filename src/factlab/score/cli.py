"""`factlab score …`: factlab's scorers on a preprocessed benchmark (results/score/<benchmark>/<scorer>.parquet)."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "alignscore": "factlab.score.alignscore_commands",
    "alignscore-tune": "factlab.score.tuning_commands",
    "merge": "factlab.score.merge_command",
    "embedding-cosine": "factlab.score.baseline_commands",
    "rouge": "factlab.score.baseline_commands",
    "bertscore-precision": "factlab.score.baseline_commands",
    "openie-triples": "factlab.score.baseline_commands",
    "summac-zs": "factlab.score.summac_commands",
    "scale": "factlab.score.scale_commands",
    "scale-retrieval": "factlab.score.scale_commands",
    "summac-conv": "factlab.score.summac_commands",
    "summac-conv-fit": "factlab.score.summac_conv_fit",
    "qasem-consistency": "factlab.score.qasem_consistency_commands",
    "throughput": "factlab.score.throughput",
    "training-overlap": "factlab.score.training_overlap",
    "ensemble-fit": "factlab.score.ensemble_commands",
    "ensemble": "factlab.score.ensemble_commands",
    "import": "factlab.score.custom_commands",
    "python": "factlab.score.custom_commands",
    "published": "factlab.score.custom_commands",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
