"""`factlab score summac-zs`: SummaC-ZS of one shard of a benchmark with the trained aligner (or a hub NLI model)."""

from __future__ import annotations

import argparse
import time
from typing import Any

import pandas as pd

from factlab.commands import settings_from_json
from factlab.score.commands import add_job_arguments, engine_settings, job_examples, write_job


def register(commands: Any) -> None:
    summac = commands.add_parser("summac-zs", help="SummaC-ZS of every example of a benchmark (one shard)")
    add_job_arguments(summac, model=True)
    summac.add_argument("--contradiction-label", required=True, help="label name of contradiction (NLI classifiers only)")
    summac.add_argument("--settings", required=True, help="JSON of score.summac_zs")
    summac.set_defaults(func=run_summac_zs)


def run_summac_zs(args: argparse.Namespace) -> None:
    from dataclasses import asdict

    from factlab.models.aligner import load_pair_scorer
    from factlab.score.summac import SummaCSettings, score_summac_zs

    settings = settings_from_json(args.settings, SummaCSettings, "score.summac_zs")
    started = time.perf_counter()
    examples = job_examples(args)
    scorer = load_pair_scorer(
        args.model, device=args.device, entailment_label=args.entailment_label, contradiction_label=args.contradiction_label
    )
    load_seconds = time.perf_counter() - started
    scores, counts = score_summac_zs(examples, pd.read_parquet(args.sentences), scorer, settings, engine_settings(args))
    write_job(
        args,
        "summac_zs",
        scores,
        {**counts, "load_seconds": round(load_seconds, 2)},
        time.perf_counter() - started - load_seconds,
        model=scorer.identity,
        device=str(scorer.device),
        settings=asdict(settings),
    )
