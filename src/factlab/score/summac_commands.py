"""`factlab score summac-zs`: SummaC-ZS of one shard of a benchmark with the trained aligner (or a hub NLI model)."""

from __future__ import annotations

import argparse
from typing import Any

from factlab.commands import settings_from_json
from factlab.score.commands import add_job_arguments, run_pair_job


def register(commands: Any) -> None:
    summac = commands.add_parser("summac-zs", help="SummaC-ZS of every example of a benchmark (one shard)")
    add_job_arguments(summac, model=True)
    summac.add_argument("--contradiction-label", required=True, help="label name of contradiction (NLI classifiers only)")
    summac.add_argument("--settings", required=True, help="JSON of score.summac_zs")
    summac.set_defaults(func=run_summac_zs)


def run_summac_zs(args: argparse.Namespace) -> None:
    from factlab.score.summac import SummaCSettings, score_summac_zs

    settings = settings_from_json(args.settings, SummaCSettings, "score.summac_zs")
    run_pair_job(args, "summac_zs", score_summac_zs, settings, contradiction_label=args.contradiction_label)
