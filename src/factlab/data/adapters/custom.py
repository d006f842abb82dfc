"""Bring-your-own benchmark: any CSV/TSV/JSONL/JSON file(s) plus a column mapping in the config (a --configfile).

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
import json
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
# Where a benchmark's entry is said to be when the file that declares it is not known (the workflow names it).
UNKNOWN_CONFIG_FILE = "your config file"
# At most this many labels in a suggested label_map.
SUGGESTED_LABELS = 12


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


def resolve_paths(name: str, path: Any, *, strict: bool = True, config_file: str | None = None) -> list[Path]:
    """The files of a benchmark's `path`: globs expanded, each file once, in sorted path order.

    With `strict`, a glob matching nothing raises DataError naming the pattern and `config_file`, the file that
    declares the benchmark; without, it contributes nothing (the workflow lists inputs before the build reports the
    error).
    """
    files: set[str] = set()
    for pattern in _patterns(name, path):
        if _is_glob(pattern):
            matches = [m for m in glob.glob(pattern, recursive=True) if Path(m).is_file()]
            if not matches and strict:
                raise DataError(
                    f"no file matches the pattern {pattern!r}",
                    file=config_file or UNKNOWN_CONFIG_FILE,
                    record=name,
                    field="path",
                )
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
    """Whether `value` reads as the canonical label without a label_map: null, 0 or 1 (also as text, as CSV cells are).

    JSON's NaN is refused as CSV's "nan" is: a missing label is written null (JSON) or as an empty cell (CSV), never
    a number that is not one, so that no output is left unscored by accident."""
    if value is None or isinstance(value, bool):
        return True
    number = pd.to_numeric(pd.Series([value]), errors="coerce").iloc[0]
    return bool(number in (0, 1))


def _yaml_boolean(word: str) -> bool | None:
    """The boolean YAML 1.1 reads the unquoted `word` as, if any."""
    word = word.strip().lower()
    return True if word in YAML_TRUE else False if word in YAML_FALSE else None


def _label_map_error(value: Any, label_map: Mapping[Any, Any], file: Path, where: str, field: str, config_file: str) -> DataError:
    message = f"label {value!r} is not in label_map"
    meant = _yaml_boolean(str(value))
    keys = {_label_key(k) for k in label_map}
    if meant is not None and _label_key(meant) in keys:
        message += f"; YAML read the unquoted key {value} as boolean {meant}: quote it in {config_file}"
    return DataError(message, file=file, record=where, field=field)


def _yaml_scalar(value: Any) -> str:
    """`value` as a YAML flow scalar: null, a number or a double-quoted string (JSON's quoting is YAML's)."""
    return "null" if value is None else json.dumps(value)


def suggested_label_map(labels: set[str], label_map: Mapping[Any, Any]) -> str:
    """A label_map (one line of YAML, every key quoted) for the labels of a file, sorted: a label keeps what label_map
    maps it to, a word YAML would read as a boolean what label_map maps that boolean to, else 1 for a word meaning
    yes or 1, 0 for one meaning no or 0, and null (unlabelled) for the rest, for the user to correct."""
    mapped = {_label_key(key): value for key, value in label_map.items()}
    entries = []
    for label in sorted(labels)[:SUGGESTED_LABELS]:
        meant = _yaml_boolean(label)
        number = pd.to_numeric(pd.Series([label]), errors="coerce").iloc[0]
        if label in mapped:
            value = mapped[label]
        elif meant is not None and _label_key(meant) in mapped:
            value = mapped[_label_key(meant)]
        elif meant is not None:
            value = int(meant)
        elif number in (0, 1):
            value = int(number)
        else:
            value = None
        entries.append(f"{_yaml_scalar(label)}: {_yaml_scalar(value)}")
    return "label_map: {" + ", ".join(entries) + "}"


def _label_hint(bad: set[str], labels: set[str], label_map: Mapping[Any, Any]) -> str:
    where = "not in label_map" if label_map else "not 0, 1 or null"
    return (
        f"labels {where}: {sorted(bad)}; map every label of the file to 1 (consistent), 0 (not) or null (unlabelled), "
        f"e.g. {suggested_label_map(labels, label_map)}"
    )


def _detail(error: DataError) -> str:
    return f"record {error.record}, field {error.field!r}: {error.args[0].split(' (file ')[0]}"


class CustomDataErrors(DataErrors):
    """`DataErrors` of a custom benchmark's files: the bad records counted and listed, then `hints` (how to fix
    them all at once, e.g. a label_map for every label), which are not records and are always listed."""

    def __init__(self, file: str | Path, problems: list[str], hints: list[str]) -> None:
        super().__init__(file, problems)
        self.details = [*self.details, *hints]


def _all_problems(
    problems: dict[Path, list[DataError]],
    labels_bad: dict[Path, set[str]],
    labels: dict[Path, set[str]],
    label_map: Mapping[Any, Any],
    described: str,
) -> DataError:
    """One error for the bad records of every file: the only one as it is, several as `DataErrors` (each record's
    line, column and problem; with several files, each detail names its file), with the labels label_map lacks and
    a label_map that maps every label of their file."""
    bad_files = [file for file in problems if problems[file]]
    only = problems[bad_files[0]] if len(bad_files) == 1 else []
    if len(only) == 1 and not labels_bad.get(bad_files[0]):
        return only[0]
    details, hints = [], []
    for file in bad_files:
        prefix = f"file {file}, " if len(bad_files) > 1 else ""
        details += [prefix + _detail(error) for error in problems[file]]
        if labels_bad.get(file):
            hint = _label_hint(labels_bad[file], labels[file], label_map)
            hints.append(f"file {file}: {hint}" if len(bad_files) > 1 else hint)
    return CustomDataErrors(bad_files[0] if len(bad_files) == 1 else described, details, hints)


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


def _shown(value: Any) -> str:
    """A label as a message shows it: JSON's NaN as NaN, the rest as Python writes it."""
    return "NaN" if isinstance(value, float) and pd.isna(value) else repr(value)


def _check_unique(example_id: str, index: int, first_seen: dict[str, int], origins: list[tuple[Path, str]], field: str) -> None:
    """Record `example_id` as the id of record `index`; a DataError naming both records if an earlier one has it."""
    if example_id not in first_seen:
        first_seen[example_id] = index
        return
    (file_a, where_a), (file_b, where_b) = origins[first_seen[example_id]], origins[index]
    first = where_a if file_a == file_b else f"{where_a} of {file_a}"
    raise DataError(f"duplicate example_id {example_id!r}, first on {first}", file=file_b, record=where_b, field=field)


def adapt_custom(name: str, config: Mapping[str, Any], *, config_file: str | None = None) -> Built:
    """The benchmark of a custom entry. `config_file`: the file that declares it, named in the errors about the entry
    itself (the workflow knows it; else "your config file"). Every bad record of every file (an empty text, a label
    that maps to nothing, a repeated example_id) is reported at once, in one error."""
    declared_in = config_file or UNKNOWN_CONFIG_FILE
    files = resolve_paths(name, config["path"], config_file=declared_in)
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
    # Every file's bad records, the labels it has that map to nothing, and all its labels (for a suggested label_map).
    problems: dict[Path, list[DataError]] = {}
    labels_bad: dict[Path, set[str]] = {}
    labels: dict[Path, set[str]] = {}
    first_seen: dict[str, int] = {}  # example_id -> index of the record that has it first
    for file in files:
        file_problems, file_bad, file_labels = problems.setdefault(file, []), labels_bad.setdefault(file, set()), set()
        labels[file] = file_labels
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
                        if target == "example_id":
                            _check_unique(value, len(origins) - 1, first_seen, origins, upstream)
                    elif target == "label" and value is not None:
                        file_labels.add(_label_key(value))
                        if label_map:
                            key = _label_key(value)
                            if key not in label_keys:
                                file_bad.add(key)
                                raise _label_map_error(value, label_map, file, where, upstream, declared_in)
                            value = label_keys[key]
                        elif not _binary_label(value):
                            file_bad.add(_label_key(value))
                            missing = " (a missing label is null)" if _shown(value) == "NaN" else ""
                            message = f"label {_shown(value)} is not 0, 1 or null{missing}"
                            raise DataError(message, file=file, record=where, field=upstream)
                except DataError as error:  # every bad record of every file is reported, in one error
                    file_problems.append(error)
                canonical[target].append(value)
            for extra, values in extras.items():
                values.append(record.get(extra))
        if count == 0:
            raise DataError("file has no records", file=file)
    if any(problems.values()):
        raise _all_problems(problems, labels_bad, labels, label_map, described)

    n = len(origins)
    out = pd.DataFrame({target: pd.Series(values, dtype=object) for target, values in canonical.items()}, index=range(n))
    if "example_id" not in columns:
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
                file=declared_in,
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
        raise DataError("custom benchmark needs a 'path'", file=UNKNOWN_CONFIG_FILE, record=name, field="path")
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


def check_custom_benchmarks(
    custom: Mapping[str, Mapping[str, Any]],
    cache: str | Path | None = None,
    config_files: Mapping[str, str] | None = None,
) -> None:
    """Read every custom benchmark's files as its build will, before any job runs (the workflow calls this while
    parsing): a bad file then stops the run at once, naming every bad record of every benchmark, the summary of each
    on its last line, and no job of the run starts, so nothing already built is removed or marked stale. `cache`: a
    JSON file of the (config, files' sizes and mtimes) already checked, so an unchanged benchmark is read once, not
    on every `snakemake` call. `config_files`: the file that declares each benchmark, named in its errors."""
    from factlab.data.schema import validate_benchmark

    checked: dict[str, str] = {}
    cache_file = Path(cache) if cache else None
    if cache_file and cache_file.is_file():
        try:
            checked = json.loads(cache_file.read_text())
        except (OSError, json.JSONDecodeError):
            checked = {}
    changed = False
    failures: list[str] = []
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
            validate_benchmark(adapt_custom(name, config, config_file=(config_files or {}).get(name)).frame, name)
        except DataErrors as error:
            lines = [f"  {detail}" for detail in error.details]
            failures.append("\n".join([f"custom benchmark {name!r}:", *lines, f"custom benchmark {name!r}: {error}"]))
            continue
        except DataError as error:
            failures.append(f"custom benchmark {name!r}: {error}")
            continue
        checked[name] = stamp
        changed = True
    if changed and cache_file:
        from factlab.io import write_json

        write_json(checked, cache_file)
    if failures:
        raise DataError("\n".join(failures))
