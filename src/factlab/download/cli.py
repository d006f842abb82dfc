"""`factlab download DATASET`: fetch and verify one manifest dataset."""

from __future__ import annotations

import argparse

from factlab.download.fetch import fetch_dataset
from factlab.download.manifest import entries_for, load_manifest


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    parser.add_argument("dataset")
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--download-dir", required=True)
    parser.add_argument("--mirror", action="append", default=[], help="mirror directory (repeatable)")
    parser.add_argument("--allow-network", action=argparse.BooleanOptionalAction, required=True)
    parser.set_defaults(func=run_download)


def run_download(args: argparse.Namespace) -> None:
    entries = entries_for(load_manifest(args.manifest), args.dataset)
    fetch_dataset(entries, args.download_dir, args.mirror, args.allow_network)
