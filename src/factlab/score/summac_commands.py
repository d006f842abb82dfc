"""`factlab score summac-zs | summac-conv`: SummaC-ZS or SummaC-Conv of one benchmark shard (trained aligner or hub NLI)."""

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
    conv = commands.add_parser("summac-conv", help="SummaC-Conv of every example of a benchmark (one shard)")
    add_job_arguments(conv, model=True)
    conv.add_argument("--contradiction-label", required=True, help="label name of contradiction (NLI classifiers only)")
    conv.add_argument("--head", required=True, help="results/models/summac_conv/head.safetensors")
    conv.add_argument("--settings", required=True, help="JSON of score.summac_conv (granularity, bins, variant)")
    conv.set_defaults(func=run_summac_conv)


def run_summac_zs(args: argparse.Namespace) -> None:
    from factlab.score.summac import SummaCSettings, score_summac_zs

    settings = settings_from_json(args.settings, SummaCSettings, "score.summac_zs")
    run_pair_job(args, "summac_zs", score_summac_zs, settings, contradiction_label=args.contradiction_label)


def run_summac_conv(args: argparse.Namespace) -> None:
    from functools import partial

    from factlab.score.summac_conv import ConvSettings, load_head, score_summac_conv

    settings = settings_from_json(args.settings, ConvSettings, "score.summac_conv")
    score = partial(score_summac_conv, head=load_head(args.head, settings))
    run_pair_job(args, "summac_conv", score, settings, contradiction_label=args.contradiction_label)
