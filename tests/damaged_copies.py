"""Adapter-test helpers: a real mirrored JSONL file with one record changed, pinned in a manifest of
its own; one row by example_id; the check that an adapter's error is one line naming file, record, field.

The damaged copy gets its own sha256 in the returned RawFiles, so the adapter's own checks are
what a test exercises (a file changed after its download is refused earlier: test_build_failures).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from factlab.data.adapters.nli import premise_id
from factlab.data.schema import validate_benchmark
from factlab.download.manifest import RawFiles
from factlab.errors import DataError
from factlab.io import sha256_file


def damaged_copy(
    raw: RawFiles,
    tmp_path: Path,
    dataset: str,
    suffix: str,
    line_no: int,
    edit: Callable[[dict[str, Any]], None],
    also: tuple[str, ...] = (),
) -> tuple[RawFiles, Path]:
    """RawFiles under `tmp_path` where line `line_no` of `suffix` went through `edit`; `also` are copied intact."""
    pinned = list(raw.manifest)
    damaged = None
    for name in (suffix, *also):
        entry = raw.entry(dataset, name)
        target = tmp_path / entry.relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(raw.path(dataset, name), target)
        if name == suffix:
            lines = target.read_text(encoding="utf-8").split("\n")
            record = json.loads(lines[line_no - 1])
            edit(record)
            lines[line_no - 1] = json.dumps(record, ensure_ascii=False)
            target.write_text("\n".join(lines), encoding="utf-8")
            pinned = [dataclasses.replace(e, sha256=sha256_file(target)) if e == entry else e for e in pinned]
            damaged = target
    assert damaged is not None
    return RawFiles(tmp_path, pinned, per_dataset=False), damaged


def row(frame: pd.DataFrame, example_id: str) -> pd.Series:
    match = frame.loc[frame["example_id"] == example_id]
    assert len(match) == 1, example_id
    return match.iloc[0]


def assert_one_line(error: pytest.ExceptionInfo[DataError], path: Path, record: str, field: str) -> None:
    assert error.value.file == str(path) and error.value.record == record and error.value.field == field
    message = str(error.value)
    assert "\n" not in message and str(path) in message and record in message and field in message


def line_count(path: Path) -> int:
    """Independent count: newline bytes (every mirrored file ends with one)."""
    return path.read_bytes().count(b"\n")


def check_nli_schema(frame: pd.DataFrame, name: str, vocabulary: set[str]) -> pd.DataFrame:
    """A pair corpus in the canonical schema: its NLI labels, label = entailment, doc_id = the premise's id."""
    frame = validate_benchmark(frame, name)
    assert set(frame["nli_label"]) == vocabulary
    assert (frame["label"] == frame["nli_label"].eq("entailment").astype(int)).all()
    assert (frame["doc_id"] == frame["source"].map(premise_id)).all()
    return frame
