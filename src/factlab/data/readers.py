"""Readers for upstream formats that fail with the file, record and field named."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.errors import DataError


def read_json(path: str | Path) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise DataError(f"malformed JSON: {error.msg}", file=path, record=f"line {error.lineno}") from error


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, record) for each non-blank line; a bad line raises DataError."""
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataError(f"malformed JSON line: {error.msg}", file=path, record=f"line {line_no}") from error
            if not isinstance(record, dict):
                raise DataError("JSON line is not an object", file=path, record=f"line {line_no}")
            yield line_no, record


def require(record: Mapping[str, Any], field: str, *, file: str | Path, record_id: str | int) -> Any:
    """The value of `field`, or DataError naming file, record and field when absent or null."""
    if field not in record or record[field] is None:
        raise DataError("missing required field", file=file, record=record_id, field=field)
    return record[field]


def read_text_csv(path: str | Path, sep: str = ",", empty_is_missing: bool = False) -> pd.DataFrame:
    """A CSV/TSV with every cell as text; a file pandas cannot parse raises DataError naming it.

    Texts such as "NA" or "None" stay text (pandas would read them as missing); with
    `empty_is_missing`, empty cells become <NA>.
    """
    try:
        return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=[""] if empty_is_missing else None)
    except (pd.errors.ParserError, UnicodeDecodeError) as error:
        raise DataError(f"cannot parse table: {error}", file=path) from error
