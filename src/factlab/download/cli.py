"""`factlab download DATASET`: fetch and verify one manifest dataset."""

from __future__ import annotations

import argparse
import os

from factlab.download.fetch import fetch_dataset
from factlab.download.manifest import entries_for, load_manifest


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    parser.add_argument("dataset")
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--download-dir", required=True)
    parser.add_argument(
        "--mirror-dirs", type=path_list, required=True, help=f"mirror directories, searched in order, joined by {os.pathsep!r}"
    )
    parser.add_argument(
        "--allow-network", choices=("yes", "no"), required=True, help="fetch from the URL when no mirror has a file"
    )
    parser.set_defaults(func=run_download)


def path_list(joined: str) -> list[str]:
    """download.mirror_dirs as the workflow passes it (os.pathsep-joined; empty = no mirror)."""
    return [path for path in joined.split(os.pathsep) if path]


def run_download(args: argparse.Namespace) -> None:
    entries = entries_for(load_manifest(args.manifest), args.dataset)
    fetch_dataset(entries, args.download_dir, args.mirror_dirs, args.allow_network == "yes")
