"""`factlab` command line: one sub-command group per pipeline stage."""

from __future__ import annotations

import argparse
import logging
import sys

from factlab.errors import FactlabError


def build_parser() -> argparse.ArgumentParser:
    from factlab.data import cli as data_cli
    from factlab.metaeval import cli as metaeval_cli
    from factlab.models import cli as models_cli
    from factlab.text import cli as preprocess_cli

    parser = argparse.ArgumentParser(prog="factlab", description=__doc__)
    parser.add_argument("--log-level", default="INFO")
    stages = parser.add_subparsers(dest="stage", required=True)
    data_cli.register(stages.add_parser("data", help="download and canonical benchmarks"))
    preprocess_cli.register(stages.add_parser("preprocess", help="sentences, chunks and triples per benchmark"))
    models_cli.register(stages.add_parser("models", help="train and evaluate models (QASem parser)"))
    metaeval_cli.register(stages.add_parser("metaeval", help="meta-evaluation and published analyses"))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        args.func(args)
    except FactlabError as error:
        print(f"factlab: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
