"""Bring-your-own benchmark: any CSV/TSV/JSONL/JSON file(s) plus a column mapping in params.yaml.

    data:
      custom_benchmarks:
        my_bench:
          path: data/my_outputs/*.jsonl    # a file, a glob, or a list of files/globs
          columns: {source: document, output: summary, label: is_faithful}
          label_map: {"yes": 1, "no": 0}   # optional; values already 0/1 need none
          defaults: {split: test}          # optional constants for unmapped columns
          doc_id: from_source              # optional: doc_id from the source text (see below)

Formats by suffix: `.csv`, `.tsv`, `.jsonl` (one object a line) and `.json` (one array of
objects). Several files are concatenated in sorted path order. Every error names the file and the
line the record starts on (line 1 is a CSV's header), and the upstream column.

One rule for all formats: a mapped `source`, `output`, `example_id`, `doc_id`, `system` or
`split` that is missing, null, empty or whitespace-only is an error (nothing is dropped
silently). Upstream columns that are not mapped are kept in the benchmark under their own names
(`upstream_<name>` where the name is a canonical column's); a column with an empty header name
(a pandas index written to CSV) is skipped and counted as `unnamed_columns`.

Generated ids: without `example_id`, ids are `<name>-<n>`, n counting records from 0 in file
order, zero-padded to the number of digits of the record count so that they sort in file order.
With `doc_id: from_source`, doc_id is `doc-` + the first 12 hex digits of the SHA-1 of the source
text's UTF-8 bytes, as read: outputs of the same document share a doc_id, whatever the file order.
"""

from __future__ import annotations

import glob
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from factlab.data.judgeable import FLAGS, judge_flags
from factlab.data.readers import iter_json_array, iter_jsonl, read_csv_records
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import ConfigError, DataError, DataErrors

MAPPABLE = ("example_id", "doc_id", "system", "split", "source", "output", "label", "human_score")
TEXT = ("example_id", "doc_id", "system", "split", "source", "output")  # rejected when empty
DEFAULTS = {"system": "unknown", "split": "test"}
FORMATS = (".csv", ".tsv", ".jsonl", ".json")
DOC_ID_FROM_SOURCE = "from_source"
# The words YAML 1.1 (PyYAML, hence snakemake) reads as booleans when unquoted.
YAML_TRUE = {"yes", "true", "on"}
YAML_FALSE = {"no", "false", "off"}


def _is_glob(pattern: str) -> bool:
    return glob.has_magic(pattern)


def _patterns(name: str, path: Any) -> list[str]:
    patterns = [path] if isinstance(path, str) else path
    if (
        not isinstance(patterns, Sequence)
        or isinstance(patterns, str)
        or not patterns
        or not all(isinstance(p, str) and p for p in patterns)
    ):
        raise ConfigError(f"data.custom_benchmarks.{name}.path must be a file, a glob or a non-empty list of them, got {path!r}")
    return list(patterns)


def resolve_paths(name: str, path: Any, *, strict: bool = True) -> list[Path]:
    """The files of a benchmark's `path`: globs expanded, each file once, in sorted path order.

    With `strict`, a glob matching nothing raises DataError naming the pattern; without, it
    contributes nothing (the workflow lists inputs before the build reports the error).
    """
    files: set[str] = set()
    for pattern in _patterns(name, path):
        if _is_glob(pattern):
            matches = [m for m in glob.glob(pattern, recursive=True) if Path(m).is_file()]
            if not matches and strict:
                raise DataError(f"no file matches the pattern {pattern!r}", file="params.yaml", record=name, field="path")
            files.update(matches)
        else:
            files.add(pattern)
    return [Path(p) for p in sorted(files)]


def iter_records(path: Path) -> tuple[list[str], Iterator[tuple[str, dict[str, Any]]]]:
    """The column names and (location, record) of one file; the location is "line N" (JSON arrays: "line N, item K")."""
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise DataError(f"unsupported format {suffix!r}: use .csv, .tsv, .jsonl or .json", file=path)
    if not path.is_file():
        raise DataError("input file not found", file=path)
    if suffix in (".csv", ".tsv"):
        header, rows = read_csv_records(path, sep="\t" if suffix == ".tsv" else ",")
        return header, ((f"line {line}", record) for line, record in rows)
    if suffix == ".jsonl":
        records = [(f"line {line}", record) for line, record in iter_jsonl(path)]
    else:
        records = [(f"line {line}, item {item}", record) for line, item, record in iter_json_array(path)]
    if not records:
        raise DataError("file has no records", file=path)
    names: dict[str, None] = {}
    for _, record in records:
        names.update(dict.fromkeys(record))
    return list(names), iter(records)


def doc_id_from_source(source: str) -> str:
    return "doc-" + hashlib.sha1(source.encode("utf-8")).hexdigest()[:12]


def _label_key(value: Any) -> str:
    """Labels and label_map keys compared as text; booleans spelt as JSON spells them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _binary_label(value: Any) -> bool:
    """Whether `value` reads as the canonical label without a label_map: null, 0 or 1 (also as text, as CSV cells are)."""
    if value is None or isinstance(value, bool) or (isinstance(value, float) and pd.isna(value)):
        return True
    number = pd.to_numeric(pd.Series([value]), errors="coerce").iloc[0]
    return bool(number in (0, 1))


def _label_map_error(value: Any, label_map: Mapping[Any, Any], file: Path, where: str, field: str) -> DataError:
    message = f"label {value!r} is not in label_map"
    word = str(value).strip().lower()
    meant = True if word in YAML_TRUE else False if word in YAML_FALSE else None
    keys = {_label_key(k) for k in label_map}
    if meant is not None and _label_key(meant) in keys:
        message += (
            f'; YAML read the unquoted key {value} as boolean {meant}: quote it in params.yaml (label_map: {{"{value}": ...}})'
        )
    return DataError(message, file=file, record=where, field=field)


def _all_problems(problems: list[DataError], file: Path, labels_seen: set[str], label_map: Mapping[Any, Any]) -> DataError:
    """One error for a file's bad records: the only one as it is, several as `DataErrors` (each record's line, column
    and problem), with the labels label_map lacks and the entries that would map them."""
    if len(problems) == 1 and not labels_seen:
        return problems[0]
    details = [f"record {error.record}, field {error.field!r}: {error.args[0].split(' (file ')[0]}" for error in problems]
    if labels_seen:
        missing = ", ".join(f'"{label}": 0, 1 or null' for label in sorted(labels_seen))
        where = "not in label_map" if label_map else "not 0, 1 or null"
        details.append(f"labels {where}: {sorted(labels_seen)}; map them (1 = consistent), e.g. label_map: {{{missing}}}")
    return DataErrors(file, details)


def text_problem(value: Any) -> str | None:
    """Why `value` cannot be a text (a source, an output): None when it can."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "is empty (an empty cell, null or absent)"
    if isinstance(value, str):
        return None if value.strip() else "is empty (whitespace only)" if value else "is empty"
    return f"is not text but {type(value).__name__} {value!r}"


def _text(value: Any, canonical: str, file: Path, where: str, field: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):  # a numeric id column
        value = str(value)
    problem = text_problem(value)
    if problem:
        raise DataError(f"{canonical} {problem}", file=file, record=where, field=field)
    return value


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "text", list: "list", dict: "object"}.get(type(value), type(value).__name__)


def _extra_column(name: str, values: list[Any], origins: list[tuple[Path, str]]) -> pd.Series:
    """An unmapped upstream column as stored: one kind of value (text, number, ...) or null."""
    first: tuple[str, int] | None = None
    for i, value in enumerate(values):
        if value is None:
            continue
        kind = _kind(value)
        if first is None:
            first = (kind, i)
        elif kind != first[0]:
            file, where = origins[first[1]]
            raise DataError(
                f"extra column {name!r} mixes {first[0]} ({where} of {file.name}) and {kind} values",
                file=origins[i][0],
                record=origins[i][1],
                field=name,
            )
    try:
        pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
        raise DataError(f"extra column {name!r} cannot be stored in parquet: {error}", file=origins[0][0], field=name) from None
    return pd.Series(values, dtype=object)


def adapt_custom(name: str, config: Mapping[str, Any]) -> Built:
    files = resolve_paths(name, config["path"])
    described = config["path"] if isinstance(config["path"], str) else ", ".join(config["path"])
    columns: Mapping[str, str] = config.get("columns", {})
    unknown = set(columns) - set(MAPPABLE)
    if unknown:
        raise DataError(f"cannot map unknown canonical column(s) {sorted(unknown)}", file=described, field=sorted(unknown)[0])
    for required in ("source", "output"):
        if required not in columns:
            raise DataError(f"no column is mapped to {required!r}", file=described, field=required)
    if any(upstream == "" for upstream in columns.values()):
        raise DataError("cannot map a column with an empty name", file=described, field="")
    doc_id_rule = config.get("doc_id")
    if doc_id_rule is not None and doc_id_rule != DOC_ID_FROM_SOURCE:
        raise ConfigError(f"data.custom_benchmarks.{name}.doc_id must be {DOC_ID_FROM_SOURCE!r}, got {doc_id_rule!r}")
    if doc_id_rule and "doc_id" in columns:
        raise ConfigError(
            f"data.custom_benchmarks.{name}: doc_id is both mapped (columns.doc_id) and derived (doc_id: {doc_id_rule})"
        )
    label_map = config.get("label_map") or {}
    label_keys = {_label_key(k): v for k, v in label_map.items()}

    mapped_upstream = set(columns.values())
    canonical: dict[str, list[Any]] = {c: [] for c in columns}
    extras: dict[str, list[Any]] = {}
    origins: list[tuple[Path, str]] = []
    unnamed = 0
    for file in files:
        problems: list[DataError] = []
        labels_seen: set[str] = set()
        header, records = iter_records(file)
        for upstream in columns.values():
            if upstream not in header:
                raise DataError(f"mapped column {upstream!r} is not in the file", file=file, field=upstream)
        unnamed += sum(1 for h in header if h == "")
        for h in header:
            if h and h not in mapped_upstream and h not in extras:
                extras[h] = [None] * len(origins)
        count = 0
        for where, record in records:
            count += 1
            origins.append((file, where))
            for target, upstream in columns.items():
                value = record.get(upstream)
                try:
                    if target in TEXT:
                        value = _text(value, target, file, where, upstream)
                    elif target == "label" and value is not None and label_map:
                        key = _label_key(value)
                        if key not in label_keys:
                            labels_seen.add(key)
                            raise _label_map_error(value, label_map, file, where, upstream)
                        value = label_keys[key]
                    elif target == "label" and not label_map and not _binary_label(value):
                        labels_seen.add(_label_key(value))
                        raise DataError(f"label {value!r} is not 0, 1 or null", file=file, record=where, field=upstream)
                except DataError as error:  # every bad record of the file is reported, in one error
                    problems.append(error)
                canonical[target].append(value)
            for extra, values in extras.items():
                values.append(record.get(extra))
        if count == 0:
            raise DataError("file has no records", file=file)
        if problems:
            raise _all_problems(problems, file, labels_seen, label_map)

    n = len(origins)
    out = pd.DataFrame({target: pd.Series(values, dtype=object) for target, values in canonical.items()}, index=range(n))
    if "example_id" in columns:
        first_seen: dict[str, int] = {}
        for i, example_id in enumerate(out["example_id"]):
            if example_id in first_seen:
                (file_a, where_a), (file_b, where_b) = origins[first_seen[example_id]], origins[i]
                first = where_a if file_a == file_b else f"{where_a} of {file_a}"
                raise DataError(
                    f"duplicate example_id, first on {first}",
                    file=file_b,
                    record=f"{example_id} on {where_b}",
                    field=columns["example_id"],
                )
            first_seen[example_id] = i
    else:
        width = len(str(n))
        out["example_id"] = [f"{name}-{i:0{width}d}" for i in range(n)]
    for extra, values in extras.items():
        stored = f"upstream_{extra}" if extra in MAPPABLE else extra
        if stored in out:
            raise DataError(
                f"extra column {extra!r} would be stored as {stored!r}, which the file also has", file=described, field=extra
            )
        out[stored] = _extra_column(extra, values, origins)
    for target, value in {**DEFAULTS, **config.get("defaults", {})}.items():
        if target not in out:
            out[target] = value
    if doc_id_rule == DOC_ID_FROM_SOURCE:
        out["doc_id"] = [doc_id_from_source(s) for s in out["source"]]
    elif "doc_id" not in out:
        out["doc_id"] = out["example_id"]
    if "label" not in out:
        out["label"] = pd.NA
    out = out.astype({c: "string" for c in ("example_id", "doc_id", "system", "split")})
    for group in config.get("group_columns", []):
        if group not in out:
            raise DataError(
                f"group column {group!r} is not a column of the built benchmark",
                file="params.yaml",
                record=name,
                field="group_columns",
            )
    flags = [judge_flags(source, output) for source, output in zip(out["source"], out["output"], strict=True)]
    if "input_flags" not in out:
        out["input_flags"] = pd.Series(flags, dtype=object)
    flag_counts = {f"flagged_{flag}": sum(flag in found for found in flags) for flag in FLAGS}
    return Built(out, {"read": n, "files": len(files), "unnamed_columns": unnamed, **flag_counts})


def custom_spec(name: str, config: Mapping[str, Any]) -> BenchmarkSpec:
    if "path" not in config:
        raise DataError("custom benchmark needs a 'path'", file="params.yaml", record=name, field="path")
    local_files = tuple(str(p) for p in resolve_paths(name, config["path"], strict=False))

    def build(_raw: RawFiles) -> Built:
        return adapt_custom(name, config)

    build.__module__ = __name__
    return BenchmarkSpec(
        name=name,
        datasets=(),
        build=build,
        local_files=local_files,
        group_columns=tuple(config.get("group_columns", ())),
        description=f"bring-your-own benchmark from {config['path']}",
    )


SPECS: list[BenchmarkSpec] = []


def check_custom_benchmarks(custom: Mapping[str, Mapping[str, Any]], cache: str | Path | None = None) -> None:
    """Read every custom benchmark's files as its build will, before any job runs (the workflow calls this while
    parsing): a bad file then stops the run at once, naming every bad record on its last lines, and no job of the run
    starts, so nothing already built is removed or marked stale. `cache`: a JSON file of the (config, files' sizes
    and mtimes) already checked, so an unchanged benchmark is read once, not on every `snakemake` call."""
    import json

    from factlab.data.schema import validate_benchmark

    checked: dict[str, str] = {}
    cache_file = Path(cache) if cache else None
    if cache_file and cache_file.is_file():
        try:
            checked = json.loads(cache_file.read_text())
        except (OSError, json.JSONDecodeError):
            checked = {}
    changed = False
    for name, config in sorted(custom.items()):
        files = resolve_paths(name, config.get("path", []), strict=False) if "path" in config else []
        stamp = json.dumps(
            [config, [(str(f), f.stat().st_size, f.stat().st_mtime_ns) if f.is_file() else str(f) for f in files]],
            sort_keys=True,
            default=str,
        )
        if checked.get(name) == stamp:
            continue
        try:
            validate_benchmark(adapt_custom(name, config).frame, name)
        except DataErrors as error:
            lines = [f"  {detail}" for detail in error.details]
            raise DataError("\n".join([f"custom benchmark {name!r}:", *lines, f"custom benchmark {name!r}: {error}"])) from None
        except DataError as error:
            raise DataError(f"custom benchmark {name!r}: {error}") from None
        checked[name] = stamp
        changed = True
    if changed and cache_file:
        from factlab.io import write_json

        write_json(checked, cache_file)
