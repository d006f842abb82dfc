"""`factlab paper pipeline-cost-table`: what the run cost, from Snakemake's `benchmark:` files.

Each job with a `benchmark:` directive writes `benchmarks/<stage>/<rule>[/<wildcards>].tsv`: one row
with its wall time (`s`), CPU time (`cpu_time`) and peak resident memory (`max_rss`, MB), and Snakemake
writes it when the job ends. The table has one row per (stage, rule): jobs, summed wall and CPU time, the
elapsed time, the longest job and the largest peak memory; then one row per stage and the total. Job
times are summed, so with parallel jobs they exceed the run's wall time; the elapsed time is what the
clock saw: the time during which at least one of the jobs ran, each job running from its start (its
file's modification time less its wall time) to its end (its file's modification time). Overlapping jobs
count once and a pause between two runs that built the tree (a stopped and resumed run) not at all, so
the total row's is the run's wall time less the time when only jobs without a benchmark (the data
builds, the paper) ran. It holds for the runs that wrote the files: a copy that resets modification
times (`dvc pull`, `--touch`) resets it. The caption adds the engine's scoring
throughput (results/benchmarks/scoring_throughput.json). Nothing is measured here: the numbers are the
run's own.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.errors import DataError
from factlab.paper import captions
from factlab.paper.tables import write_tables

if TYPE_CHECKING:
    import pandas as pd

BENCHMARK_ROOT = "benchmarks"
BENCHMARK_COLUMNS = ("s", "max_rss", "cpu_time")


def read_benchmark(path: str | Path) -> dict[str, Any]:
    """One job's row: its stage and rule (from the path), wall seconds, CPU seconds, peak RSS in MB."""
    import pandas as pd

    parts = Path(path).parts
    if BENCHMARK_ROOT not in parts or len(parts) - parts.index(BENCHMARK_ROOT) < 3:
        raise DataError(f"a benchmark file lies at {BENCHMARK_ROOT}/<stage>/<rule>…; got {path}", file=path)
    stage, rule = parts[parts.index(BENCHMARK_ROOT) + 1 : parts.index(BENCHMARK_ROOT) + 3]
    table = pd.read_csv(path, sep="\t")
    missing = [column for column in BENCHMARK_COLUMNS if column not in table.columns]
    if missing or len(table) != 1:
        raise DataError(
            f"a Snakemake benchmark file has one row with columns {BENCHMARK_COLUMNS}",
            file=path,
            field=missing[0] if missing else None,
        )
    row = table.iloc[0]
    ended = Path(path).stat().st_mtime
    # Snakemake writes "-" where it could not measure (e.g. a job too short to be sampled).
    number = lambda column: pd.to_numeric(row[column], errors="coerce")  # noqa: E731
    return {
        "stage": stage,
        "rule": Path(rule).stem,
        "job": str(path),
        "wall_s": number("s"),
        "cpu_s": number("cpu_time"),
        "max_rss_mb": number("max_rss"),
        "ended_s": ended,
    }


def busy_seconds(starts: Sequence[float], ends: Sequence[float]) -> float:
    """Length of the union of the intervals [start, end]: the seconds during which at least one job ran."""
    busy, covered_until = 0.0, float("-inf")
    for start, end in sorted(zip(starts, ends, strict=True)):
        if end > covered_until:
            busy += end - max(start, covered_until)
            covered_until = end
    return busy


def cost_frame(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per (stage, rule), then per stage: jobs, summed wall/CPU seconds, elapsed seconds (while at least one
    of the jobs ran), longest job, largest peak memory."""

    import pandas as pd

    def summarise(group: pd.DataFrame) -> pd.Series:
        return pd.Series(
            {
                "jobs": len(group),
                "wall s (sum)": group["wall_s"].sum(),
                "CPU s (sum)": group["cpu_s"].sum(),
                "elapsed s": busy_seconds(group["ended_s"] - group["wall_s"].fillna(0), group["ended_s"]),
                "longest job s": group["wall_s"].max(),
                "peak RSS MB": group["max_rss_mb"].max(),
            }
        )

    by_rule = jobs.groupby(["stage", "rule"], sort=True).apply(summarise, include_groups=False).reset_index()
    by_stage = jobs.groupby("stage", sort=True).apply(summarise, include_groups=False).reset_index().assign(rule="(stage)")
    total = summarise(jobs).to_frame().T.assign(stage="(all)", rule="(all)")
    frame = pd.concat([by_rule, by_stage, total], ignore_index=True)
    frame["jobs"] = frame["jobs"].astype(int)
    return frame[["stage", "rule", "jobs", "wall s (sum)", "CPU s (sum)", "elapsed s", "longest job s", "peak RSS MB"]]


def pipeline_cost(benchmarks: Sequence[str | Path]) -> pd.DataFrame:
    import pandas as pd

    if not benchmarks:
        raise DataError("no benchmark file given: the pipeline-cost table needs the run's benchmarks/ files")
    return cost_frame(pd.DataFrame([read_benchmark(path) for path in benchmarks]))


def run_pipeline_cost_table(args: argparse.Namespace) -> None:
    frame = pipeline_cost(args.benchmarks)
    throughput = json.loads(Path(args.throughput).read_text(encoding="utf-8"))
    write_tables(frame, args.out_md, args.out_tex, captions.pipeline_cost(throughput), "tab:pipeline-cost")


def register(commands: Any) -> None:
    command = commands.add_parser("pipeline-cost-table", help="per stage and rule: jobs, time, peak memory (benchmark: files)")
    command.add_argument("--benchmarks", nargs="+", required=True, help="benchmarks/<stage>/<rule>….tsv")
    command.add_argument("--throughput", required=True, help="results/benchmarks/scoring_throughput.json")
    command.add_argument("--out-md", required=True)
    command.add_argument("--out-tex", required=True)
    command.set_defaults(func=run_pipeline_cost_table)
