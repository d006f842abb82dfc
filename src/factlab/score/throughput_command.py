"""`factlab score throughput`: the engine against AlignScore's reference inference loop, same weights, same pairs.

The sample: the first `--pairs-per-benchmark` AlignScore pairs (chunk, output sentence) of each
given benchmark, in a fixed order (real pairs across all benchmarks). The reference loop scores
each pair alone, padded to 512 word pieces (factlab.models.engine.reference_scores, a faithful
reproduction of AlignScore's `inference.py` loop); the engine scores them all in one call. Both run
once, on the same machine, in the same process. GFLOP/s counts the encoder's matrix products on the
tokens the engine actually computed (padding included), and the GEMM peak is a square fp32 torch
matmul timed in the same run, so the share of the machine's peak the engine reaches is measured,
not assumed.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import positive_int, write_report
from factlab.io import write_parquet
from factlab.runtime import set_threads
from factlab.score.commands import add_model_arguments
from factlab.text.chunking import CHUNK_POLICIES

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def register(commands: Any) -> None:
    throughput = commands.add_parser("throughput", help="engine vs AlignScore's reference loop on a fixed sample of real pairs")
    throughput.add_argument("--data", nargs="+", required=True, help="results/data/<benchmark>.parquet")
    throughput.add_argument(
        "--sentences", nargs="+", required=True, help="results/preprocess/<benchmark>/sentences.parquet, same order"
    )
    add_model_arguments(throughput)
    throughput.add_argument("--pairs-per-benchmark", type=positive_int, required=True)
    throughput.add_argument("--choice", required=True, help="results/score/alignscore_choice.json: the chunk size scored")
    throughput.add_argument("--chunk-policy", choices=CHUNK_POLICIES, required=True)
    throughput.add_argument("--threads", type=positive_int, required=True)
    throughput.add_argument(
        "--max-length", type=positive_int, default=None, help="word pieces per pair (default: the model's); every cut is counted"
    )
    throughput.add_argument(
        "--reference-pairs",
        type=positive_int,
        default=None,
        help="time the reference loop on the first N pairs (default: all)",
    )
    throughput.add_argument("--out", required=True)
    throughput.add_argument(
        "--scores-out", default=None, help="also write every pair's engine and reference score (parquet), for checking"
    )
    throughput.set_defaults(func=run_throughput)


def encoder_flops(config: Any, batches: list[tuple[int, int]]) -> float:
    """Multiply-adds x 2 of a BERT-style encoder over (rows, width) batches: projections, feed-forward, attention."""
    hidden, inner, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    total = 0.0
    for rows, width in batches:
        tokens = rows * width
        dense = 2 * tokens * (4 * hidden * hidden + 2 * hidden * inner)  # Q, K, V, output; two feed-forward matrices
        attention = 2 * 2 * rows * width * width * hidden  # QK^T and attention x V
        total += layers * (dense + attention)
    return total


def gemm_peak_gflops(device: Any, size: int = 1024, repeats: int = 20) -> float:
    import torch

    a = torch.randn(size, size, device=device)
    b = torch.randn(size, size, device=device)
    for _ in range(3):
        a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(repeats):
        a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    return 2 * size**3 * repeats / (time.perf_counter() - started) / 1e9


def sample_pairs(data_paths: list[str], sentence_paths: list[str], per_benchmark: int, settings: Any) -> list[tuple[str, str]]:
    import pandas as pd

    from factlab.score.alignscore import alignscore_pairs

    pairs: list[tuple[str, str]] = []
    for data_path, sentences_path in zip(data_paths, sentence_paths, strict=True):
        sentences = pd.read_parquet(sentences_path)
        outputs = sentences.loc[sentences["side"] == "output", "example_id"].dropna().unique()
        examples = pd.read_parquet(data_path, columns=["example_id", "doc_id"])
        examples = examples[examples["example_id"].isin(outputs)].sort_values("example_id").head(per_benchmark)
        pairs += alignscore_pairs(examples, sentences, settings).pairs[:per_benchmark]
    return pairs


def run_throughput(args: argparse.Namespace) -> None:
    import numpy as np
    import torch

    from factlab.models.engine import engine_settings, reference_scores, score_pairs
    from factlab.models.loading import load_pair_scorer
    from factlab.score.alignscore_command import tuned_settings

    set_threads(args.threads)
    scorer = load_pair_scorer(
        args.model, device=args.device, entailment_label=args.entailment_label, runtime=args.runtime, threads=args.threads
    )
    if args.max_length:
        scorer.max_length = args.max_length  # both paths cut to it: the engine counts its cuts, the reference truncates
    settings = tuned_settings(args.choice, args.chunk_policy)  # the pairs the score stage actually scores
    pairs = list(dict.fromkeys(sample_pairs(args.data, args.sentences, args.pairs_per_benchmark, settings)))
    reference_pairs = pairs[: args.reference_pairs or len(pairs)]
    engine = engine_settings(args, scorer.device, progress=False)
    score_pairs(scorer, pairs[:8], engine)  # warm-up (allocator, kernels) for both paths
    reference_scores(scorer, pairs[:2])

    synchronise = torch.cuda.synchronize if scorer.device.type == "cuda" else lambda: None
    synchronise()
    started = time.perf_counter()
    engine_result = score_pairs(scorer, pairs, engine)
    engine_seconds = time.perf_counter() - started
    started = time.perf_counter()
    reference = reference_scores(scorer, reference_pairs)
    reference_seconds = time.perf_counter() - started

    config = getattr(getattr(scorer, "network", None), "encoder", getattr(scorer, "model", None)).config
    flops = encoder_flops(config, engine_result.batch_shapes)
    report = {
        "pairs": len(pairs),
        "reference_pairs": len(reference_pairs),
        "max_length": scorer.max_length,
        "words_per_chunk": settings.words_per_chunk,
        "benchmarks": [Path(path).stem for path in args.data],
        "mean_pair_tokens": engine_result.counts["tokens"] / len(pairs),
        "engine_seconds": round(engine_seconds, 3),
        "reference_seconds": round(reference_seconds, 3),
        "engine_pairs_per_s": len(pairs) / engine_seconds,
        "engine_tokens_per_s": engine_result.counts["tokens"] / engine_seconds,
        "reference_pairs_per_s": len(reference_pairs) / reference_seconds,
        "speedup": (reference_seconds / len(reference_pairs)) / (engine_seconds / len(pairs)),
        "max_abs_diff": float(np.max(np.abs(engine_result.scores[: len(reference_pairs)] - reference))),
        "pairs_premise_cut": engine_result.counts["pairs_premise_cut"],
        "engine_gflops": flops / engine_seconds / 1e9,
        "gemm_peak_gflops": gemm_peak_gflops(scorer.device),
        "engine_padded_tokens": engine_result.counts["padded_tokens"],
        "engine_tokens": engine_result.counts["tokens"],
        "reference_padded_tokens": min(512, scorer.max_length) * len(reference_pairs),
        "device": str(scorer.device),
        "torch_threads": torch.get_num_threads(),
        "model": scorer.identity,
        "precision": engine.precision,
    }
    report["engine_share_of_gemm_peak"] = report["engine_gflops"] / report["gemm_peak_gflops"]
    if args.scores_out:
        write_parquet(pair_scores(pairs, engine_result.scores, reference), args.scores_out)
    write_report(report, args.out)


def pair_scores(pairs: list[tuple[str, str]], engine: np.ndarray, reference: np.ndarray) -> pd.DataFrame:
    """One row per pair: the engine's score, and the reference loop's where it was timed (NaN beyond)."""
    import numpy as np
    import pandas as pd

    padded = np.full(len(pairs), np.nan)
    padded[: len(reference)] = reference
    return pd.DataFrame(
        {"premise": [p for p, _ in pairs], "hypothesis": [h for _, h in pairs], "engine": engine, "reference": padded}
    )
