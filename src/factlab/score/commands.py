"""`factlab score alignscore`: AlignScore of one benchmark with the trained aligner (or a hub NLI model).

Reads the benchmark and its preprocessed sentences (the same examples the preprocess stage kept:
`--max-examples`), writes `alignscore.parquet` (example_id, score, per-sentence detail) and a
report (engine counts: pairs, duplicates, batches, padding, premise cuts; seconds, pairs/s).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from factlab.commands import max_examples, positive_int, write_report
from factlab.errors import FactlabError
from factlab.io import write_parquet
from factlab.runtime import DEVICES, set_threads

if TYPE_CHECKING:
    from factlab.score.alignscore import AlignScoreSettings


def register(commands: Any) -> None:
    from factlab.models.engine import PRECISIONS

    alignscore = commands.add_parser("alignscore", help="AlignScore of every example of a benchmark")
    alignscore.add_argument("--benchmark", required=True)
    alignscore.add_argument("--data", required=True, help="results/data/<benchmark>.parquet")
    alignscore.add_argument("--sentences", required=True, help="results/preprocess/<benchmark>/sentences.parquet")
    alignscore.add_argument("--max-examples", type=max_examples, required=True, help="'all' or N: the examples preprocess kept")
    alignscore.add_argument("--model", required=True, help="a trained aligner folder, or a hub id / folder of an NLI classifier")
    alignscore.add_argument("--entailment-label", required=True, help="label name of entailment (NLI classifiers only)")
    alignscore.add_argument("--choice", required=True, help="results/score/alignscore_choice.json (tuned on validation)")
    alignscore.add_argument("--chunk-policy", choices=("reference", "even"), required=True)
    alignscore.add_argument("--token-budget", type=positive_int, required=True)
    alignscore.add_argument("--max-batch-pairs", type=positive_int, required=True)
    alignscore.add_argument("--precision", choices=PRECISIONS, required=True)
    alignscore.add_argument("--threads", type=int, required=True)
    alignscore.add_argument("--device", choices=DEVICES, required=True)
    alignscore.add_argument("--out", required=True)
    alignscore.add_argument("--report", required=True)
    alignscore.set_defaults(func=run_alignscore)


def run_alignscore(args: argparse.Namespace) -> None:
    from factlab.models.aligner import load_pair_scorer
    from factlab.models.engine import EngineSettings
    from factlab.preprocess.benchmark import select_examples
    from factlab.score.alignscore import score_benchmark

    set_threads(args.threads)
    started = time.perf_counter()
    examples = select_examples(pd.read_parquet(args.data), args.benchmark, args.max_examples)
    scorer = load_pair_scorer(args.model, device=args.device, entailment_label=args.entailment_label)
    settings = tuned_settings(args.choice, args.chunk_policy)
    engine = EngineSettings(args.token_budget, args.max_batch_pairs, args.precision)
    load_seconds = time.perf_counter() - started
    scores, counts = score_benchmark(examples, pd.read_parquet(args.sentences), scorer, settings, engine)
    seconds = time.perf_counter() - started - load_seconds
    write_parquet(scores, args.out)
    report = {
        "benchmark": args.benchmark,
        "model": scorer.identity,
        "device": str(scorer.device),
        "settings": {
            "words_per_chunk": settings.words_per_chunk,
            "chunk_policy": settings.chunk_policy,
            "aggregation": settings.aggregation,
        },
        **counts,
        "load_seconds": round(load_seconds, 2),
        "score_seconds": round(seconds, 2),
        "pairs_per_s": round(counts["distinct_pairs_scored"] / seconds, 1) if seconds > 0 else None,
    }
    write_report(report, args.report)


def tuned_settings(choice_path: str, chunk_policy: str) -> AlignScoreSettings:
    """AlignScore's settings from the tuning rule's choice (`factlab score alignscore-tune`)."""
    from factlab.score.alignscore import AlignScoreSettings

    choice = json.loads(Path(choice_path).read_text())
    try:
        return AlignScoreSettings(int(choice["words_per_chunk"]), chunk_policy, str(choice["aggregation"]))  # type: ignore[arg-type]
    except KeyError as error:
        raise FactlabError(f"{choice_path}: no field {error.args[0]!r} (written by factlab score alignscore-tune)") from error
