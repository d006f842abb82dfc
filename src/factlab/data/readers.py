"""Readers for upstream formats that fail with the file, record and field named.

Line numbers are the file's own: line 1 is the first line (a CSV's header), and a record that
spans several lines (a pretty-printed JSON object, a quoted CSV cell holding newlines) is named by
the line it starts on.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.errors import DataError

JSON_WHITESPACE = " \t\n\r"


def _decode_error(path: str | Path, data: bytes | None = None) -> DataError:
    """A DataError naming the line and column of the first byte in `path` that is not UTF-8."""
    if data is None:
        data = Path(path).read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return DataError(
            f"not valid UTF-8: byte 0x{data[error.start]:02x} at column {column}; save the file as UTF-8",
            file=path,
            record=f"line {line}",
        )
    return DataError("not valid UTF-8; save the file as UTF-8", file=path)


def read_utf8(path: str | Path) -> str:
    """The whole text of `path` (a UTF-8 byte-order mark is dropped); DataError naming the line of a non-UTF-8 byte."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _decode_error(path, data) from None


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def read_json(path: str | Path) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise DataError(_json_error("malformed JSON", error), file=path, record=f"line {error.lineno}") from error
    except UnicodeDecodeError:
        raise _decode_error(path) from None


# A .jsonl file that holds one JSON array (on one line or pretty-printed) is a .json file under the wrong name.
JSON_ARRAY_HINT = "; the file holds a JSON array of records: name it .json (or write one object a line)"


def _json_error(message: str, error: json.JSONDecodeError) -> str:
    """`message` with the decoder's reason and the column it stopped at (json's own message drops its position)."""
    reason = error.msg if error.msg.endswith(" at") else f"{error.msg} at"
    return f"{message}: {reason} column {error.colno}"


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, record) for each non-blank line; a bad line raises DataError naming its line and, where the
    JSON is malformed, the column; a file holding one JSON array is told to be a .json file."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            first = True
            for line_no, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                opens_array, first = first and line.lstrip().startswith("["), False
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    message = _json_error("malformed JSON line", error) + (JSON_ARRAY_HINT if opens_array else "")
                    raise DataError(message, file=path, record=f"line {line_no}") from error
                if not isinstance(record, dict):
                    hint = JSON_ARRAY_HINT if opens_array and isinstance(record, list) else ""
                    raise DataError(f"JSON line is not an object{hint}", file=path, record=f"line {line_no}")
                yield line_no, record
    except UnicodeDecodeError:
        raise _decode_error(path) from None


def iter_json_array(path: str | Path) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Yield (line number, item number, record) for each object of a file holding one JSON array.

    The line is where the object starts; items count from 1. A file that is not an array of
    objects raises DataError naming the line.
    """
    text = read_utf8(path)
    decoder = json.JSONDecoder()
    end = len(text)

    def skip(i: int) -> int:
        while i < end and text[i] in JSON_WHITESPACE:
            i += 1
        return i

    i = skip(0)
    if i == end:
        return
    if text[i] != "[":
        raise DataError(
            "JSON file is not an array of records (it must start with '[')", file=path, record=f"line {_line_of(text, i)}"
        )
    i = skip(i + 1)
    if i < end and text[i] == "]":
        i = skip(i + 1)
    else:
        item = 0
        seen, line = 0, 1  # line numbers are counted incrementally: linear in the file's size
        while True:
            try:
                record, after = decoder.raw_decode(text, i)
            except json.JSONDecodeError as error:
                raise DataError(_json_error("malformed JSON", error), file=path, record=f"line {error.lineno}") from error
            item += 1
            line += text.count("\n", seen, i)
            seen = i
            if not isinstance(record, dict):
                raise DataError("JSON array item is not an object", file=path, record=f"line {line}, item {item}")
            yield line, item, record
            i = skip(after)
            if i < end and text[i] == ",":
                i = skip(i + 1)
                continue
            if i < end and text[i] == "]":
                i = skip(i + 1)
                break
            raise DataError(
                "malformed JSON: expected ',' or ']' after an array item", file=path, record=f"line {_line_of(text, min(i, end))}"
            )
    if i != end:
        raise DataError("malformed JSON: extra data after the array", file=path, record=f"line {_line_of(text, i)}")


def read_csv_records(path: str | Path, sep: str = ",") -> tuple[list[str], Iterator[tuple[int, dict[str, str | None]]]]:
    """The header and an iterator of (line number, record) of a CSV/TSV, every cell as text.

    The header is line 1 (after any blank lines); an empty cell is None; blank lines are skipped.
    An empty file, a repeated column name, a row with more or fewer cells than the header and
    malformed quoting raise DataError naming the file, the line and (where one) the column.
    """
    text = read_utf8(path)
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))  # documents can exceed the 128 KiB default
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)

    def rows() -> Iterator[tuple[int, list[str]]]:
        start = 1
        try:
            for row in reader:
                if row and not (len(row) == 1 and not row[0].strip()):
                    yield start, row
                start = reader.line_num + 1
        except csv.Error as error:
            raise DataError(f"malformed CSV: {error}", file=path, record=f"line {reader.line_num}") from error

    stream = rows()
    first = next(stream, None)
    if first is None:
        raise DataError("file is empty: no header line and no records", file=path)
    header_line, header = first
    seen: set[str] = set()
    for name in header:
        if name and name in seen:
            raise DataError(
                f"column name {name!r} is repeated in the header", file=path, record=f"line {header_line}", field=name
            )
        seen.add(name)

    def records() -> Iterator[tuple[int, dict[str, str | None]]]:
        for line_no, row in stream:
            if len(row) != len(header):
                raise DataError(f"row has {len(row)} cells but the header has {len(header)}", file=path, record=f"line {line_no}")
            yield line_no, {name: (cell if cell != "" else None) for name, cell in zip(header, row, strict=True)}

    return header, records()


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
    except pd.errors.EmptyDataError as error:
        raise DataError("file is empty: no header line and no records", file=path) from error
    except UnicodeDecodeError:
        raise _decode_error(path) from None
    except pd.errors.ParserError as error:
        raise DataError(f"cannot parse table: {error}", file=path) from error
