"""Score tables as the scorer analyses read them: `results/score/<benchmark>/<scorer>.parquet` joined to their
benchmark's labels and documents (`factlab metaeval detection`, `leaderboard`, `qa-decomposition`)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from factlab.errors import FactlabError

if TYPE_CHECKING:
    import pandas as pd


def add_score_table_arguments(parser: argparse.ArgumentParser) -> None:
    """--scores, --sampled-scores and --data: the score tables `read_score_tables` reads and their benchmarks."""
    parser.add_argument("--scores", nargs="+", required=True, help="results/score/<benchmark>/<scorer>.parquet")
    parser.add_argument(
        "--sampled-scores", nargs="*", default=[], help="score tables of a seeded sample of their benchmark (score.sample)"
    )
    parser.add_argument("--data", nargs="+", required=True, help="results/data/<benchmark>.parquet of the same benchmarks")


def labelled_scores(data: pd.DataFrame, scores: pd.DataFrame, groups: Sequence[str] = ()) -> pd.DataFrame:
    """Scores joined to labels, documents and the `groups` columns; every scored example must be in the benchmark."""
    joined = scores[["example_id", "score"]].merge(
        data[["example_id", "doc_id", "source", "label", *groups]], on="example_id", how="left", validate="one_to_one"
    )
    if joined["doc_id"].isna().any():
        missing = joined.loc[joined["doc_id"].isna(), "example_id"].iloc[0]
        raise FactlabError(f"scored example {missing!r} is not in the benchmark")
    return joined[joined["label"].notna()]


def read_score_tables(
    scores: Sequence[str],
    sampled_scores: Sequence[str],
    data: Mapping[str, pd.DataFrame],
    groups: Mapping[str, Sequence[str]] | None = None,
) -> tuple[dict[str, dict[str, pd.DataFrame]], set[tuple[str, str]]]:
    """Score tables `results/score/<benchmark>/<scorer>.parquet` (the scorer is the file's stem, the benchmark its
    folder's name) as labelled scores, {scorer: {benchmark: frame}}, and the (scorer, benchmark) pairs of
    `sampled_scores`, scored on a seeded sample of their benchmark."""
    import pandas as pd

    by_scorer: dict[str, dict[str, pd.DataFrame]] = {}
    sampled: set[tuple[str, str]] = set()
    for path, on_sample in [*((path, False) for path in scores), *((path, True) for path in sampled_scores)]:
        scorer, benchmark = Path(path).stem, Path(path).parent.name
        if benchmark not in data:
            raise FactlabError(f"{path}: no --data file for benchmark {benchmark!r}")
        if benchmark in by_scorer.get(scorer, {}):
            raise FactlabError(f"{path}: {scorer} on {benchmark} is given twice (--scores and --sampled-scores)")
        by_scorer.setdefault(scorer, {})[benchmark] = labelled_scores(
            data[benchmark], pd.read_parquet(path), (groups or {}).get(benchmark, ())
        )
        if on_sample:
            sampled.add((scorer, benchmark))
    return by_scorer, sampled
