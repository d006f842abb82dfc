"""What every `factlab score <scorer>` command shares: its job arguments, its examples, its outputs.

Every scorer command reads the same job arguments (`add_job_arguments`): the benchmark and its
preprocessed sentences (the examples the preprocess stage kept: `--max-examples`), their seeded sample
(`--sample-examples N --sample-seed S`, score.sample, or `all`: `factlab.sampling`), the shard
(`--shard i --shards n`: examples split by source document, `factlab.score.jobs`), and writes
`<scorer>.parquet` (example_id, score, per-sentence detail) and a report of counts (engine: pairs,
duplicates, batches, padding, premise cuts; seconds, pairs/s) that `factlab score merge` sums.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from factlab.commands import (
    add_device_arguments,
    add_sample_arguments,
    max_examples,
    positive_int,
    sample_record,
    write_report,
)
from factlab.io import write_parquet
from factlab.runtime import set_threads

if TYPE_CHECKING:
    import pandas as pd


def add_job_arguments(parser: argparse.ArgumentParser, *, model: bool) -> None:
    """The arguments of every scoring job; `model`: it runs pairs through a model with the engine."""
    parser.add_argument("--benchmark", required=True)
    parser.add_argument("--data", required=True, help="results/data/<benchmark>.parquet")
    parser.add_argument("--sentences", required=True, help="results/preprocess/<benchmark>/sentences.parquet")
    parser.add_argument("--max-examples", type=max_examples, required=True, help="'all' or N: the examples preprocess kept")
    add_sample_arguments(parser, "of them")
    parser.add_argument("--shard", type=int, required=True, help="this job's shard, 0 <= shard < shards")
    parser.add_argument("--shards", type=positive_int, required=True)
    parser.add_argument("--threads", type=positive_int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--report", required=True)
    if model:
        add_model_arguments(parser)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The pair scorer (`load_pair_scorer`) and the engine's batching (`factlab.models.engine.engine_settings`): every
    command running the engine."""
    parser.add_argument("--model", required=True, help="a trained aligner folder, or a hub id / folder of an NLI classifier")
    parser.add_argument("--entailment-label", required=True, help="label name of entailment (NLI classifiers only)")
    parser.add_argument("--token-budget", type=positive_int, required=True)
    parser.add_argument("--max-batch-pairs", type=positive_int, required=True)
    add_device_arguments(parser, precision=True)
    parser.add_argument(
        "--runtime",
        choices=("torch", "openvino"),
        default="torch",
        help="what runs a trained aligner: torch, or OpenVINO on its ONNX graph (model.onnx in its folder)",
    )


def job_examples(args: argparse.Namespace) -> tuple[pd.DataFrame, dict[str, int]]:
    """The examples of this job: those preprocess kept, their seeded sample (`--sample-examples`), then this shard's
    documents; and the count of this shard's examples the sample left out (summed by the merge)."""
    import pandas as pd

    from factlab.preprocess.benchmark import select_examples
    from factlab.sampling import sample_examples
    from factlab.score.jobs import shard_examples

    set_threads(args.threads)
    selected = select_examples(pd.read_parquet(args.data), args.benchmark, args.max_examples)
    examples = shard_examples(sample_examples(selected, args.sample_examples, args.sample_seed), args.shard, args.shards)
    left_out = len(shard_examples(selected, args.shard, args.shards)) - len(examples)
    return examples, {"examples_not_sampled": left_out}


def write_job(
    args: argparse.Namespace, scorer: str, scores: pd.DataFrame, counts: dict[str, Any], seconds: float, **job: Any
) -> None:
    """The job's score table and its report (counts, seconds, pairs/s where pairs were scored)."""
    from factlab.score.jobs import with_pair_rate

    write_parquet(scores, args.out)
    report = {"benchmark": args.benchmark, "scorer": scorer, "shard": args.shard, "shards": args.shards, **job, **counts}
    report |= sample_record(args)
    report["score_seconds"] = round(seconds, 2)
    write_report(with_pair_rate(report), args.report)


def run_pair_job(
    args: argparse.Namespace,
    scorer_name: str,
    score: Callable[..., tuple[pd.DataFrame, dict[str, Any]]],
    settings: Any,
    *,
    pairs_in: str | None = None,
    pairs_out: str | None = None,
    **labels: str,
) -> None:
    """A model-based scoring job: this shard's examples, the pair scorer (`labels`: its NLI label names),
    `score(examples, sentences, scorer, settings, engine)`, and the job's table and report.

    `pairs_in` / `pairs_out`: a pair cache (`PairCache` parquet) read before scoring and written after, so that a
    later job with the same weights (SummaC-Conv after SummaC-ZS) runs only the pairs the earlier one did not;
    `score` then takes a `cache` argument.
    """
    import pandas as pd

    from factlab.models.engine import PairCache, engine_settings
    from factlab.models.loading import load_pair_scorer

    started = time.perf_counter()
    examples, sampled = job_examples(args)
    scorer = load_pair_scorer(
        args.model,
        device=args.device,
        entailment_label=args.entailment_label,
        runtime=args.runtime,
        threads=args.threads,
        **labels,
    )
    cache = PairCache.load(pairs_in) if pairs_in else PairCache()
    load_seconds = time.perf_counter() - started
    shared = {"cache": cache} if pairs_in or pairs_out else {}
    engine = engine_settings(args, scorer.device)
    scores, counts = score(examples, pd.read_parquet(args.sentences), scorer, settings, engine, **shared)
    if pairs_out:
        cache.save(pairs_out)
    load_seconds += getattr(scorer, "load_seconds", 0.0)  # a deferred aligner loads at its first uncached pair
    write_job(
        args,
        scorer_name,
        scores,
        {**counts, **sampled, "load_seconds": round(load_seconds, 2)},
        time.perf_counter() - started - load_seconds,
        model=scorer.identity,
        model_loaded=getattr(scorer, "loaded", True),  # False: every pair came from pairs_in, the weights stayed unread
        device=str(scorer.device),
        precision=engine.precision,
        settings=asdict(settings),
    )
