"""`factlab metaeval …`: meta-evaluation commands (statistics as CSV/JSON under results/metaeval/), one module of
factlab.metaeval.analyses each."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "frank-correlations": "factlab.metaeval.analyses.published.frank",
    "frank-williams": "factlab.metaeval.analyses.published.frank",
    "frank-ablation": "factlab.metaeval.analyses.published.frank",
    "frank-summary": "factlab.metaeval.analyses.published.frank",
    "screeneval": "factlab.metaeval.analyses.published.screeneval",
    "true-published": "factlab.metaeval.analyses.published.true_published",
    "qasem-consistency": "factlab.metaeval.analyses.published.qasem_consistency",
    "annotator-agreement": "factlab.metaeval.analyses.published.agreement",
    "qasem-parser": "factlab.metaeval.analyses.qasem_parser",
    "detection": "factlab.metaeval.analyses.detection",
    "leaderboard": "factlab.metaeval.analyses.leaderboard",
    "decisions": "factlab.metaeval.analyses.decisions",
    "frank-scorers": "factlab.metaeval.analyses.frank_scorers",
    "summeval-scorers": "factlab.metaeval.analyses.summeval_scorers",
    "localisation": "factlab.metaeval.analyses.localisation",
    "token-reading": "factlab.metaeval.analyses.token_reading",
    "error-types": "factlab.metaeval.analyses.error_types",
    "qa-decomposition": "factlab.metaeval.analyses.qa_decomposition",
    "qa-detection": "factlab.metaeval.analyses.qa_detection",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
