"""`factlab metaeval …`: meta-evaluation commands (statistics as CSV/JSON under results/metaeval/)."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "frank-correlations": "factlab.metaeval.published.frank",
    "frank-williams": "factlab.metaeval.published.frank",
    "frank-ablation": "factlab.metaeval.published.frank",
    "frank-summary": "factlab.metaeval.published.frank",
    "screeneval": "factlab.metaeval.published.screeneval",
    "true-published": "factlab.metaeval.published.true_published",
    "qasem-consistency": "factlab.metaeval.published.qasem_consistency",
    "annotator-agreement": "factlab.metaeval.published.agreement",
    "qasem-parser": "factlab.metaeval.qasem_parser",
    "detection": "factlab.metaeval.scorers",
    "frank-scorers": "factlab.metaeval.frank_scorers",
    "summeval-scorers": "factlab.metaeval.summeval_scorers",
    "localisation": "factlab.metaeval.localisation_command",
    "error-types": "factlab.metaeval.error_types_command",
    "qa-decomposition": "factlab.metaeval.qa_decomposition",
    "qa-detection": "factlab.metaeval.qa_detection",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
