"""What a benchmark or table is: its name, the upstream datasets it reads and how it is built.

Each adapter module in `factlab.data.adapters` declares `SPECS: list[BenchmarkSpec]`; the
registry (`factlab.data.registry`) collects them. Kept apart from the registry so that adapters
never import the module that imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from factlab.download.manifest import RawFiles

Kind = Literal["benchmark", "table"]


@dataclass
class Built:
    """An adapter's result: the frame and the counts of what was read, kept and dropped."""

    frame: pd.DataFrame
    # e.g. {"read": 510, "dropped_no_article": 11}; every `dropped_*` key is summed into the report.
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    datasets: tuple[str, ...]  # manifest datasets read
    build: Callable[[RawFiles], Built]
    kind: Kind = "benchmark"  # "benchmark": canonical schema; "table": its own columns and key
    required: tuple[str, ...] = ()  # for tables
    unique: tuple[str, ...] = ()  # for tables
    role: Literal["evaluation", "training", "published"] = "evaluation"
    description: str = ""
    local_files: tuple[str, ...] = ()  # inputs outside the manifest (bring-your-own benchmarks)
    # Columns a meta-evaluation may break results down by (e.g. an upstream `domain` kept by a custom benchmark).
    group_columns: tuple[str, ...] = ()
