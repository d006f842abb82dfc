"""`factlab score …`: factlab's scorers on a preprocessed benchmark (results/score/<benchmark>/<scorer>.parquet)."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "alignscore": "factlab.score.alignscore_command",
    "alignscore-tune": "factlab.score.tuning_command",
    "merge": "factlab.score.merge_command",
    "embedding-cosine": "factlab.score.baseline_command",
    "rouge": "factlab.score.baseline_command",
    "bertscore-precision": "factlab.score.baseline_command",
    "openie-triples": "factlab.score.baseline_command",
    "summac-zs": "factlab.score.summac_command",
    "scale": "factlab.score.scale_command",
    "scale-retrieval": "factlab.score.scale_command",
    "summac-conv": "factlab.score.summac_command",
    "summac-conv-fit": "factlab.score.summac_conv_fit_command",
    "qasem-consistency": "factlab.score.qasem_consistency_command",
    "throughput": "factlab.score.throughput_command",
    "training-overlap": "factlab.score.training_overlap_command",
    "ensemble-fit": "factlab.score.ensemble_command",
    "ensemble": "factlab.score.ensemble_command",
    "import": "factlab.score.custom_command",
    "python": "factlab.score.custom_command",
    "published": "factlab.score.custom_command",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
