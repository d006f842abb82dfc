"""`factlab score summac-zs | summac-conv`: SummaC-ZS or SummaC-Conv of one benchmark shard (trained aligner or hub NLI).

Both read the same NLI matrices (Conv uses SummaC-ZS's backbone and labels): the ZS job writes the pairs it
scored (`--pairs-out`) and the Conv job of the same shard starts from them (`--pairs-in`), so the model runs
once per pair; the Conv report counts the pairs it found (`pairs_from_cache_or_duplicates`).
"""

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
    summac.add_argument("--pairs-out", required=True, help="the job's scored pairs (a PairCache parquet), for SummaC-Conv")
    summac.set_defaults(func=run_summac_zs)
    conv = commands.add_parser("summac-conv", help="SummaC-Conv of every example of a benchmark (one shard)")
    add_job_arguments(conv, model=True)
    conv.add_argument("--contradiction-label", required=True, help="label name of contradiction (NLI classifiers only)")
    conv.add_argument("--head", required=True, help="results/models/summac_conv/head.safetensors")
    conv.add_argument("--settings", required=True, help="JSON of score.summac_conv (granularity, bins, variant)")
    conv.add_argument("--pairs-in", required=True, help="SummaC-ZS's scored pairs of the same shard, or 'none'")
    conv.set_defaults(func=run_summac_conv)


def run_summac_zs(args: argparse.Namespace) -> None:
    from factlab.score.summac import SummaCSettings, score_summac_zs

    settings = settings_from_json(args.settings, SummaCSettings, "score.summac_zs")
    run_pair_job(
        args, "summac_zs", score_summac_zs, settings, pairs_out=args.pairs_out, contradiction_label=args.contradiction_label
    )


def run_summac_conv(args: argparse.Namespace) -> None:
    from functools import partial

    from factlab.score.summac_conv import ConvSettings, load_head, score_summac_conv

    settings = settings_from_json(args.settings, ConvSettings, "score.summac_conv")
    score = partial(score_summac_conv, head=load_head(args.head, settings))
    pairs_in = None if args.pairs_in == "none" else args.pairs_in
    run_pair_job(args, "summac_conv", score, settings, pairs_in=pairs_in, contradiction_label=args.contradiction_label)
