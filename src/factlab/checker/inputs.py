"""The pairs a user brings to `factlab check`: a CSV/TSV/JSONL/JSON file or standard input, or lists from Python.

A file is read by the custom-benchmark reader (factlab.data.adapters.custom: the same formats, line numbers
and encoding checks); then every record is checked and every bad one reported in one error (`DataErrors`:
the line, the upstream column and what is wrong), so a file is fixed in one pass.
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.data.adapters.custom import iter_records, text_problem
from factlab.errors import DataError, DataErrors, FactlabError

PAIR_COLUMNS = ("id", "source", "output", "label")
FORMATS = ("csv", "tsv", "jsonl", "json")  # as the file suffixes the reader knows (factlab.data.adapters.custom)
STDIN = "-"
STDIN_FORMAT = "jsonl"


@dataclass(frozen=True)
class Columns:
    """The upstream column of each field. `id` and `label` are optional: None reads the columns named "id" and
    "label" when the file has them; a name given must be in the file (an id column, or the error says so) or it
    is warned about (a label column: the results carry no label)."""

    source: str = "source"
    output: str = "output"
    id: str | None = None
    label: str | None = None


def read_pairs(
    path: str | Path,
    columns: Columns | None = None,
    *,
    format: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """`id, source, output, label` of every record of `path` (ids: the id column, else the record's position from 0).

    `path` "-" reads standard input, as JSONL unless `format` (one of `FORMATS`) names another; `format` also reads
    a file whose suffix is not its format. The frame's `attrs["label_column"]` is the label column read (None: the
    file has none). `warn` gets each warning (default: `warnings.warn`).

    Raises `DataErrors` listing every bad record (empty or non-text source/output, a duplicate id) and
    `DataError` for a file that cannot be read at all (missing, empty, not UTF-8, malformed, a required
    column absent)."""
    if format is not None and format not in FORMATS:
        raise FactlabError(f"unknown input format {format!r}: one of {', '.join(FORMATS)}")
    with _readable(str(path), format) as (file, shown):
        try:
            return _read_pairs(file, shown, columns or Columns(), warn or _warn)
        except DataError as error:
            if shown != str(file):  # the staged copy's path means nothing to the user: name what they gave
                error.args = (str(error).replace(str(file), shown),)
                error.file = shown
            raise


@contextmanager
def _readable(path: str, format: str | None) -> Iterator[tuple[Path, str]]:
    """The file the reader reads, with the suffix of its format, and the name to show: standard input is staged in a
    temporary file; a file whose suffix is not `format`, linked under a name with that suffix."""
    if path == STDIN:
        with tempfile.TemporaryDirectory(prefix="factlab-check.") as folder:
            staged = Path(folder) / f"stdin.{format or STDIN_FORMAT}"
            staged.write_bytes(sys.stdin.buffer.read())
            yield staged, "<stdin>"
        return
    file = Path(path)
    if not file.exists():
        raise DataError("input file not found", file=file)
    if format is None or file.suffix.lower() == f".{format}":
        yield file, str(file)
        return
    with tempfile.TemporaryDirectory(prefix="factlab-check.") as folder:
        staged = Path(folder) / f"input.{format}"
        staged.symlink_to(file.resolve())
        yield staged, str(file)


def _warn(message: str) -> None:
    warnings.warn(message, stacklevel=4)  # the caller of read_pairs


def _read_pairs(file: Path, shown: str, columns: Columns, warn: Callable[[str], None]) -> pd.DataFrame:
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
    if columns.id is not None and columns.id not in header:
        raise DataError(
            f"no column {columns.id!r} for the ids; the file has {header[:12]}: name yours with --id-column "
            "(without it, ids are the column 'id' where there is one, else row numbers from 0)",
            file=file,
            field=columns.id,
        )
    id_column = columns.id or "id"
    label_column = columns.label or "label"
    if columns.label is not None and columns.label not in header:
        warn(f"{shown}: no column {columns.label!r} for the labels (the file has {header[:12]}): the results carry none")
    has_id, has_label = id_column in header, label_column in header
    problems: list[str] = []
    rows: list[tuple[str, str, str]] = []
    labels: list[Any] = []
    first_line: dict[str, str] = {}
    for position, (where, record) in enumerate(records):
        texts = []
        for field in ("source", "output"):
            value = record.get(getattr(columns, field))
            problem = text_problem(value)
            if problem:
                problems.append(f"record {where}, field {getattr(columns, field)!r}: {field} {problem}")
            texts.append(value)
        example_id = record.get(id_column) if has_id else None
        example_id = str(position) if example_id is None or example_id == "" else str(example_id)
        if example_id in first_line:
            problems.append(f"record {where}, field {id_column!r}: id {example_id!r} repeats the id of {first_line[example_id]}")
        first_line.setdefault(example_id, where)
        rows.append((example_id, texts[0], texts[1]))
        labels.append(record.get(label_column) if has_label else None)
    if not rows:
        raise DataError("file has no records", file=file)
    if problems:
        raise DataErrors(file, problems)
    frame = pd.DataFrame(rows, columns=list(PAIR_COLUMNS[:3]))
    frame["label"] = pd.Series(labels, dtype=object)  # as read: 1 stays 1 beside an absent label (None), not 1.0 and NaN
    frame.attrs["label_column"] = label_column if has_label else None
    return frame


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
