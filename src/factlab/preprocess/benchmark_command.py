"""`factlab preprocess sentences|triples|report`: the text units of one benchmark.

Each command reads parquet, calls `factlab.preprocess.benchmark`, and writes its outputs atomically.
Every parameter is required: the values live in params.yaml and the rules pass them.
The QA units (`factlab preprocess qas`) are factlab.preprocess.qas_command.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_sample_arguments, max_examples, positive_int, sample_record, write_report
from factlab.io import write_parquet
from factlab.text.sentences import METHODS

if TYPE_CHECKING:
    import pandas as pd


def register(commands: Any) -> None:
    sentences = commands.add_parser("sentences", help="split sources (once per doc_id) and outputs into sentences")
    _add_benchmark_arguments(sentences)
    sentences.add_argument("--splitter", choices=METHODS, required=True)
    sentences.add_argument("--batch-size", type=positive_int, required=True, help="spaCy nlp.pipe batch size")
    sentences.add_argument("--out", required=True, help="sentences.parquet")
    sentences.add_argument("--report", required=True, help="JSON counts and timing of this step")
    sentences.set_defaults(func=run_sentences)

    triples = commands.add_parser("triples", help="OpenIE-style triples of every sentence (or of a sample's)")
    _add_benchmark_arguments(triples)
    triples.add_argument("--sentences", required=True)
    triples.add_argument("--batch-size", type=positive_int, required=True)
    add_sample_arguments(triples, "examples that OpenIE triples scores")
    triples.add_argument("--out", required=True, help="triples.parquet")
    triples.add_argument("--report", required=True)
    triples.set_defaults(func=run_triples)

    report = commands.add_parser("report", help="merge the step reports into report.json")
    report.add_argument("--sentences-report", required=True)
    report.add_argument("--triples-report", help="absent where no triples were extracted (no scorer reads them)")
    report.add_argument("--out", required=True)
    report.set_defaults(func=run_report)


def run_sentences(args: argparse.Namespace) -> None:
    from factlab.preprocess.benchmark import sentence_units

    examples = _read_examples(args)
    sentences, report = sentence_units(examples, args.benchmark, args.splitter, args.batch_size)
    write_parquet(sentences, args.out)
    write_report(report, args.report)


def run_triples(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.preprocess.benchmark import triple_units

    sentences, sample = sentences_of_sample(pd.read_parquet(args.sentences), args)
    triples, report = triple_units(sentences, args.benchmark, args.batch_size, sample["examples_not_sampled"])
    write_parquet(triples, args.out)
    write_report(report | sample, args.report)


def sentences_of_sample(sentences: pd.DataFrame, args: argparse.Namespace) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The sentences of the job's seeded sample (`--sample-examples`, drawn from `--data`'s selected examples as the
    scoring jobs draw it; every sentence with 'all'), and what its report records: the examples the sample left out
    and the sample. Shared by the triples and the parser's QAs."""
    from factlab.preprocess.benchmark import sampled_sentences

    if args.sample_examples is None:
        return sentences, {"examples_not_sampled": 0}
    kept, not_sampled = sampled_sentences(sentences, _read_examples(args), args.sample_examples, args.sample_seed)
    return kept, {"examples_not_sampled": not_sampled, **sample_record(args)}


def run_report(args: argparse.Namespace) -> None:
    from factlab.preprocess.benchmark import merge_reports

    sentences, triples = (
        json.loads(Path(path).read_text(encoding="utf-8")) if path else None
        for path in (args.sentences_report, args.triples_report)
    )
    write_report(merge_reports(sentences, triples), args.out)


def _add_benchmark_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--benchmark", required=True, help="benchmark name (named in errors and reports)")
    command.add_argument("--data", required=True, help="results/data/<benchmark>.parquet")
    command.add_argument("--max-examples", type=max_examples, required=True, help="'all' or N: the first N example_ids")


def _read_examples(args: argparse.Namespace) -> pd.DataFrame:
    import pandas as pd

    from factlab.preprocess.benchmark import select_examples

    return select_examples(pd.read_parquet(args.data), args.benchmark, args.max_examples)
