"""`factlab paper …`: render the paper's tables and figures from the data and metaeval CSVs."""

from __future__ import annotations

import argparse

from factlab.commands import register_commands

COMMAND_MODULES = {
    "datasets-table": "factlab.paper.datasets_command",
    "frank-table": "factlab.paper.frank_command",
    "frank-williams-figure": "factlab.paper.frank_command",
    "frank-ablation-figure": "factlab.paper.frank_command",
    "screeneval-chunk-size-figure": "factlab.paper.screeneval_command",
    "alignscore-tuning-figure": "factlab.paper.tuning_command",
    "reliability-figure": "factlab.paper.reliability_command",
    "true-published-table": "factlab.paper.true_published_command",
    "qasem-consistency-table": "factlab.paper.qasem_consistency_command",
    "agreement-table": "factlab.paper.agreement_command",
    "qasem-parser-table": "factlab.paper.qasem_parser_command",
    "mixture-table": "factlab.paper.scorers_command",
    "true-detection-table": "factlab.paper.scorers_command",
    "detection-table": "factlab.paper.scorer_tables_command",
    "leaderboard-table": "factlab.paper.scorer_tables_command",
    "decisions-table": "factlab.paper.scorer_tables_command",
    "calibration-gain-table": "factlab.paper.scorer_tables_command",
    "frank-scorers-table": "factlab.paper.scorer_tables_command",
    "summeval-scorers-table": "factlab.paper.scorer_tables_command",
    "localisation-table": "factlab.paper.scorer_tables_command",
    "error-types-table": "factlab.paper.scorer_tables_command",
    "correction-table": "factlab.paper.scorer_tables_command",
    "explanations-table": "factlab.paper.scorer_tables_command",
    "retrieval-table": "factlab.paper.scorer_tables_command",
    "qa-decomposition-table": "factlab.paper.scorer_tables_command",
    "qa-detection-table": "factlab.paper.scorer_tables_command",
    "pipeline-cost-table": "factlab.paper.pipeline_cost_command",
    "scoring-throughput-table": "factlab.paper.scoring_throughput_command",
    "main-tex": "factlab.paper.main_tex_command",
    "pdf": "factlab.paper.latex_command",
}


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    register_commands(parser, COMMAND_MODULES, command)
