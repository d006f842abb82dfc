"""`factlab paper scoring-throughput-table`: every scorer's throughput in the run, from its jobs' `benchmark:` files.

Each scoring job (benchmark, scorer, shard) writes `benchmarks/score/<scorer>/<benchmark>.<shard>.tsv` (Snakemake:
wall seconds `s`, `cpu_time`, peak `max_rss` in MB), and its merged report `results/score/<benchmark>/reports/
<scorer>.json` counts the examples it scored and, for the scorers that run premise-hypothesis pairs through the
engine, those pairs (`pairs`, cache hits included) and the engine's own rate (`pairs_per_s`: distinct pairs per
second of scoring, model load excluded, recomputed by the merge from the shards' sums). Per (scorer, benchmark),
over its shards' jobs:

- examples, words (the source's and the output's whitespace words of every scored example, from the benchmark's
  data), model pairs;
- the jobs' summed wall and CPU seconds and largest peak memory;
- examples/s, words/s and pairs/s per wall second of the jobs: start-up and model load included, what a user
  waits for; beside the engine's pairs/s, scoring alone.

`--out-csv` holds those rows; the paper's table sums them per scorer over its benchmarks. Nothing is measured here:
the numbers are the run's own.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.errors import DataError
from factlab.io import write_text
from factlab.paper import captions
from factlab.paper.pipeline_cost_command import read_benchmark
from factlab.paper.tables import write_tables

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = (
    "scorer",
    "benchmark",
    "jobs",
    "examples",
    "words",
    "model pairs",
    "wall s",
    "CPU s",
    "peak RSS MB",
    "examples/s",
    "words/s",
    "pairs/s",
    "engine pairs/s",
)


def job_key(path: str | Path) -> tuple[str, str]:
    """(scorer, benchmark) of `benchmarks/score/<scorer>/<benchmark>.<shard>.tsv`."""
    path = Path(path)
    benchmark, dot, shard = path.stem.rpartition(".")
    if path.parent.parent.name != "score" or not dot or not shard.isdigit():
        raise DataError("a scoring job's benchmark file lies at benchmarks/score/<scorer>/<benchmark>.<shard>.tsv", file=path)
    return path.parent.name, benchmark


def read_report(path: str | Path) -> dict[str, Any]:
    report = json.loads(Path(path).read_text(encoding="utf-8"))
    for field in ("benchmark", "examples"):
        if field not in report:
            raise DataError("missing field", file=path, field=field)
    return report


def example_words(data: pd.DataFrame, scored_ids: pd.Series, *, file: str | Path) -> tuple[int, int]:
    """(examples, source + output words) of the scored examples, each counted once."""
    from factlab.data.stats import word_counts

    ids = set(scored_ids)
    scored = data[data["example_id"].isin(ids)]
    if len(scored) != len(ids):
        raise DataError(f"{len(ids) - len(scored)} scored example(s) are not in the benchmark's data", file=file)
    return len(scored), int(word_counts(scored["source"]).sum() + word_counts(scored["output"]).sum())


def engine_rate(report: dict[str, Any]) -> float:
    """The engine's pairs per second of scoring, as the merge recomputed it from the shards' summed counts and seconds
    (`factlab.score.jobs.with_pair_rate`); none where the engine scored no pair itself (every pair from the cache, as
    SummaC-Conv's, whose report says 0)."""
    return float(report["pairs_per_s"]) if report.get("distinct_pairs_scored") and "pairs_per_s" in report else float("nan")


def with_rates(frame: pd.DataFrame) -> pd.DataFrame:
    wall = frame["wall s"].where(frame["wall s"] > 0)
    return frame.assign(
        **{
            "examples/s": frame["examples"] / wall,
            "words/s": frame["words"] / wall,
            "pairs/s": frame["model pairs"].astype("float64") / wall,
        }
    )


def throughput_rows(
    benchmark_files: Sequence[str], reports: Sequence[str], scores: Sequence[str], data: Sequence[str]
) -> pd.DataFrame:
    """One row per (scorer, benchmark) (COLUMNS); `reports` and `scores` are parallel, `data` by benchmark stem."""
    import pandas as pd

    if len(reports) != len(scores):
        raise DataError(f"{len(reports)} reports for {len(scores)} score tables: they are given in pairs")
    jobs = pd.DataFrame([{**read_benchmark(path), "key": job_key(path)} for path in benchmark_files])
    data_paths = {Path(path).stem: path for path in data}
    frames: dict[str, pd.DataFrame] = {}
    rows = []
    for report_path, scores_path in zip(reports, scores, strict=True):
        report = read_report(report_path)
        # the scorer is the report's name, as a score table's is (a user's model scorer runs a built-in's command)
        scorer, benchmark = Path(report_path).stem, str(report["benchmark"])
        own = jobs[jobs["key"] == (scorer, benchmark)]
        if own.empty:
            raise DataError(f"no benchmark file of a {scorer} job on {benchmark}", file=report_path)
        if benchmark not in data_paths:
            raise DataError(f"no data file of benchmark {benchmark} (--data)", file=report_path)
        if benchmark not in frames:
            frames[benchmark] = pd.read_parquet(data_paths[benchmark], columns=["example_id", "source", "output"])
        scored_ids = pd.read_parquet(scores_path, columns=["example_id"])["example_id"]
        examples, words = example_words(frames[benchmark], scored_ids, file=scores_path)
        if examples != report["examples"]:
            raise DataError(f"the report counts {report['examples']} examples, the scores {examples}", file=report_path)
        rows.append(
            {
                "scorer": scorer,
                "benchmark": benchmark,
                "jobs": len(own),
                "examples": examples,
                "words": words,
                "model pairs": report.get("pairs"),
                "wall s": own["wall_s"].sum(),
                "CPU s": own["cpu_s"].sum(),
                "peak RSS MB": own["max_rss_mb"].max(),
                "engine pairs/s": engine_rate(report),
            }
        )
    unreported = set(jobs["key"]) - {(row["scorer"], row["benchmark"]) for row in rows}
    if unreported:
        raise DataError(f"benchmark files of jobs without a report (--reports): {sorted(unreported)}")
    frame = pd.DataFrame(rows).astype({"model pairs": "Int64", "engine pairs/s": "float64"})
    return with_rates(frame).sort_values(["scorer", "benchmark"], ignore_index=True)[list(COLUMNS)]


def per_scorer(rows: pd.DataFrame) -> pd.DataFrame:
    """Each scorer's rows summed over its benchmarks, the rates from the sums (the engine's rate, per benchmark, stays
    in the rows)."""
    summed = rows.groupby("scorer", sort=True).agg(
        benchmarks=("benchmark", "size"),
        jobs=("jobs", "sum"),
        examples=("examples", "sum"),
        words=("words", "sum"),
        **{
            "model pairs": ("model pairs", lambda pairs: pairs.sum(min_count=1)),  # none: a scorer without pairs
            "wall s": ("wall s", "sum"),
            "CPU s": ("CPU s", "sum"),
            "peak RSS MB": ("peak RSS MB", "max"),
        },
    )
    return with_rates(summed.reset_index().astype({"model pairs": "Int64"}))


def run_scoring_throughput_table(args: argparse.Namespace) -> None:
    rows = throughput_rows(args.benchmarks, args.reports, args.scores, args.data)
    write_text(rows.to_csv(index=False, float_format="%.6g"), args.out_csv)
    write_tables(per_scorer(rows), args.out_md, args.out_tex, captions.SCORING_THROUGHPUT, "tab:scoring-throughput")


def register(commands: Any) -> None:
    command = commands.add_parser(
        "scoring-throughput-table", help="every scorer's examples, words and pairs per second in the run (benchmark: files)"
    )
    command.add_argument("--benchmarks", nargs="+", required=True, help="benchmarks/score/<scorer>/<benchmark>.<shard>.tsv")
    command.add_argument("--reports", nargs="+", required=True, help="results/score/<benchmark>/reports/<scorer>.json")
    command.add_argument("--scores", nargs="+", required=True, help="results/score/<benchmark>/<scorer>.parquet, as --reports")
    command.add_argument("--data", nargs="+", required=True, help="results/data/<benchmark>.parquet")
    command.add_argument("--out-csv", required=True, help="per scorer and benchmark")
    command.add_argument("--out-md", required=True)
    command.add_argument("--out-tex", required=True)
    command.set_defaults(func=run_scoring_throughput_table)
