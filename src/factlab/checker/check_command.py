"""`factlab check INPUT -o OUTPUT.jsonl`: score your own (source, output) pairs (factlab.checker.api).

INPUT is a CSV, TSV, JSONL or JSON file with `source` and `output` columns (`--source-column`,
`--output-column` for other names; `--id-column`, `--label-column` when it has them). OUTPUT gets one JSON
object per input row, in order; it is written only when every row is scored (nothing partial on error).
A summary (rows, flags, consistent share) goes to stderr after the progress bars.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from factlab.errors import FactlabError


def register(parser: argparse.ArgumentParser, command: str | None = None) -> None:
    parser.add_argument("input", help="CSV/TSV/JSONL/JSON file with a source and an output column")
    parser.add_argument("-o", "--out", required=True, help="JSONL file to write: one object per input row")
    parser.add_argument("--source-column", default="source")
    parser.add_argument("--output-column", default="output")
    parser.add_argument("--id-column", default="id", help="used when the file has it; else ids are row numbers from 0")
    parser.add_argument("--label-column", default="label", help="copied to the results when the file has it")
    parser.add_argument(
        "--model",
        default=None,
        help="a checker folder (default results/checker/model), a trained aligner folder, or an NLI model's hub id / folder",
    )
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> None:
    from factlab.checker.api import Checker
    from factlab.checker.inputs import Columns, read_pairs
    from factlab.io import atomic_path

    if args.out == args.input:
        raise FactlabError(f"--out {args.out} would overwrite the input")
    pairs = read_pairs(args.input, Columns(args.source_column, args.output_column, args.id_column, args.label_column))
    checker = Checker(args.model, device=args.device, threads=args.threads, progress=True)
    results = checker.check_pairs(pairs)
    with atomic_path(args.out) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for record, label in zip(results.to_dict("records"), pairs["label"], strict=True):
            if label is not None:
                record["label"] = label
            handle.write(json.dumps(_plain(record), ensure_ascii=False) + "\n")
    print(summary(results, args.out), file=sys.stderr)


def summary(results: Any, out: str) -> str:
    scored = results["score"].notna()
    flagged = results["flags"].map(bool)
    consistent = results.loc[scored, "consistent"].astype(bool)
    share = f"{consistent.mean():.1%}" if scored.any() else "n/a"
    return (
        f"factlab check: {len(results)} rows -> {out}: {int(scored.sum())} scored, {int((~scored).sum())} without score, "
        f"{int(flagged.sum())} flagged (see 'flags'); consistent at threshold {results['threshold'].iloc[0]:.4g}: {share}"
    )


def _plain(value: Any) -> Any:
    """JSON-ready: numpy scalars and arrays as Python values."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if hasattr(value, "tolist"):
        return value.tolist()
    return value
