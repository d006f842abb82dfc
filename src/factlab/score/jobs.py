"""One scoring job = (benchmark, scorer, shard): its examples, and the merge of a scorer's shards.

Where `score.sampled_benchmarks` gives a scorer a benchmark, the job scores a seeded sample of its examples
(`factlab.sampling.sample_examples`, drawn before sharding): for any shard count, and nested (a scorer's smaller
sample, score.sample.scorer_examples, is part of the others'), so the sampled scorers' tables intersect with each
other and with every full table.

Examples go to shards by a stable hash of their source document, so the outputs of one document
(which share their source chunks, hence most pairs) are scored by one job; any shard can rerun
alone. The merged table is sorted by example_id and is the same whatever the shard count.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.errors import FactlabError

# Report keys that describe a job rather than count things: kept from the first shard, not summed.
JOB_KEYS = ("benchmark", "scorer", "model", "device", "precision", "settings", "sample")
SHARD_KEYS = ("shard", "shards")  # the merged report says how many shards it merged


def shard_of(doc_id: str, shards: int) -> int:
    """The shard of a source document: stable across runs, machines and Python versions."""
    return int(hashlib.sha256(doc_id.encode("utf-8")).hexdigest()[:12], 16) % shards


def shard_examples(examples: pd.DataFrame, shard: int, shards: int) -> pd.DataFrame:
    if shards < 1 or not 0 <= shard < shards:
        raise FactlabError(f"shard {shard} of {shards}: need 0 <= shard < shards")
    keep = [shard_of(str(doc_id), shards) == shard for doc_id in examples["doc_id"]]
    return examples[keep].reset_index(drop=True)


def merge_shards(tables: Sequence[pd.DataFrame], reports: Sequence[dict[str, Any]]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The shards' scores in example_id order, and their reports: counts summed, job keys kept."""
    frames = [table for table in tables if not table.empty]
    merged = pd.concat(frames, ignore_index=True) if frames else tables[0].iloc[0:0]
    if merged["example_id"].duplicated().any():
        duplicate = merged.loc[merged["example_id"].duplicated(), "example_id"].iloc[0]
        raise FactlabError(f"example {duplicate!r} is scored by two shards")
    merged = merged.sort_values("example_id", kind="stable").reset_index(drop=True)
    report: dict[str, Any] = {"shards": len(reports)}
    for shard_report in reports:
        for key, value in shard_report.items():
            if key in SHARD_KEYS:
                continue
            if key in JOB_KEYS:
                report.setdefault(key, value)
            elif isinstance(value, bool) or not isinstance(value, int | float):
                continue  # rates (pairs/s) and labels do not add up across shards
            else:
                report[key] = report.get(key, 0) + value
    return merged, with_pair_rate(report)


def with_pair_rate(report: dict[str, Any]) -> dict[str, Any]:
    """`report` with pairs/s where it counts scored pairs and seconds (a shard's, or the summed shards')."""
    seconds = report.get("score_seconds")
    if seconds and "distinct_pairs_scored" in report:
        report["pairs_per_s"] = round(report["distinct_pairs_scored"] / seconds, 1)
    return report


def read_reports(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    return [json.loads(Path(path).read_text()) for path in paths]
