"""`factlab checker latency`: how long a user waits for `factlab check` (results/checker/check_latency.json).

Three numbers, each against its target (params.yaml `check.latency`):
- help: `factlab --help` as a new process (the median of `HELP_RUNS`): the command answers at once;
- cold start: `factlab check` on a one-pair file, as a new process, from its start to the written score
  (imports, model load, sentence split, scoring);
- seconds per example once loaded: `Checker.check` on a fixed sample of real pairs, the benchmark's sources
  closest to `source_tokens` word pieces with outputs of at least `output_sentences` sentences, cut to that many
  (the sample is fixed by the data, not drawn: the same pairs on every machine).
Timings depend on the machine; the report names its CPU, threads and precision.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import positive_int, write_report
from factlab.errors import FactlabError

if TYPE_CHECKING:
    import pandas as pd


def register(commands: Any) -> None:
    latency = commands.add_parser("latency", help="cold start and seconds per example of factlab check")
    latency.add_argument("--checker", required=True, help="results/checker/model")
    latency.add_argument("--data", required=True, help="results/data/<benchmark>.parquet: the real pairs")
    latency.add_argument("--examples", type=positive_int, required=True)
    latency.add_argument("--source-tokens", type=positive_int, required=True, help="word pieces of the sources sought")
    latency.add_argument("--output-sentences", type=positive_int, required=True)
    latency.add_argument("--target-seconds-per-example", type=float, required=True)
    latency.add_argument("--target-cold-start-seconds", type=float, required=True)
    latency.add_argument("--target-help-seconds", type=float, required=True)
    latency.add_argument("--threads", type=positive_int, required=True)
    latency.add_argument("--out", required=True)
    latency.set_defaults(func=run_latency)


def latency_sample(frame: pd.DataFrame, tokenizer: Any, examples: int, source_tokens: int, output_sentences: int) -> pd.DataFrame:
    """The `examples` pairs whose sources are closest to `source_tokens` word pieces (ties: example_id), among those
    whose output has `output_sentences` sentences or more; outputs cut to their first `output_sentences`."""
    import pandas as pd

    from factlab.preprocess.sentences import split_sentences

    distinct = frame.drop_duplicates("example_id").sort_values("example_id", kind="stable")
    rows = []
    for example_id, source, output in zip(distinct["example_id"], distinct["source"], distinct["output"], strict=True):
        sentences = split_sentences(str(output))
        if len(sentences) < output_sentences:
            continue
        tokens = len(tokenizer.encode(str(source), add_special_tokens=False))
        cut = str(output)[: sentences[output_sentences - 1].end]
        rows.append((abs(tokens - source_tokens), str(example_id), str(source), cut, tokens))
    if not rows:
        raise FactlabError(f"no example has an output of {output_sentences} sentences or more")
    rows.sort(key=lambda row: (row[0], row[1]))
    chosen = rows[:examples]
    return pd.DataFrame(
        [(example_id, source, output, tokens) for _, example_id, source, output, tokens in chosen],
        columns=["id", "source", "output", "source_tokens"],
    )


HELP_RUNS = 5


def help_seconds(runs: int = HELP_RUNS) -> float:
    """Median wall seconds of `factlab --help` as a new process."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "factlab", "--help"], capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise FactlabError(f"factlab --help failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return sorted(times)[len(times) // 2]


def cold_start_seconds(checker: str, source: str, output: str, threads: int) -> float:
    """Wall seconds of `factlab check` on one pair, as a new process, until it exits with its score written."""
    with tempfile.TemporaryDirectory() as folder:
        pairs, scores = Path(folder) / "pair.jsonl", Path(folder) / "scores.jsonl"
        pairs.write_text(json.dumps({"source": source, "output": output}) + "\n")
        command = [sys.executable, "-m", "factlab", "check", str(pairs), "-o", str(scores), "--model", checker]
        command += ["--threads", str(threads)]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), check=False)
        seconds = time.perf_counter() - started
        if done.returncode != 0 or not scores.is_file():
            raise FactlabError(f"factlab check failed on one pair (exit {done.returncode}): {done.stderr[-2000:]}")
    return seconds


def run_latency(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.checker.api import Checker
    from factlab.models.engine import resolve_precision

    frame = pd.read_parquet(args.data)
    checker = Checker(args.checker, threads=args.threads)
    sample = latency_sample(frame, checker.scorer.tokenizer, args.examples, args.source_tokens, args.output_sentences)
    cold = cold_start_seconds(args.checker, sample["source"].iloc[0], sample["output"].iloc[0], args.threads)
    help_wall = help_seconds()
    checker.check(sample["source"].head(1), sample["output"].head(1))  # warm: first-call allocations
    started = time.perf_counter()
    results = checker.check(sample["source"], sample["output"], sample["id"])
    seconds = time.perf_counter() - started
    per_example = seconds / len(sample)
    write_report(
        {
            "benchmark": Path(args.data).stem,
            "examples": len(sample),
            "source_tokens_mean": round(float(sample["source_tokens"].mean()), 1),
            "source_tokens_range": [int(sample["source_tokens"].min()), int(sample["source_tokens"].max())],
            "output_sentences": args.output_sentences,
            "help_seconds": round(help_wall, 3),
            "cold_start_seconds": round(cold, 2),
            "seconds_per_example": round(per_example, 4),
            "examples_per_second": round(len(sample) / seconds, 3),
            "target_seconds_per_example": args.target_seconds_per_example,
            "target_cold_start_seconds": args.target_cold_start_seconds,
            "target_help_seconds": args.target_help_seconds,
            "meets_help": help_wall <= args.target_help_seconds,
            "meets_seconds_per_example": per_example <= args.target_seconds_per_example,
            "meets_cold_start": cold <= args.target_cold_start_seconds,
            "scored": int(results["score"].notna().sum()),
            "threads": args.threads,
            "precision": resolve_precision(checker.settings.precision, checker.scorer.device),
            "device": str(checker.scorer.device),
            "cpu": platform.processor() or platform.machine(),
        },
        args.out,
    )
