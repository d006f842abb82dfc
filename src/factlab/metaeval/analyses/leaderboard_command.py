"""`factlab metaeval leaderboard`: every scorer's ROC AUC on every scored benchmark against the benchmark's best
built-in scorer (`factlab.metaeval.leaderboard`), built-in and user scorers alike.

Score tables are read as by `factlab metaeval detection` (the scorer is a file's stem, the benchmark its folder's
name; `--sampled-scores` were scored on a seeded sample). A scorer that `--builtin` does not name is a user's. The
`--validation` benchmarks tuned thresholds and settings, so they are not ranked. `metrics.json` holds each
scorer's mean AUC over the benchmarks it scored, how many those are, and its significant differences.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments
from factlab.io import write_json, write_text
from factlab.metaeval.analyses.score_tables import add_score_table_arguments, read_score_tables
from factlab.metaeval.arguments import headline_number

if TYPE_CHECKING:
    import pandas as pd

LOG = logging.getLogger(__name__)


def register(commands: Any) -> None:
    parser = commands.add_parser("leaderboard", help="every scorer's AUC against each benchmark's best built-in scorer")
    add_score_table_arguments(parser)
    parser.add_argument("--builtin", nargs="*", default=[], help="the built-in scorers (score.scorers); others are a user's")
    parser.add_argument("--published", nargs="*", default=[], help="released scores of published metrics (score.published)")
    parser.add_argument("--validation", nargs="*", default=[], help="benchmarks that tuned thresholds: not ranked")
    add_bootstrap_arguments(parser, "document")
    parser.add_argument("--out", required=True, help="CSV: one row per (benchmark, scorer)")
    parser.add_argument("--out-metrics", required=True, help="metrics.json: each scorer's mean AUC (dvc metrics)")
    parser.set_defaults(func=run_leaderboard)


def leaderboard_metrics(summary: pd.DataFrame) -> dict[str, Any]:
    """metrics.json (`dvc metrics show`) from `scorer_summary`: per scorer, its kind, mean AUC and the benchmarks
    behind it."""
    return {
        str(row.scorer): {
            "kind": row.kind,
            "benchmarks": int(row.benchmarks),
            "sampled_benchmarks": list(row.sampled_benchmarks),
            "mean_roc_auc": headline_number(row.mean_roc_auc),
            "reference_on": list(row.reference_on),
            "significant_differences": int(row.significant),
        }
        for row in summary.itertuples(index=False)
    }


def untested(table: pd.DataFrame) -> pd.DataFrame:
    """Rows with an AUC and a reference other than themselves that have no paired test all the same."""
    compared = table["roc_auc"].notna() & table["reference"].notna() & (table["scorer"] != table["reference"])
    return table[compared & table["p_value"].isna()]


def run_leaderboard(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.metaeval.leaderboard import leaderboard, scorer_summary

    data = {Path(path).stem: pd.read_parquet(path) for path in args.data}
    frames, sampled = read_score_tables(args.scores, args.sampled_scores, data)
    ranked = {
        scorer: {name: frame for name, frame in by_benchmark.items() if name not in args.validation}
        for scorer, by_benchmark in frames.items()
    }
    table = leaderboard(
        ranked,
        builtin=set(args.builtin),
        published=set(args.published),
        sampled=sampled,
        resamples=args.resamples,
        confidence=args.confidence,
        seed=args.seed,
    )
    for row in table[table["reference"].isna()].drop_duplicates("benchmark").itertuples(index=False):
        LOG.warning("%s: no built-in scorer scored it whole with both labels: no reference, no comparison", row.benchmark)
    for row in untested(table).itertuples(index=False):
        LOG.warning(
            "%s vs %s on %s: no paired test (the examples both scored hold one label, or too few documents to resample)",
            row.scorer,
            row.reference,
            row.benchmark,
        )
    write_text(table.to_csv(index=False, float_format="%.6g"), args.out)
    write_json(leaderboard_metrics(scorer_summary(table)), args.out_metrics)
