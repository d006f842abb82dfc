"""`factlab score training-overlap`: which examples of a custom benchmark share text with the training mixture.

A custom benchmark is not an input of the mixture's leakage filter (adding one never retrains a model), so its
overlap with the finished mixture is reported instead: an example whose source or output shares a run of `n`
words (factlab.data.leakage: lower-cased `\\w+` words) with any training premise or claim is listed and counted
(results/score/<benchmark>/training_overlap.json). Its scores may be optimistic; the report page says how many.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from factlab.commands import positive_int, write_report

if TYPE_CHECKING:
    import pandas as pd


def register(commands: Any) -> None:
    overlap = commands.add_parser("training-overlap", help="a custom benchmark's examples sharing text with the mixture")
    overlap.add_argument("--benchmark", required=True)
    overlap.add_argument("--data", required=True, help="results/data/<benchmark>.parquet")
    overlap.add_argument("--mixture", required=True, help="results/models/aligner_data/mixture.parquet")
    overlap.add_argument("--ngram", type=positive_int, required=True)
    overlap.add_argument("--out", required=True)
    overlap.set_defaults(func=run_training_overlap)


def overlapping_examples(examples: pd.DataFrame, training_texts: Iterable[str], n: int) -> list[str]:
    """The example_ids (sorted) whose source or output shares an `n`-word run with any of `training_texts`."""
    from factlab.data.leakage import shingles

    owners: dict[int, set[str]] = {}
    for example_id, source, output in zip(examples["example_id"], examples["source"], examples["output"], strict=True):
        for run in shingles(str(source), n) | shingles(str(output), n):
            owners.setdefault(run, set()).add(str(example_id))
    found: set[str] = set()
    for text in training_texts:
        for run in shingles(text, n) & owners.keys():
            found |= owners[run]
    return sorted(found)


def run_training_overlap(args: argparse.Namespace) -> None:
    import pandas as pd

    examples = pd.read_parquet(args.data, columns=["example_id", "source", "output"])
    mixture = pd.read_parquet(args.mixture, columns=["text_a", "text_b"])
    texts = dict.fromkeys([*mixture["text_a"].astype(str), *mixture["text_b"].astype(str)])
    found = overlapping_examples(examples, tqdm(texts, desc="training overlap", mininterval=10), args.ngram)
    write_report(
        {
            "benchmark": args.benchmark,
            "ngram": args.ngram,
            "examples": len(examples),
            "training_texts": len(texts),
            "overlapping_examples": len(found),
            "example_ids": found,
        },
        args.out,
    )
