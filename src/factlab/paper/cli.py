"""`factlab paper …`: render the paper's tables and figures from the data and metaeval CSVs."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "datasets-table": "factlab.paper.datasets",
    "frank-table": "factlab.paper.frank",
    "frank-williams-figure": "factlab.paper.frank",
    "frank-ablation-figure": "factlab.paper.frank",
    "screeneval-chunk-size-figure": "factlab.paper.screeneval",
    "alignscore-tuning-figure": "factlab.paper.tuning",
    "reliability-figure": "factlab.paper.reliability",
    "true-published-table": "factlab.paper.true_published",
    "qasem-consistency-table": "factlab.paper.qasem_consistency",
    "agreement-table": "factlab.paper.agreement",
    "qasem-parser-table": "factlab.paper.qasem_parser",
    "mixture-table": "factlab.paper.scorers",
    "true-detection-table": "factlab.paper.scorers",
    "detection-table": "factlab.paper.scorer_tables",
    "leaderboard-table": "factlab.paper.scorer_tables",
    "decisions-table": "factlab.paper.scorer_tables",
    "frank-scorers-table": "factlab.paper.scorer_tables",
    "summeval-scorers-table": "factlab.paper.scorer_tables",
    "localisation-table": "factlab.paper.scorer_tables",
    "error-types-table": "factlab.paper.scorer_tables",
    "correction-table": "factlab.paper.scorer_tables",
    "explanations-table": "factlab.paper.scorer_tables",
    "retrieval-table": "factlab.paper.scorer_tables",
    "qa-decomposition-table": "factlab.paper.scorer_tables",
    "qa-detection-table": "factlab.paper.scorer_tables",
    "pipeline-cost-table": "factlab.paper.pipeline_cost",
    "scoring-throughput-table": "factlab.paper.scoring_throughput",
    "main-tex": "factlab.paper.main_tex",
    "pdf": "factlab.paper.latex",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
