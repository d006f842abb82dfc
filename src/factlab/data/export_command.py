"""`factlab benchmarks export DIR`: each built benchmark as JSON Lines, for a metric that runs outside factlab.

`DIR/<benchmark>.jsonl` holds one object per example, in the order of `RESULTS/data/<benchmark>.parquet`:
`example_id`, `doc_id`, `source`, `output`, `sentences` (the output's sentence units as factlab's sentence-level
scorers split them, from `RESULTS/preprocess/<benchmark>/sentences.parquet`: `index`, `start`, `end`, `text`, with
`output[start:end] == text` in Python string indices), and with `--labels` also `label` (1 consistent, 0 not, null)
and `split`. `DIR/manifest.json` records, per benchmark, the examples, whether labels are included, the sentence
units, what was dropped and the file's sha256; and factlab's version and the command's arguments.

DIR appears whole or not at all: the files are written to a folder beside it, renamed into place at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.errors import DataError, FactlabError

if TYPE_CHECKING:
    import pandas as pd

    from factlab.data.spec import BenchmarkSpec

MANIFEST_FILE = "manifest.json"
EXPORT_FORMAT = "factlab-benchmarks-export/1"  # a manifest with this format marks a folder --force may replace
BENCHMARK_KIND = "benchmark"  # a data table with the canonical schema; "table"s (published scores...) have their own
TEXT_FIELDS = ("example_id", "doc_id", "source", "output")
OUTPUT_SIDE = "output"  # sentences.parquet's rows of outputs; its "source" rows split the documents
SHOWN_MISMATCHES = 5


@dataclass(frozen=True)
class Built:
    """One built benchmark's input files (`sentences` None where its sentence units were not built)."""

    name: str
    data: Path
    sentences: Path | None


@dataclass
class SentenceUnits:
    """The output sentences of a benchmark per example_id, and its rows of example_ids the table lacks."""

    by_example: dict[str, list[dict[str, Any]]]
    rows_dropped: int


def register(commands: Any) -> None:
    export = commands.add_parser(
        "export",
        help="each built benchmark as DIR/<benchmark>.jsonl, with a manifest",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.add_argument("dir", help="the folder to write (new, empty, or an earlier export with --force)")
    export.add_argument("--results", default="results", help="the run's results folder (default results)")
    export.add_argument(
        "--benchmarks", nargs="+", metavar="NAME", help="these benchmarks only (default: every benchmark built under RESULTS)"
    )
    export.add_argument("--labels", action="store_true", help="include each example's label and split")
    export.add_argument("--force", action="store_true", help="replace DIR where it holds an earlier export")
    export.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> None:
    from factlab.io import atomic_folder

    out, results = Path(args.dir), Path(args.results)
    check_destination(out, args.force)
    chosen = [built_files(name, results) for name in chosen_benchmarks(results, args.benchmarks)]
    unsplit = [built.name for built in chosen if built.sentences is None]
    if unsplit:
        print(
            f"factlab benchmarks export: warning: no sentence units, so no `sentences` field, for {', '.join(unsplit)}: "
            "rule preprocess_sentences builds them, `snakemake --cores all results/preprocess/<name>/sentences.parquet`",
            file=sys.stderr,
        )
    arguments = {name: getattr(args, name) for name in ("dir", "results", "benchmarks", "labels", "force")}
    with atomic_folder(out) as staging:
        entries = {built.name: export_benchmark(built, staging, args.labels) for built in chosen}
        manifest = export_manifest(entries, arguments)
        (staging / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, allow_nan=False) + "\n")
    print(summary(manifest, out), file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# What is exported, and where


def check_destination(out: Path, force: bool) -> None:
    """Refuse a DIR whose files the export would replace, unless it is an earlier export and `force` is set (a folder
    of anything else is never replaced: the export removes what it replaces)."""
    if out.exists() and not out.is_dir():
        raise FactlabError(f"{out} is a file: name a folder to export to")
    if not out.is_dir() or not any(out.iterdir()):
        return
    if not is_export(out):
        raise FactlabError(f"{out} holds files that are not a benchmark export: name a new or empty folder")
    if not force:
        raise FactlabError(f"{out} already holds a benchmark export: pass --force to replace it")


def is_export(folder: Path) -> bool:
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == EXPORT_FORMAT


def table_kinds(data_dir: Path) -> dict[str, str | None]:
    """Each table built under `data_dir` and its kind: the registry's, or where there is no built-in spec (a custom
    benchmark) the kind its build report records (None without one)."""
    from factlab.data.registry import builtin_specs

    specs = builtin_specs()
    return {
        path.stem: specs[path.stem].kind if path.stem in specs else recorded_kind(data_dir / "reports" / f"{path.stem}.json")
        for path in sorted(data_dir.glob("*.parquet"))
    }


def recorded_kind(report: Path) -> str | None:
    try:
        kind = json.loads(report.read_text()).get("kind")
    except (OSError, ValueError, AttributeError):
        return None
    return kind if isinstance(kind, str) else None


def chosen_benchmarks(results: Path, requested: list[str] | None) -> list[str]:
    """The benchmarks to export: `requested` in its order (each checked), or every built one; every name that cannot
    be exported is named in one error, with what builds it."""
    from factlab.data.registry import builtin_specs

    data_dir = results / "data"
    built = table_kinds(data_dir)
    if requested is None:
        names = [name for name, kind in built.items() if kind == BENCHMARK_KIND]
        if not names:
            raise FactlabError(
                f"no benchmark is built under {data_dir}: rule build_benchmark builds one, "
                "`snakemake --cores all results/data/<name>.parquet` (--results names another run's results folder)"
            )
        return names
    specs = builtin_specs()
    names = list(dict.fromkeys(requested))
    problems = [problem for name in names if (problem := export_problem(name, built, specs, data_dir))]
    if problems:
        raise FactlabError("cannot export " + "; ".join(problems))
    return names


def export_problem(name: str, built: Mapping[str, str | None], specs: Mapping[str, BenchmarkSpec], data_dir: Path) -> str | None:
    """Why benchmark `name` cannot be exported (None if it can)."""
    kind = built[name] if name in built else specs[name].kind if name in specs else None
    if kind == BENCHMARK_KIND and name in built:
        return None
    if kind is not None and kind != BENCHMARK_KIND:
        return f"{name!r}: a {kind}, not a benchmark (no example outputs to score)"
    if name in built:
        return f"{name!r}: no build report says it is a benchmark ({data_dir / 'reports' / f'{name}.json'})"
    origin = "a built-in benchmark" if name in specs else "no built-in benchmark has this name"
    return (
        f"{name!r}: not built ({origin}; no {data_dir / f'{name}.parquet'}): rule build_benchmark builds it, "
        f"`snakemake --cores all results/data/{name}.parquet` (a custom benchmark once it is in data.custom_benchmarks)"
    )


def built_files(name: str, results: Path) -> Built:
    sentences = results / "preprocess" / name / "sentences.parquet"
    return Built(name, results / "data" / f"{name}.parquet", sentences if sentences.is_file() else None)


# ---------------------------------------------------------------------------------------------
# One benchmark


def export_benchmark(built: Built, folder: Path, labels: bool) -> dict[str, Any]:
    """Write `folder/<name>.jsonl` and return its manifest entry."""
    import pandas as pd

    from factlab.io import sha256_file

    table = pd.read_parquet(built.data)
    missing = [name for name in TEXT_FIELDS if name not in table.columns]
    if missing:
        raise DataError(f"benchmark {built.name!r} lacks the columns {missing}", file=built.data, field=missing[0])
    if labels and "label" not in table.columns:
        raise DataError(f"benchmark {built.name!r} has no label column for --labels", file=built.data, field="label")
    units = None if built.sentences is None else output_sentences(pd.read_parquet(built.sentences), table, built)
    path = folder / f"{built.name}.jsonl"
    records = example_records(table, units.by_example if units is not None else None, labels)
    written, without_sentences, unit_count = write_jsonl(records, path)
    if units is not None and without_sentences:
        print(
            f"factlab benchmarks export: warning: {built.name}: {without_sentences} examples with words in their "
            "output have no sentence units (preprocessed on part of the benchmark, preprocess.max_examples?): "
            "they have no `sentences` field",
            file=sys.stderr,
        )
    return {
        "file": path.name,
        "examples": written,
        "labels": labels,
        "split": labels and "split" in table.columns,
        "sentences": units is not None,
        "sentence_units": unit_count if units is not None else None,
        "examples_without_sentences": without_sentences if units is not None else written,
        "dropped": {"examples": len(table) - written, "sentence_rows": units.rows_dropped if units is not None else 0},
        "sha256": sha256_file(path),
        "data_sha256": sha256_file(built.data),
        "sentences_sha256": sha256_file(built.sentences) if built.sentences else None,
    }


def output_sentences(sentences: pd.DataFrame, table: pd.DataFrame, built: Built) -> SentenceUnits:
    """The output sentence units per example_id, each checked against its example's output (a sentences file older
    than the data table would give wrong offsets: an error naming the first mismatches)."""
    needed = ["side", "example_id", "sentence_index", "start", "end", "text"]
    missing = [name for name in needed if name not in sentences.columns]
    if missing:
        raise DataError("not a sentences file: it lacks the columns " + str(missing), file=built.sentences, field=missing[0])
    rows = sentences[sentences["side"] == OUTPUT_SIDE].sort_values(["example_id", "sentence_index"], kind="stable")
    outputs = dict(zip(table["example_id"].tolist(), table["output"].tolist(), strict=True))
    by_example: dict[str, list[dict[str, Any]]] = {}
    dropped, mismatches = 0, []
    columns = (rows[name].tolist() for name in needed[1:])
    for example_id, index, start, end, text in zip(*columns, strict=True):
        output = outputs.get(example_id)
        if output is None:
            dropped += 1
        elif output[start:end] != text:
            mismatches.append(f"sentence {index} of example {example_id!r}: output[{start}:{end}] is not {text[:60]!r}")
        else:
            by_example.setdefault(example_id, []).append({"index": index, "start": start, "end": end, "text": text})
    if mismatches:
        raise DataError(
            f"{len(mismatches)} output sentences do not match their example's output, e.g. "
            f"{'; '.join(mismatches[:SHOWN_MISMATCHES])}: the sentences file is older than the data table; rebuild it "
            f"with `snakemake --cores all results/preprocess/{built.name}/sentences.parquet`",
            file=built.sentences,
        )
    if dropped:
        print(
            f"factlab benchmarks export: warning: {built.name}: {dropped} sentence rows of example_ids the data table "
            "lacks are left out",
            file=sys.stderr,
        )
    return SentenceUnits(by_example, dropped)


def example_records(
    table: pd.DataFrame, sentences: Mapping[str, list[dict[str, Any]]] | None, labels: bool
) -> Iterator[dict[str, Any]]:
    """One JSON object per row of `table`, in its order. An example without sentence rows gets `sentences: []` where
    its output has no words (the splitter gives it none) and no field otherwise: its units were not built."""
    columns = {name: table[name].tolist() for name in TEXT_FIELDS}
    if labels:
        columns["label"] = plain_labels(table["label"])
        if "split" in table.columns:
            columns["split"] = table["split"].tolist()
    for values in zip(*columns.values(), strict=True):
        example = dict(zip(columns, values, strict=True))
        record = {name: example.pop(name) for name in TEXT_FIELDS}
        units = None if sentences is None else sentences.get(record["example_id"])
        if units is not None or (sentences is not None and not record["output"].strip()):
            record["sentences"] = units or []
        yield record | example


def plain_labels(column: pd.Series) -> list[int | None]:
    """1, 0, or None for a missing label (<NA> in the Int8 column): JSON has no NaN."""
    return [None if missing else int(value) for value, missing in zip(column.tolist(), column.isna().tolist(), strict=True)]


def write_jsonl(records: Iterable[dict[str, Any]], path: Path) -> tuple[int, int, int]:
    """Write one strict-JSON line per record; return the records, those without `sentences`, and the units."""
    written = without_sentences = units = 0
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
            written += 1
            if "sentences" in record:
                units += len(record["sentences"])
            else:
                without_sentences += 1
    return written, without_sentences, units


# ---------------------------------------------------------------------------------------------
# The manifest


def export_manifest(entries: dict[str, dict[str, Any]], arguments: Mapping[str, Any]) -> dict[str, Any]:
    from factlab import __version__

    return {
        "format": EXPORT_FORMAT,
        "factlab_version": __version__,
        "arguments": dict(arguments),
        "benchmarks": entries,
        "without_sentences": [name for name, entry in entries.items() if not entry["sentences"]],
        "dropped": {kind: sum(entry["dropped"][kind] for entry in entries.values()) for kind in ("examples", "sentence_rows")},
    }


def summary(manifest: Mapping[str, Any], out: Path) -> str:
    entries = manifest["benchmarks"]
    lines = [
        f"  {name}: {entry['examples']} examples, "
        + (
            f"{entry['sentence_units']} sentence units of {entry['examples'] - entry['examples_without_sentences']} examples"
            if entry["sentences"]
            else "no sentence units"
        )
        + (", labels" if entry["labels"] else "")
        for name, entry in entries.items()
    ]
    dropped = manifest["dropped"]
    lines.append(
        f"factlab benchmarks export: {len(entries)} benchmarks, {sum(e['examples'] for e in entries.values())} examples "
        f"-> {out} ({MANIFEST_FILE}); dropped: {dropped['examples']} examples, {dropped['sentence_rows']} sentence rows"
    )
    return "\n".join(lines)
