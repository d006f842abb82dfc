"""The pairs a user brings to `factlab check`: a CSV/TSV/JSONL/JSON file, or lists from Python.

A file is read by the custom-benchmark reader (factlab.data.adapters.custom: the same formats, line numbers
and encoding checks); then every record is checked and every bad one reported in one error (`DataErrors`:
the line, the upstream column and what is wrong), so a file is fixed in one pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.data.adapters.custom import iter_records, text_problem
from factlab.errors import DataError, DataErrors, FactlabError

PAIR_COLUMNS = ("id", "source", "output", "label")


@dataclass(frozen=True)
class Columns:
    """The upstream column of each field; `id` and `label` are optional (used when the file has them)."""

    source: str = "source"
    output: str = "output"
    id: str = "id"
    label: str = "label"


def read_pairs(path: str | Path, columns: Columns | None = None) -> pd.DataFrame:
    """`id, source, output, label` of every record of `path` (ids: the id column, else the record's position from 0).

    Raises `DataErrors` listing every bad record (empty or non-text source/output, a duplicate id) and
    `DataError` for a file that cannot be read at all (missing, empty, not UTF-8, malformed, a required
    column absent)."""
    columns = columns or Columns()
    file = Path(path)
    if not file.exists():
        raise DataError("input file not found", file=file)
    header, records = iter_records(file)
    for field in ("source", "output"):
        upstream = getattr(columns, field)
        if upstream not in header:
            option = f"--{field}-column"
            raise DataError(
                f"no column {upstream!r} for the {field} texts; the file has {header[:12]}: name yours with {option}",
                file=file,
                field=upstream,
            )
    has_id, has_label = columns.id in header, columns.label in header
    problems: list[str] = []
    rows: list[tuple[str, str, str, Any]] = []
    first_line: dict[str, str] = {}
    for position, (where, record) in enumerate(records):
        texts = []
        for field in ("source", "output"):
            value = record.get(getattr(columns, field))
            problem = text_problem(value)
            if problem:
                problems.append(f"record {where}, field {getattr(columns, field)!r}: {field} {problem}")
            texts.append(value)
        example_id = record.get(columns.id) if has_id else None
        example_id = str(position) if example_id is None or example_id == "" else str(example_id)
        if example_id in first_line:
            problems.append(f"record {where}, field {columns.id!r}: id {example_id!r} repeats the id of {first_line[example_id]}")
        first_line.setdefault(example_id, where)
        rows.append((example_id, texts[0], texts[1], record.get(columns.label) if has_label else None))
    if not rows:
        raise DataError("file has no records", file=file)
    if problems:
        raise DataErrors(file, problems)
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def pairs_frame(sources: Sequence[str], outputs: Sequence[str], ids: Sequence[Any] | None = None) -> pd.DataFrame:
    """`id, source, output, label` of pairs given in Python; every bad position reported at once."""
    sources, outputs = list(_sequence(sources, "sources")), list(_sequence(outputs, "outputs"))
    if len(sources) != len(outputs):
        raise FactlabError(f"sources and outputs differ in length: {len(sources)} sources, {len(outputs)} outputs")
    names = [str(i) for i in range(len(sources))] if ids is None else [str(i) for i in _sequence(ids, "ids")]
    if len(names) != len(sources):
        raise FactlabError(f"ids has {len(names)} items for {len(sources)} pairs")
    problems = [
        f"{side}[{position}] {problem}"
        for side, texts in (("sources", sources), ("outputs", outputs))
        for position, text in enumerate(texts)
        if (problem := text_problem(text))
    ]
    repeated = pd.Series(names)[pd.Series(names).duplicated()].tolist()
    problems += [f"ids: {name!r} is repeated" for name in dict.fromkeys(repeated)]
    if problems:
        raise DataErrors("<arguments>", problems)
    return pd.DataFrame({"id": names, "source": sources, "output": outputs, "label": None})


def _sequence(values: Any, name: str) -> Sequence[Any]:
    if isinstance(values, str):
        raise FactlabError(f"{name} must be a list of texts, not one string (wrap it: [{name[:-1]}])")
    if isinstance(values, pd.Series):
        return values.tolist()
    if not isinstance(values, Sequence):
        try:
            return list(values)
        except TypeError:
            raise FactlabError(f"{name} must be a list of texts, got {type(values).__name__}") from None
    return values
