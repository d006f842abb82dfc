"""`factlab data …`: download, build-benchmark, statistics."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from factlab.data.build import build_benchmark
from factlab.data.download import fetch_dataset
from factlab.data.manifest import RawFiles, entries_for, load_manifest
from factlab.data.registry import get_spec
from factlab.data.stats import benchmark_statistics
from factlab.report.tables import write_tables


def register(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="command", required=True)

    download = commands.add_parser("download", help="fetch and verify one manifest dataset")
    download.add_argument("dataset")
    download.add_argument("--manifest", required=True)
    download.add_argument("--raw-dir", required=True)
    download.add_argument("--mirror", action="append", default=[], help="mirror directory (repeatable)")
    download.add_argument("--allow-network", action=argparse.BooleanOptionalAction, default=False)
    download.set_defaults(func=run_download)

    build = commands.add_parser("build", help="build results/data/<name>.parquet")
    build.add_argument("name")
    build.add_argument("--manifest", required=True)
    build.add_argument("--raw-dir", required=True)
    build.add_argument("--out", required=True)
    build.add_argument("--report", required=True)
    build.add_argument("--custom-json", default="{}", help="custom_benchmarks mapping from params.yaml, as JSON")
    build.set_defaults(func=run_build)

    stats = commands.add_parser("stats", help="dataset statistics table")
    stats.add_argument("--data", nargs="+", required=True, help="benchmark parquet files")
    stats.add_argument("--reports-dir", required=True)
    stats.add_argument("--out-csv", required=True)
    stats.add_argument("--out-md", required=True)
    stats.add_argument("--out-tex", required=True)
    stats.set_defaults(func=run_stats)


def run_download(args: argparse.Namespace) -> None:
    entries = entries_for(load_manifest(args.manifest), args.dataset)
    fetch_dataset(entries, args.raw_dir, args.mirror, args.allow_network)


def run_build(args: argparse.Namespace) -> None:
    custom = json.loads(args.custom_json)
    spec = get_spec(args.name, custom)
    raw = RawFiles(args.raw_dir, load_manifest(args.manifest))
    build_benchmark(spec, raw, args.out, args.report)


def run_stats(args: argparse.Namespace) -> None:
    from factlab.io import write_text

    parts = []
    for path in sorted(args.data):
        name = Path(path).stem
        report = json.loads((Path(args.reports_dir) / f"{name}.json").read_text())
        parts.append(benchmark_statistics(name, pd.read_parquet(path), report["dropped"]))
    table = pd.concat(parts, ignore_index=True)
    with_csv = table.to_csv(index=False)
    write_text(with_csv, args.out_csv)
    write_tables(
        table,
        args.out_md,
        args.out_tex,
        caption="Benchmarks and corpora built by factlab: rows, documents, systems, share of consistent outputs, "
        "mean lengths in words, and rows dropped by the adapter.",
        label="tab:datasets",
    )
