"""`factlab score import | python`: a researcher's scorer (`scorers.custom`) as a score table like the built-ins'.

- `import`: a score file the user computed elsewhere (door `scores`) -> results/score/<benchmark>/<name>.parquet.
- `python`: one shard of a benchmark scored by the user's callable (door `python`), merged as every scorer's shards.

Both write `example_id, score, n_sentences` and, where the scorer gives them, `sentences` (per-sentence support on
factlab's sentence units) and `units` (spans of the output with their support), which token localisation reads.
Scores are oriented so that higher means consistent: a scorer with `higher_is_consistent: false` has its scores
flipped, as 1 − s where every score lies in [0, 1] (a probability of error becomes one of consistency, so
calibration still applies), else −s; the report records which.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import positive_int
from factlab.errors import DataErrors, FactlabError

if TYPE_CHECKING:
    import pandas as pd

KEEP, ONE_MINUS, NEGATE = "as given", "1 - score", "-score"


def register(commands: Any) -> None:
    from factlab.score.commands import add_job_arguments

    importer = commands.add_parser("import", help="a user's score file of one benchmark as a factlab score table")
    importer.add_argument("--scorer", required=True, help="the scorer's name (scorers.custom)")
    importer.add_argument("--benchmark", required=True)
    importer.add_argument("--data", required=True, help="results/data/<benchmark>.parquet")
    importer.add_argument("--sentences", required=True, help="results/preprocess/<benchmark>/sentences.parquet")
    importer.add_argument("--max-examples", required=True, help="'all' or N: the examples preprocess kept")
    importer.add_argument("--scores", required=True, help="the user's score file (JSONL, JSON, CSV, TSV or parquet)")
    add_orientation_argument(importer)
    importer.add_argument("--allow-missing", action="store_true", help="evaluate the scored examples when some lack a score")
    importer.add_argument("--out", required=True)
    importer.add_argument("--report", required=True)
    importer.set_defaults(func=run_import)

    python = commands.add_parser("python", help="one shard of a benchmark scored by a user's Python callable")
    add_job_arguments(python, model=False)
    python.add_argument("--scorer", required=True, help="the scorer's name (scorers.custom)")
    python.add_argument("--function", required=True, help="package.module:function or path/to/file.py:function")
    python.add_argument("--batch-size", type=positive_int, required=True)
    add_orientation_argument(python)
    python.add_argument("--device", default="auto", help="passed to the callable if it takes a `device` argument")
    python.set_defaults(func=run_python)

    published = commands.add_parser(
        "published", help="one metric's released TRUE scores of one set as a score file of the `scores` door"
    )
    published.add_argument("--table", required=True, help="results/data/true_published.parquet")
    published.add_argument("--metric", required=True, help="a metric of the table (unieval, summac_zs, ...)")
    published.add_argument("--benchmark", required=True, help="true_<set>")
    published.add_argument("--out", required=True, help="the JSONL a user would bring: example_id, score")
    published.set_defaults(func=run_published)


def add_orientation_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--higher-is-consistent", choices=("true", "false"), required=True, help="false: higher scores mean errors"
    )


def orientation(scores: Sequence[float], higher_is_consistent: bool) -> str:
    """How a scorer's scores become 'higher is consistent' (KEEP, ONE_MINUS or NEGATE), from all of its scores."""
    if higher_is_consistent:
        return KEEP
    return ONE_MINUS if all(0.0 <= score <= 1.0 for score in scores) else NEGATE


def oriented(value: float, how: str) -> float:
    return value if how == KEEP else (1.0 - value if how == ONE_MINUS else -value)


def score_table(sentences: pd.DataFrame, given: pd.DataFrame, how: str, *, file: str) -> pd.DataFrame:
    """The score table of `given` (example_id, score, sentence_scores, spans: examples of the benchmark), in
    example_id order: `sentences` where sentence scores are given (one per output sentence unit, else every mismatch
    is a DataErrors naming the example) and `units` where spans are (a span without a score has support 0)."""
    import pandas as pd

    units = sentences[sentences["side"] == "output"].sort_values(["example_id", "sentence_index"])
    by_example = {example_id: frame for example_id, frame in units.groupby("example_id", sort=False)}
    n_sentences = {example_id: len(frame) for example_id, frame in by_example.items()}
    has_sentences = given["sentence_scores"].notna().any()
    has_spans = given["spans"].notna().any()
    rows, problems = [], []
    for record in given.sort_values("example_id", kind="stable").to_dict("records"):
        example_id = record["example_id"]
        row: dict[str, Any] = {
            "example_id": example_id,
            "score": oriented(record["score"], how),
            "n_sentences": n_sentences.get(example_id, 0),
        }
        if has_sentences:
            values = record["sentence_scores"] if record["sentence_scores"] is not None else []
            own = by_example.get(example_id)
            if own is None or len(values) != len(own):
                problems.append(
                    f"example {example_id!r}, field 'sentence_scores': {len(values)} scores for "
                    f"{0 if own is None else len(own)} sentence units (as `factlab benchmarks export` lists them)"
                )
                continue
            row["sentences"] = [
                {
                    "sentence_index": int(unit.sentence_index),
                    "sentence": str(unit.text),
                    "start": int(unit.start),
                    "end": int(unit.end),
                    "support": oriented(float(value), how),
                }
                for unit, value in zip(own.itertuples(), values, strict=True)
            ]
        if has_spans:
            spans = record["spans"] or []
            row["units"] = [
                {
                    "unit": "span",
                    "output_spans": [[int(span[0]), int(span[1])]],
                    "score": oriented(span[2], how) if len(span) == 3 else 0.0,
                }
                for span in spans
            ]
        rows.append(row)
    if problems:
        raise DataErrors(file, problems)
    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=["example_id", "score", "n_sentences"])


def run_import(args: argparse.Namespace) -> None:
    import hashlib

    import pandas as pd

    from factlab.commands import max_examples, write_report
    from factlab.io import write_parquet
    from factlab.preprocess.benchmark import select_examples
    from factlab.score.custom_scorers import coverage_problems, read_user_scores

    data = pd.read_parquet(args.data)
    examples = select_examples(data, args.benchmark, max_examples(args.max_examples))
    read = read_user_scores(args.scores)
    problems, counts = coverage_problems(read, data, examples, allow_missing=args.allow_missing, benchmark=args.benchmark)
    if read.problems or problems:
        raise DataErrors(args.scores, read.problems + problems)
    if not counts["examples_scored"]:
        kept = f"none of the {counts['examples']} examples of {args.benchmark} this run keeps"
        raise FactlabError(f"{args.scores}: {kept} has a score")
    # oriented on all the file's scores, so a pair's score never depends on which examples the run keeps
    how = orientation(list(read.frame["score"]), args.higher_is_consistent == "true")
    kept = read.frame[read.frame["example_id"].isin(set(examples["example_id"]))]
    table = score_table(pd.read_parquet(args.sentences), kept, how, file=args.scores)
    write_parquet(table, args.out)
    report = {
        "benchmark": args.benchmark,
        "scorer": args.scorer,
        "door": "scores",
        "file": args.scores,
        "sha256": hashlib.sha256(Path(args.scores).read_bytes()).hexdigest(),
        "orientation": how,
        "allow_missing": args.allow_missing,
        "sentence_scores": "sentences" in table,
        "spans": "units" in table,
        **counts,
    }
    write_report(report, args.report)


def call_scorer(function: Any, sources: list[str], outputs: list[str], device: str) -> list[Any]:
    """The callable's results for one batch: one per pair, else a FactlabError."""
    import inspect

    takes_device = "device" in inspect.signature(function).parameters
    results = function(sources, outputs, device=device) if takes_device else function(sources, outputs)
    results = list(results)
    if len(results) != len(outputs):
        raise FactlabError(f"returned {len(results)} results for {len(outputs)} pairs")
    return results


def python_records(example_ids: Sequence[str], results: Sequence[Any]) -> tuple[pd.DataFrame, list[str]]:
    """The callable's results as the rows `score_table` reads, and what is wrong with them (example ids named)."""
    import pandas as pd

    from factlab.score.custom_scorers import finite_number, parse_span

    rows, problems = [], []
    for example_id, result in zip(example_ids, results, strict=True):
        record = result if isinstance(result, dict) else {"score": result}
        score = finite_number(record.get("score"))
        spans = None if record.get("spans") is None else [parse_span(span) for span in record["spans"]]
        if score is None:
            shown = record.get("score")
            problems.append(f"example {example_id!r}: score {shown!r} is not a finite number")
        elif spans is not None and any(span is None for span in spans):
            problems.append(f"example {example_id!r}: each span is [start, end] or [start, end, score], 0 <= start < end")
        else:
            rows.append({"example_id": example_id, "score": score, "sentence_scores": None, "spans": spans})
    return pd.DataFrame(rows, columns=["example_id", "score", "sentence_scores", "spans"]), problems


def run_python(args: argparse.Namespace) -> None:
    import pandas as pd
    from tqdm import tqdm

    from factlab.score.commands import job_examples, write_job
    from factlab.score.custom_scorers import load_callable

    started = time.perf_counter()
    examples, sampled = job_examples(args)
    function = load_callable(args.function)
    results: list[Any] = []
    starts = range(0, len(examples), args.batch_size)
    for start in tqdm(starts, desc=f"{args.scorer} on {args.benchmark}", unit="batch", mininterval=5):
        batch = examples.iloc[start : start + args.batch_size]
        try:
            results += call_scorer(function, list(batch["source"]), list(batch["output"]), args.device)
        except Exception as error:
            ids = ", ".join(repr(example_id) for example_id in batch["example_id"][:5])
            raise FactlabError(
                f"python scorer {args.scorer} ({args.function}) failed on {len(batch)} examples of {args.benchmark} "
                f"(the first: {ids}): {type(error).__name__}: {error}"
            ) from error
    given, problems = python_records(list(examples["example_id"]), results)
    if problems:
        raise DataErrors(f"{args.function} on {args.benchmark}", problems)
    how = orientation(list(given["score"]), args.higher_is_consistent == "true")
    table = score_table(pd.read_parquet(args.sentences), given, how, file=args.function)
    job = {"door": "python", "function": args.function, "orientation": how, "batch_size": args.batch_size}
    write_job(args, args.scorer, table, {"examples": len(table), **sampled}, time.perf_counter() - started, **job)


def run_published(args: argparse.Namespace) -> None:
    """SCALE's released scores enter as a user's would: a JSONL of example_id and score, read by `factlab score
    import` like any user's file."""
    import json

    import pandas as pd

    from factlab.io import atomic_path

    table = pd.read_parquet(args.table)
    rows = table[(table["metric"] == args.metric) & ("true_" + table["dataset"] == args.benchmark)]
    if rows.empty:
        raise FactlabError(f"{args.table} has no {args.metric} scores of {args.benchmark}")
    lines = [
        json.dumps({"example_id": str(example_id), "score": float(score)}, allow_nan=False)
        for example_id, score in zip(rows["example_id"], rows["score"], strict=True)
    ]
    with atomic_path(args.out) as tmp:
        tmp.write_text("\n".join(lines) + "\n")
