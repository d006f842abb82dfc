"""`factlab checker latency`: how long a user waits for `factlab check` (results/checker/check_latency.json).

Three numbers, each against its target (params.yaml `check.latency`):
- help: `factlab --help` as a new process (the median of `HELP_RUNS`): the command answers at once;
- cold start: `factlab check` on a one-pair file, as a new process, from its start to the written score
  (imports, model load, sentence split, scoring), with that process's peak memory;
- seconds per example once loaded: `Checker.check` on a fixed sample of real pairs (`latency_sample`): sources
  of `source_tokens` word pieces ± 10% (the checker's own tokenizer), outputs of `output_sentences` sentences.
  The sample is fixed by the data, not drawn: the same pairs on every machine.

Beside them: the (chunk, output sentence) pairs AlignScore forms for the sample (`alignscore_pair_count`) and how
many the timed check got through per second, the process's peak memory, the threads, and the machine: the CPU's
model and its instruction sets among `INSTRUCTION_SETS` (`cpu_record`, from /proc/cpuinfo), and the runtime and
precision the checker ran in.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
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

    from factlab.checker.folder import CheckerSettings

# The text an output continues, where a benchmark records it: a WiCE claim is one Wikipedia sentence, and
# `claim_context` holds the article's sentences before it.
CONTEXT_COLUMN = "claim_context"
# /proc/cpuinfo flags of the instruction sets that decide CPU inference speed: AVX2, AVX-512 (foundation),
# AVX512-BF16, and AMX (bf16 arithmetic, tiles).
INSTRUCTION_SETS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
CPUINFO = Path("/proc/cpuinfo")
HELP_RUNS = 5


def register(commands: Any) -> None:
    latency = commands.add_parser("latency", help="cold start and seconds per example of factlab check")
    latency.add_argument("--checker", required=True, help="results/checker/model")
    latency.add_argument("--data", required=True, help="results/data/<benchmark>.parquet: the real pairs")
    latency.add_argument("--examples", type=positive_int, required=True)
    latency.add_argument("--source-tokens", type=positive_int, required=True, help="word pieces of the sources (± 10%%)")
    latency.add_argument("--output-sentences", type=positive_int, required=True)
    latency.add_argument("--target-seconds-per-example", type=float, required=True)
    latency.add_argument("--target-cold-start-seconds", type=float, required=True)
    latency.add_argument("--target-help-seconds", type=float, required=True)
    latency.add_argument("--threads", type=positive_int, required=True)
    latency.add_argument("--out", required=True)
    latency.set_defaults(func=run_latency)


def source_window(source_tokens: int) -> tuple[int, int]:
    """The word-piece counts within 10% of `source_tokens`: [low, high], both included."""
    return -(-9 * source_tokens // 10), 11 * source_tokens // 10


def word_pieces(tokenizer: Any, texts: list[str]) -> list[int]:
    """Word pieces of each text, without special tokens, by the checker's tokenizer (a transformers tokenizer or
    the OpenVINO runtime's, called alike). transformers' warning that a text is longer than the model reads is
    held back: these are counts, not model inputs."""
    import logging

    quiet = logging.getLogger("transformers.tokenization_utils_base")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        return [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]] if texts else []
    finally:
        quiet.setLevel(level)


def latency_output(output: str, context: str | None, sentences: int, splitter: str = "pysbd") -> tuple[str, int] | None:
    """`output` cut to its first `sentences` sentences; an output of fewer is preceded by the last sentences of the
    text it continues (`context`), so that the passage ends with the output. With the number of sentences taken
    from `context`; None where there are not enough."""
    from factlab.text.sentences import split_sentences

    own = split_sentences(output, splitter)
    if len(own) >= sentences:
        return output[: own[sentences - 1].end], 0
    missing = sentences - len(own)
    if not own or not context:
        return None
    before = split_sentences(context, splitter)
    if len(before) < missing:
        return None
    passage = f"{context[before[-missing].start :].strip()} {output.strip()}"
    return (passage, missing) if len(split_sentences(passage, splitter)) == sentences else None


def latency_sample(
    frame: pd.DataFrame,
    tokenizer: Any,
    examples: int,
    source_tokens: int,
    output_sentences: int,
    benchmark: str,
    splitter: str = "pysbd",
) -> tuple[pd.DataFrame, int]:
    """The `examples` pairs whose sources are closest to `source_tokens` word pieces (ties: example_id), among
    those with a source in `source_window` and an output of `output_sentences` sentences (`latency_output`), and
    how many qualify. Fewer than `examples` qualifying is an error naming `benchmark`."""
    import pandas as pd

    low, high = source_window(source_tokens)
    distinct = frame.drop_duplicates("example_id").sort_values("example_id", kind="stable")
    contexts = distinct[CONTEXT_COLUMN] if CONTEXT_COLUMN in distinct else pd.Series([None] * len(distinct))
    pieces = word_pieces(tokenizer, distinct["source"].astype(str).tolist())
    rows = []
    for example_id, source, output, context, tokens in zip(
        distinct["example_id"], distinct["source"], distinct["output"], contexts, pieces, strict=True
    ):
        if not low <= tokens <= high:
            continue
        found = latency_output(str(output), None if pd.isna(context) else str(context), output_sentences, splitter)
        if found is not None:
            rows.append((abs(tokens - source_tokens), str(example_id), str(source), found[0], tokens, found[1]))
    if len(rows) < examples:
        raise FactlabError(
            f"{benchmark}: check.latency asks for {examples} examples and {len(rows)} qualify (a source of {low}-{high} "
            f"word pieces, {source_tokens} ± 10%, and an output of {output_sentences} sentences)"
        )
    rows.sort(key=lambda row: (row[0], row[1]))
    columns = ["id", "source", "output", "source_tokens", "context_sentences"]
    return pd.DataFrame([row[1:] for row in rows[:examples]], columns=columns), len(rows)


def alignscore_pair_count(sample: pd.DataFrame, settings: CheckerSettings) -> tuple[int, int]:
    """(source chunks, (chunk, output sentence) pairs) that AlignScore forms for `sample` as the checker reads it:
    its sentence splitter, chunk size, chunk policy and pre-ranked chunks (factlab.score.alignscore.alignscore_pairs)."""
    from factlab.checker.api import alignscore_settings, examples_frame
    from factlab.preprocess.benchmark import sentence_units
    from factlab.score.alignscore import alignscore_pairs

    examples = examples_frame(sample)
    sentences, _ = sentence_units(examples, "check", settings.sentence_splitter, progress=False)
    formed = alignscore_pairs(examples, sentences, alignscore_settings(settings, localise=False))
    return sum(len(chunks) for chunks in formed.chunks.values()), len(formed.pairs)


def cpu_record(cpuinfo: Path = CPUINFO) -> dict[str, Any]:
    """The CPU's model name (/proc/cpuinfo's first `model name`; else the platform's name) and which of
    `INSTRUCTION_SETS` its flags list (factlab.models.engine.cpu_flags: the flags the engine reads)."""
    from factlab.models.engine import cpu_flags

    model = ""
    try:
        for line in cpuinfo.read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name" and value.strip():
                model = value.strip()
                break
    except OSError:
        pass
    flags = cpu_flags(cpuinfo)
    return {
        "cpu": model or platform.processor() or platform.machine(),
        "cpu_instruction_sets": {name: name in flags for name in INSTRUCTION_SETS},
    }


def max_rss_mib(usage: resource.struct_rusage) -> float:
    """Peak resident memory of a `getrusage` record in MiB (Linux counts ru_maxrss in KiB, macOS in bytes)."""
    return usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)


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


def cold_start(checker: str, source: str, output: str, threads: int) -> tuple[float, float]:
    """Wall seconds of `factlab check` on one pair, as a new process, until it exits with its score written; and
    that process's peak memory in MiB (its own rusage, from wait4)."""
    with tempfile.TemporaryDirectory() as folder:
        pairs, scores, log = Path(folder) / "pair.jsonl", Path(folder) / "scores.jsonl", Path(folder) / "stderr.log"
        pairs.write_text(json.dumps({"source": source, "output": output}) + "\n")
        command = [sys.executable, "-m", "factlab", "check", str(pairs), "-o", str(scores), "--model", checker]
        command += ["--threads", str(threads)]
        with log.open("w") as stderr:
            started = time.perf_counter()
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=os.environ.copy())
            _, status, usage = os.wait4(process.pid, 0)
            seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0 or not scores.is_file():
            raise FactlabError(f"factlab check failed on one pair (exit {process.returncode}): {log.read_text()[-2000:]}")
    return seconds, max_rss_mib(usage)


def run_latency(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.checker.api import Checker
    from factlab.models.engine import resolve_precision

    benchmark = Path(args.data).stem
    frame = pd.read_parquet(args.data)
    checker = Checker(args.checker, threads=args.threads)
    splitter = checker.settings.sentence_splitter
    sample, qualifying = latency_sample(
        frame, checker.scorer.tokenizer, args.examples, args.source_tokens, args.output_sentences, benchmark, splitter
    )
    chunks, pairs = alignscore_pair_count(sample, checker.settings)
    cold, cold_memory = cold_start(args.checker, sample["source"].iloc[0], sample["output"].iloc[0], args.threads)
    help_wall = help_seconds()
    checker.check(sample["source"].head(1), sample["output"].head(1))  # warm: first-call allocations
    started = time.perf_counter()
    results = checker.check(sample["source"], sample["output"], sample["id"])
    seconds = time.perf_counter() - started
    memory = max_rss_mib(resource.getrusage(resource.RUSAGE_SELF))
    per_example = seconds / len(sample)
    device = getattr(checker.scorer, "device", "cpu")
    if hasattr(checker, "precision"):
        precision = checker.precision
    else:
        precision = resolve_precision(checker.settings.precision, checker.scorer.device)
    low, high = source_window(args.source_tokens)
    write_report(
        {
            "benchmark": benchmark,
            "examples": len(sample),
            "qualifying_examples": qualifying,
            "source_tokens": args.source_tokens,
            "source_tokens_window": [low, high],
            "source_tokens_mean": round(float(sample["source_tokens"].mean()), 1),
            "source_tokens_range": [int(sample["source_tokens"].min()), int(sample["source_tokens"].max())],
            "output_sentences": args.output_sentences,
            "outputs_with_context": int((sample["context_sentences"] > 0).sum()),
            "source_chunks": chunks,
            "pairs": pairs,
            "help_seconds": round(help_wall, 3),
            "cold_start_seconds": round(cold, 2),
            "cold_start_peak_memory_mib": round(cold_memory, 1),
            "seconds_per_example": round(per_example, 4),
            "examples_per_second": round(len(sample) / seconds, 3),
            "pairs_per_second": round(pairs / seconds, 2),
            "peak_memory_mib": round(memory, 1),
            "target_seconds_per_example": args.target_seconds_per_example,
            "target_cold_start_seconds": args.target_cold_start_seconds,
            "target_help_seconds": args.target_help_seconds,
            "meets_help": help_wall <= args.target_help_seconds,
            "meets_seconds_per_example": per_example <= args.target_seconds_per_example,
            "meets_cold_start": cold <= args.target_cold_start_seconds,
            "scored": int(results["score"].notna().sum()),
            "threads": args.threads,
            "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "runtime": getattr(checker, "runtime", "torch"),
            "precision": precision,
            "device": str(device),
            **cpu_record(),
            "machine": platform.machine(),
        },
        args.out,
    )
