"""`factlab data …`: build a canonical benchmark, dataset statistics (CSV; the paper stage renders the table)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    commands = parser.add_subparsers(dest="command", required=True)

    build = commands.add_parser("build", help="build results/data/<name>.parquet")
    build.add_argument("name")
    build.add_argument("--manifest", required=True)
    build.add_argument("--download-dir", required=True)
    build.add_argument("--out", required=True)
    build.add_argument("--report", required=True)
    build.add_argument("--custom-json", required=True, help="custom_benchmarks mapping from params.yaml, as JSON")
    build.set_defaults(func=run_build)

    stats = commands.add_parser("stats", help="dataset statistics (CSV)")
    stats.add_argument("--data", nargs="+", required=True, help="benchmark parquet files")
    stats.add_argument("--reports-dir", required=True)
    stats.add_argument("--out-csv", required=True)
    stats.set_defaults(func=run_stats)


def run_build(args: argparse.Namespace) -> None:
    from factlab.data.build import build_benchmark
    from factlab.data.registry import get_spec
    from factlab.download.manifest import RawFiles, load_manifest

    custom = json.loads(args.custom_json)
    spec = get_spec(args.name, custom)
    raw = RawFiles(args.download_dir, load_manifest(args.manifest))
    build_benchmark(spec, raw, args.out, args.report)


def run_stats(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.data.stats import benchmark_statistics
    from factlab.io import write_text

    parts = []
    for path in sorted(args.data):
        name = Path(path).stem
        report = json.loads((Path(args.reports_dir) / f"{name}.json").read_text())
        parts.append(benchmark_statistics(name, pd.read_parquet(path), report["dropped"]))
    table = pd.concat(parts, ignore_index=True)
    write_text(table.to_csv(index=False), args.out_csv)
