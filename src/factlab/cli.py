"""`factlab` command line: one sub-command group per pipeline stage, each imported only when used."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from factlab.errors import FactlabError

# Stage -> (module with `register(parser, command)`, help). The order is the pipeline's.
STAGES = {
    "download": ("factlab.download.cli", "fetch and verify one manifest dataset"),
    "data": ("factlab.data.cli", "canonical benchmarks and their statistics"),
    "benchmarks": ("factlab.data.benchmarks_cli", "export the built benchmarks for a metric run outside factlab"),
    "preprocess": ("factlab.preprocess.cli", "sentences, chunks, triples and QAs per benchmark"),
    "train": ("factlab.train.cli", "train factlab's models (QASem parser, alignment model)"),
    "score": ("factlab.score.cli", "score benchmark outputs against their sources"),
    "metaeval": ("factlab.metaeval.cli", "meta-evaluation and published analyses"),
    "paper": ("factlab.paper.cli", "tables and figures of the paper"),
    "report": ("factlab.report.cli", "static HTML pages for reading scorer outputs"),
    "checker": ("factlab.checker.cli", "package the trained checker; benchmark its latency"),
    "check": ("factlab.checker.check_command", "score your own (source, output) pairs: factlab check INPUT -o OUT.jsonl"),
    "export": ("factlab.checker.export_command", "a checker folder as a folder plain transformers loads"),
    "calibrate": (
        "factlab.checker.calibrate_command",
        "a checker folder whose threshold and uncertain band are chosen on your labelled pairs",
    ),
}
VALUE_OPTIONS = ("--log-level",)


def requested(argv: Sequence[str]) -> tuple[str | None, str | None]:
    """The stage and command named on the command line (None where absent)."""
    words, skip = [], False
    for token in argv:
        if skip:
            skip = False
        elif token in VALUE_OPTIONS:
            skip = True
        elif not token.startswith("-"):
            words.append(token)
    return (words[0] if words else None), (words[1] if len(words) > 1 else None)


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser of `argv`'s stage only: the stages' help comes from `STAGES`, so `factlab --help` and an unknown
    stage's error import no stage module (and none of the libraries behind them)."""
    stage, command = requested(argv)
    parser = argparse.ArgumentParser(prog="factlab", description=__doc__)
    parser.add_argument("--log-level", default="INFO")
    stages = parser.add_subparsers(dest="stage", required=True)
    for name, (module, help_text) in STAGES.items():
        stage_parser = stages.add_parser(name, help=help_text)
        if stage == name:
            importlib.import_module(module).register(stage_parser, command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its error (or an interrupt) is one line on stderr, without a traceback: 1 on an error, 130 on
    Ctrl-C (the shell's code for SIGINT)."""
    try:
        return run(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print("factlab: interrupted", file=sys.stderr)
        return 130


def run(argv: list[str]) -> int:
    args = build_parser(argv).parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        args.func(args)
    except FactlabError as error:
        details = getattr(error, "details", ())
        for detail in details:  # every bad record, then the error: the last line a console shows
            print(f"  {detail}", file=sys.stderr)
        unlisted = getattr(error, "count", len(details)) - len(details)
        if unlisted > 0:
            print(f"  ... and {unlisted} more", file=sys.stderr)
        print(f"factlab: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
