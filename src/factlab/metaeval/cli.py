"""`factlab metaeval …`: meta-evaluation commands (statistics as CSV/JSON under results/metaeval/), one module of
factlab.metaeval.analyses each."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "frank-correlations": "factlab.metaeval.analyses.published.frank_command",
    "frank-williams": "factlab.metaeval.analyses.published.frank_command",
    "frank-ablation": "factlab.metaeval.analyses.published.frank_command",
    "frank-summary": "factlab.metaeval.analyses.published.frank_command",
    "screeneval": "factlab.metaeval.analyses.published.screeneval_command",
    "true-published": "factlab.metaeval.analyses.published.true_published_command",
    "qasem-consistency": "factlab.metaeval.analyses.published.qasem_consistency_command",
    "annotator-agreement": "factlab.metaeval.analyses.published.agreement_command",
    "qasem-parser": "factlab.metaeval.analyses.qasem_parser_command",
    "detection": "factlab.metaeval.analyses.detection_command",
    "leaderboard": "factlab.metaeval.analyses.leaderboard_command",
    "decisions": "factlab.metaeval.analyses.decisions_command",
    "calibration-gain": "factlab.metaeval.analyses.calibration_gain_command",
    "frank-scorers": "factlab.metaeval.analyses.frank_scorers_command",
    "summeval-scorers": "factlab.metaeval.analyses.summeval_scorers_command",
    "localisation": "factlab.metaeval.analyses.localisation_command",
    "token-reading": "factlab.metaeval.analyses.token_reading_command",
    "error-types": "factlab.metaeval.analyses.error_types_command",
    "qa-decomposition": "factlab.metaeval.analyses.qa_decomposition_command",
    "qa-detection": "factlab.metaeval.analyses.qa_detection_command",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
