"""`factlab score scale` (SCALE of one shard of a benchmark) and `factlab score scale-retrieval`
(SCALE's evidence retrieval on WiCE claims: binary search vs brute force, recall@k and model calls)."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from typing import Any

from factlab.commands import positive_int, write_report
from factlab.errors import FactlabError
from factlab.score.commands import add_job_arguments, add_model_arguments, run_pair_job
from factlab.text.chunking import CHUNK_POLICIES


def register(commands: Any) -> None:
    scale = commands.add_parser("scale", help="SCALE of every example of a benchmark (one shard)")
    add_job_arguments(scale, model=True)
    scale.add_argument("--settings", required=True, help="JSON of score.scale (without the model keys)")
    scale.set_defaults(func=run_scale)

    retrieval = commands.add_parser("scale-retrieval", help="SCALE's evidence retrieval on WiCE claims: recall@k and calls")
    retrieval.add_argument("--data", required=True, help="results/data/wice_claims.parquet")
    add_model_arguments(retrieval)
    retrieval.add_argument("--settings", required=True, help="JSON of score.scale (without the model keys)")
    retrieval.add_argument("--threads", type=positive_int, required=True)
    retrieval.add_argument(
        "--alignscore-choice",
        default=None,
        help="results/score/alignscore_choice.json: its words_per_chunk chunks the page for the best_chunk method",
    )
    retrieval.add_argument(
        "--chunk-policy", choices=CHUNK_POLICIES, required=True, help="AlignScore's chunk policy (score.alignscore.chunk_policy)"
    )
    retrieval.add_argument("--out", required=True, help="CSV: one row per (claim, method, k)")
    retrieval.add_argument("--report", required=True, help="JSON: recall@k, hit@k and mean calls per method")
    retrieval.set_defaults(func=run_scale_retrieval)


def scale_settings(text: str) -> Any:
    from factlab.score.scale import ScaleSettings, from_mapping

    values = json.loads(text)
    if not isinstance(values, dict):
        raise FactlabError("--settings must be a JSON object")
    return from_mapping(ScaleSettings, values, "score.scale")


def run_scale(args: argparse.Namespace) -> None:
    from factlab.score.scale import score_scale

    run_pair_job(args, "scale", score_scale, scale_settings(args.settings))


def run_scale_retrieval(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.io import write_text
    from factlab.models.engine import engine_settings
    from factlab.models.loading import load_pair_scorer
    from factlab.runtime import set_threads
    from factlab.score.scale import EngineScores, whole_premise, window_premises
    from factlab.score.scale_retrieval import ChunkSettings, evaluate_retrieval, read_claims
    from factlab.score.tuning import read_choice

    settings = scale_settings(args.settings)
    set_threads(args.threads)
    started = time.perf_counter()
    claims, counts = read_claims(pd.read_parquet(args.data), args.data, settings.retrieval)
    scorer = load_pair_scorer(
        args.model, device=args.device, entailment_label=args.entailment_label, runtime=args.runtime, threads=args.threads
    )
    if settings.retrieval.group_premise == "windows" and settings.chunk_size > scorer.max_length:
        raise FactlabError(f"score.scale.chunk_size {settings.chunk_size} exceeds the model's max_length {scorer.max_length}")
    premises = window_premises(scorer, settings) if settings.retrieval.group_premise == "windows" else whole_premise
    load_seconds = time.perf_counter() - started
    engine = engine_settings(args, scorer.device)
    score = EngineScores(scorer, engine, description="scale retrieval pairs")
    chunking = None
    if args.alignscore_choice:
        choice = read_choice(args.alignscore_choice, args.chunk_policy)
        chunking = ChunkSettings(int(choice["words_per_chunk"]), args.chunk_policy)
    table, summary = evaluate_retrieval(claims, score, settings.retrieval, premises, chunking)
    write_text(table.to_csv(index=False), args.out)
    report = {
        "scorer": "scale_retrieval",
        "model": scorer.identity,
        "device": str(scorer.device),
        "precision": engine.precision,
        "settings": asdict(settings),
        "best_chunk": asdict(chunking) if chunking is not None else None,
        "summary": summary,
        **counts,
        **score.counts,
        "load_seconds": round(load_seconds, 2),
        "score_seconds": round(time.perf_counter() - started - load_seconds, 2),
    }
    write_report(report, args.report)
