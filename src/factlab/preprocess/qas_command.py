"""QASem units for the preprocess stage: every output sentence of a benchmark (or of a seeded sample) parsed into QAs.

Any `QASemParser` (factlab's trained one or a hub T5) fills the same table, one row per QA:
example_id, doc_id, sentence_index, predicate_index, predicate, is_verbal, verb_form, question,
answer, answer_start, answer_end (token span [start, end) over `tokens`), role, origin, and the
predicate's and the answer's character spans [start, end) in the output text (`predicate_char_start`,
`predicate_char_end`, `answer_char_start`, `answer_char_end`: what a QA localises). Only output
sentences are parsed: QASemConsistency decomposes the output, not the source.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from factlab.commands import add_device_arguments, add_sample_arguments, max_examples, positive_int, write_report
from factlab.errors import ConfigError, DataError
from factlab.io import write_parquet
from factlab.models.qasem.types import QASemParser
from factlab.preprocess.benchmark_command import sentences_of_sample

if TYPE_CHECKING:
    import pandas as pd

QA_COLUMNS = {
    "example_id": "string",
    "doc_id": "string",
    "sentence_index": "int64",
    "predicate_index": "int64",
    "predicate": "string",
    "is_verbal": "bool",
    "verb_form": "string",
    "question": "string",
    "answer": "string",
    "answer_start": "int64",
    "answer_end": "int64",
    "role": "string",
    "origin": "string",
    "predicate_char_start": "int64",
    "predicate_char_end": "int64",
    "answer_char_start": "int64",
    "answer_char_end": "int64",
}


def token_char_spans(text: str, tokens: list[str]) -> list[tuple[int, int]]:
    """[start, end) of each token in `text`, found left to right (the tokenizer's tokens are substrings of the
    text in order, whitespace dropped); a ValueError names a token that is not."""
    spans, position = [], 0
    for index, token in enumerate(tokens):
        start = text.find(token, position)
        if start < 0:
            raise ValueError(f"token {index} {token!r} is not in the sentence after character {position}")
        spans.append((start, start + len(token)))
        position = start + len(token)
    return spans


def output_char_span(spans: list[tuple[int, int]], first: int, stop: int, offset: int) -> tuple[int, int]:
    """The output characters of tokens [first, stop) of a sentence starting at `offset` in the output."""
    if not 0 <= first < stop <= len(spans):
        raise ValueError(f"token span [{first}, {stop}) is outside the sentence's {len(spans)} tokens")
    return offset + spans[first][0], offset + spans[stop - 1][1]


def qa_units(
    sentences: pd.DataFrame,
    parser: QASemParser,
    tokenize: Callable[[str], list[str]],
    benchmark: str,
    parser_counts: Callable[[], dict[str, int]] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Parse the output sentences of `sentences` (the preprocess sentences table) into QA rows."""
    import pandas as pd

    outputs = sentences[sentences["side"] == "output"]
    started = time.perf_counter()
    token_lists: list[list[str]] = []
    keys: list[tuple[str, str, int]] = []
    char_spans: list[tuple[int, list[tuple[int, int]]]] = []  # per parsed sentence: its output offset, token spans
    empty = 0
    for row in outputs.itertuples(index=False):
        tokens = tokenize(row.text)
        if not tokens:
            empty += 1  # whitespace-only sentence: nothing to decompose, counted
            continue
        try:
            char_spans.append((int(row.start), token_char_spans(row.text, tokens)))
        except ValueError as error:
            message = f"output sentence {row.sentence_index}: {error}"
            raise DataError(message, file=f"benchmark {benchmark}", record=row.example_id, field="output") from error
        token_lists.append(tokens)
        keys.append((row.example_id, row.doc_id, int(row.sentence_index)))
    try:
        parses = parser.parse(token_lists)
    except (ValueError, IndexError) as error:
        raise unparseable_sentence(parser, token_lists, keys, benchmark, error) from error
    rows: list[tuple] = []
    without_qas = 0
    for (example_id, doc_id, sentence_index), parse, (offset, spans) in zip(keys, parses, char_spans, strict=True):
        if not parse.qas:
            without_qas += 1
        for qa in parse.qas:
            try:
                predicate_span = output_char_span(spans, qa.predicate.index, qa.predicate.index + 1, offset)
                answer_span = output_char_span(spans, qa.answer_start, qa.answer_end, offset)
            except ValueError as error:
                message = f"the parser's QA {qa.question!r} on output sentence {sentence_index}: {error}"
                raise DataError(message, file=f"benchmark {benchmark}", record=example_id, field="output") from error
            rows.append(
                (
                    example_id,
                    doc_id,
                    sentence_index,
                    qa.predicate.index,
                    qa.predicate.text,
                    qa.predicate.is_verbal,
                    qa.predicate.verb_form,
                    qa.question,
                    qa.answer,
                    qa.answer_start,
                    qa.answer_end,
                    qa.role or "",
                    qa.source,
                    *predicate_span,
                    *answer_span,
                )
            )
    frame = pd.DataFrame(rows, columns=list(QA_COLUMNS)).astype(QA_COLUMNS)
    seconds = time.perf_counter() - started
    words = int(sum(len(tokens) for tokens in token_lists))
    report: dict[str, Any] = {
        "benchmark": benchmark,
        "output_sentences": int(len(outputs)),
        "empty_sentences": empty,
        "sentences_without_qas": without_qas,
        "qas": int(len(frame)),
        "predicates": int(frame.drop_duplicates(["example_id", "sentence_index", "predicate_index"]).shape[0]),
        "qas_by_origin": {str(k): int(v) for k, v in frame["origin"].value_counts().items()},
        "words": words,
        "seconds": round(seconds, 3),
        "words_per_s": round(words / seconds, 1) if seconds > 0 else None,
        "parser_counts": dict(parser_counts()) if parser_counts else {},
    }
    return frame, report


def unparseable_sentence(
    parser: QASemParser, token_lists: list[list[str]], keys: list[tuple[str, str, int]], benchmark: str, error: Exception
) -> DataError:
    """The error naming the first sentence the parser fails on alone (the batch failed as a whole)."""
    for tokens, (example_id, _, sentence_index) in zip(token_lists, keys, strict=True):
        try:
            parser.parse([tokens])
        except (ValueError, IndexError) as own_error:
            return DataError(
                f"QASem parser failed on output sentence {sentence_index}: {own_error}",
                file=f"benchmark {benchmark}",
                record=example_id,
                field="output",
            )
    return DataError(f"QASem parser failed on the batch, on no sentence alone: {error}", file=f"benchmark {benchmark}")


def load_qasem_parser(
    kind: str,
    model: str,
    *,
    device: str = "auto",
    batch_size: int = 32,
    hub_format: str = "qasem_parser",
    num_beams: int = 4,
    max_new_tokens: int = 256,
) -> QASemParser:
    """factlab's trained parser (`kind="trained"`, a model folder) or a published hub T5 (`"hub"`)."""
    if kind == "trained":
        from factlab.models.qasem.parser import FactlabQASemParser

        return FactlabQASemParser.load(model, device=device, batch_size=batch_size)
    if kind == "hub":
        from factlab.models.qasem.hub import HubQASemParser

        return HubQASemParser(
            model, device=device, batch_size=batch_size, max_new_tokens=max_new_tokens, num_beams=num_beams, style=hub_format
        )
    raise ConfigError(f"unknown QASem parser kind {kind!r}: use 'trained' or 'hub'")


def spacy_tokenizer() -> Callable[[str], list[str]]:
    """Tokens as the parsers expect them (spaCy's English tokenizer, whitespace tokens dropped)."""
    from factlab.runtime import load_spacy

    tokenizer = load_spacy().tokenizer

    def tokenize(text: str) -> list[str]:
        return [token.text for token in tokenizer(text) if not token.is_space]

    return tokenize


# --- command line -------------------------------------------------------------------------


def register(commands: Any) -> None:
    qas = commands.add_parser("qas", help="QASem QA pairs of every output sentence (or of a sample's)")
    qas.add_argument("--benchmark", required=True)
    qas.add_argument("--data", required=True, help="results/data/<benchmark>.parquet (the examples a sample is drawn from)")
    qas.add_argument("--max-examples", type=max_examples, required=True, help="'all' or N: the examples preprocess kept")
    qas.add_argument("--sentences", required=True)
    add_sample_arguments(qas, "examples that QASemConsistency scores")
    qas.add_argument("--parser", choices=("trained", "hub"), required=True)
    qas.add_argument("--model", required=True, help="trained: the model folder; hub: a hub id or local folder")
    add_device_arguments(qas, precision=False)
    qas.add_argument("--batch-size", type=positive_int, required=True)
    # The hub parser's decoding settings (params.yaml qasem.hub): required with --parser hub, refused otherwise.
    qas.add_argument("--hub-format")
    qas.add_argument("--num-beams", type=positive_int)
    qas.add_argument("--max-new-tokens", type=positive_int)
    qas.add_argument("--out", required=True, help="qas.parquet")
    qas.add_argument("--report", required=True)
    qas.set_defaults(func=run_qas)


HUB_ARGUMENTS = {"hub_format": "--hub-format", "num_beams": "--num-beams", "max_new_tokens": "--max-new-tokens"}


def run_qas(args: argparse.Namespace) -> None:
    import pandas as pd

    hub = {name: getattr(args, name) for name in HUB_ARGUMENTS if getattr(args, name) is not None}
    if args.parser == "hub" and len(hub) < len(HUB_ARGUMENTS):
        missing = ", ".join(flag for name, flag in HUB_ARGUMENTS.items() if name not in hub)
        raise ConfigError(f"--parser hub needs {missing} (params.yaml qasem.hub)")
    if args.parser == "trained" and hub:
        raise ConfigError(f"--parser trained takes no hub settings, got {', '.join(HUB_ARGUMENTS[name] for name in hub)}")
    sentences, sample = sentences_of_sample(pd.read_parquet(args.sentences), args)
    parser = load_qasem_parser(
        args.parser,
        args.model,
        device=args.device,
        batch_size=args.batch_size,
        **hub,
    )
    qas, report = qa_units(sentences, parser, spacy_tokenizer(), args.benchmark, parser_counts=lambda: parser.counts)
    report["parser"] = {"kind": args.parser, "model": args.model}
    write_parquet(qas, args.out)
    write_report(report | sample, args.report)
