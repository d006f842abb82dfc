"""Preprocess stage: a canonical benchmark frame -> sentence and triple frames + reports.

DataFrame in, DataFrames and count dicts out (no file I/O: `factlab.preprocess.cli` reads and writes).
Each step also times itself, so the stage report can give words per second.

Layout of the frames (results/preprocess/<benchmark>/{sentences,triples}.parquet):

- sentences: one row per sentence, `side` "source" or "output".
  Source rows belong to a document, not an example: each distinct source is split once and its
  rows are keyed by `doc_id` with a null `example_id` (a SummEval article judged with 16 summaries
  is stored once; join to examples on `doc_id`). Output rows are keyed by `example_id` and carry
  the example's `doc_id`. `start`/`end` index the source or output string
  (`text == string[start:end]`); an empty output has no rows and is counted in `empty_outputs`.
- triples: OpenIE-style triples of every sentence row, keyed like sentences plus
  `triple_index`; element offsets index the same string as the sentence's `start`/`end`.

Each scorer cuts sources into its own chunks or windows when it scores (`factlab.text.chunking`), with
its own settings in `score:`; nothing here depends on them. Nothing is truncated or dropped: every empty
input is counted in the report.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd
from tqdm import tqdm

from factlab.errors import ConfigError, DataError, FactlabError
from factlab.preprocess.triples import extract_triples, parse_triples_docs
from factlab.runtime import PARSE_ONLY, SENTENCES_ONLY, load_spacy
from factlab.text.sentences import Sentence, split_sentences_many
from factlab.text.words import whitespace_word_count

SOURCE, OUTPUT = "source", "output"
TEXT_FIELDS = ("example_id", "doc_id", "source", "output")
PROGRESS_SECONDS = 10.0  # tqdm refresh interval: progress lines in a log, not a flood

SENTENCE_COLUMNS = {
    "side": "str",
    "doc_id": "str",
    "example_id": "str",
    "sentence_index": "int64",
    "text": "str",
    "start": "int64",
    "end": "int64",
    "n_words": "int64",
}
TRIPLE_COLUMNS = {
    "side": "str",
    "doc_id": "str",
    "example_id": "str",
    "sentence_index": "int64",
    "triple_index": "int64",
    "subject": "str",
    "relation": "str",
    "object": "str",
    "negated": "bool",
    "subject_start": "int64",
    "subject_end": "int64",
    "relation_start": "int64",
    "relation_end": "int64",
    "object_start": "int64",
    "object_end": "int64",
    "subject_head": "str",
    "relation_head": "str",
    "object_head": "str",
}

T = TypeVar("T")


@dataclass
class Units:
    """Everything the stage produces for one benchmark (`preprocess`)."""

    sentences: pd.DataFrame
    triples: pd.DataFrame
    report: dict[str, Any]


# ---------------------------------------------------------------------------------------------
# Input checks and selection


def select_examples(frame: pd.DataFrame, benchmark: str, max_examples: int | None = None) -> pd.DataFrame:
    """The checked records, sorted by example_id; with `max_examples`, only the first N."""
    check_records(frame, benchmark)
    if max_examples is not None and max_examples < 1:
        raise ConfigError(f"max_examples must be positive or None, got {max_examples}")
    selected = frame.sort_values("example_id", kind="stable")
    if max_examples is not None:
        selected = selected.head(max_examples)
    return selected.reset_index(drop=True)


def sampled_sentences(sentences: pd.DataFrame, examples: pd.DataFrame, size: int, seed: int | None) -> tuple[pd.DataFrame, int]:
    """The output sentences of the examples of a seeded sample (score.sample: drawn from `examples`, the benchmark's
    selected examples, as the scoring jobs draw it) and the source sentences of their documents; and how many
    examples the sample left out."""
    from factlab.sampling import sample_examples

    kept = sample_examples(examples, size, seed)
    keep = sentences["example_id"].isin(set(kept["example_id"])) & (sentences["side"] == OUTPUT)
    keep |= sentences["doc_id"].isin(set(kept["doc_id"])) & (sentences["side"] == SOURCE)
    return sentences[keep].reset_index(drop=True), len(examples) - len(kept)


def check_records(frame: pd.DataFrame, benchmark: str) -> None:
    """Every record has string `example_id` (unique), `doc_id`, `source` and `output`, and each
    doc_id one source text; else a DataError naming the benchmark and the example_id."""
    missing = [name for name in TEXT_FIELDS if name not in frame.columns]
    if missing:
        raise DataError(f"benchmark {benchmark!r} lacks the columns {missing}", field=missing[0])
    ids = frame["example_id"].tolist()
    for position, example_id in enumerate(ids):
        if not isinstance(example_id, str) or not example_id:
            raise DataError(
                f"benchmark {benchmark!r}: example_id must be a non-empty string, got {example_id!r}",
                record=f"row {position}",
                field="example_id",
            )
    duplicated = frame["example_id"].duplicated()
    if duplicated.any():
        example_id = frame["example_id"][duplicated].iloc[0]
        raise DataError(f"benchmark {benchmark!r}: example_id is not unique", record=example_id, field="example_id")
    for name in ("doc_id", "source", "output"):
        for example_id, value in zip(ids, frame[name].tolist(), strict=True):
            if not isinstance(value, str):
                raise DataError(
                    f"benchmark {benchmark!r}, example {example_id!r}: {name} must be a string, "
                    f"got {type(value).__name__} {value!r}",
                    record=example_id,
                    field=name,
                )
    sources_per_doc = frame.groupby("doc_id", sort=True)["source"].nunique()
    if (sources_per_doc > 1).any():
        doc_id = sources_per_doc[sources_per_doc > 1].index[0]
        examples = frame.loc[frame["doc_id"] == doc_id, "example_id"].tolist()
        raise DataError(
            f"benchmark {benchmark!r}: doc_id {doc_id!r} has {sources_per_doc[doc_id]} different source texts "
            f"(examples {examples[:5]}); source units are keyed by doc_id",
            record=examples[0],
            field="doc_id",
        )


def distinct_sources(examples: pd.DataFrame) -> pd.DataFrame:
    """One row per document: doc_id, source, and the first example_id that uses it (for errors)."""
    return (
        examples.groupby("doc_id", sort=True).agg(source=("source", "first"), first_example=("example_id", "first")).reset_index()
    )


# ---------------------------------------------------------------------------------------------
# Sentences


def sentence_units(
    examples: pd.DataFrame,
    benchmark: str,
    splitter: str = "pysbd",
    batch_size: int = 64,
    progress: bool = True,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The sentences frame (layout in the module docstring) and its report.

    `examples` is the output of `select_examples`. Each distinct text is split once.
    """
    load_started = time.perf_counter()
    if splitter == "spacy":
        load_spacy(SENTENCES_ONLY)
    started = time.perf_counter()
    documents = distinct_sources(examples)
    owners = _text_owners(documents, examples)
    texts = list(owners)
    split = dict(
        zip(
            texts,
            _map_batched(
                texts,
                lambda batch: split_sentences_many(batch, method=splitter, batch_size=batch_size),
                batch_size,
                owners,
                benchmark,
                f"{benchmark} sentences",
                progress,
            ),
            strict=True,
        )
    )
    rows: list[tuple] = []
    for doc_id, source in zip(documents["doc_id"], documents["source"], strict=True):
        rows += _sentence_rows(SOURCE, doc_id, None, split[source])
    for example_id, doc_id, output in zip(examples["example_id"], examples["doc_id"], examples["output"], strict=True):
        rows += _sentence_rows(OUTPUT, doc_id, example_id, split[output])
    sentences = _frame(rows, SENTENCE_COLUMNS)
    seconds = time.perf_counter() - started
    words_source = sum(map(whitespace_word_count, documents["source"]))
    words_output = sum(map(whitespace_word_count, examples["output"]))
    on_side = sentences["side"].value_counts()
    report = {
        "benchmark": benchmark,
        "sentence_splitter": splitter,
        "examples": len(examples),
        "documents": len(documents),
        "sentences_source": int(on_side.get(SOURCE, 0)),
        "sentences_output": int(on_side.get(OUTPUT, 0)),
        "distinct_texts_split": len(texts),
        "empty_sources": int(sum(not split[source] for source in documents["source"])),
        "empty_outputs": int(sum(not split[output] for output in examples["output"])),
        "words_source": words_source,
        "words_output": words_output,
        **_timing(words_source + words_output, seconds, started - load_started),
    }
    return sentences, report


def _text_owners(documents: pd.DataFrame, examples: pd.DataFrame) -> dict[str, str]:
    """Each distinct text (in first-seen order) -> the record to name if it cannot be processed."""
    owners: dict[str, str] = {}
    for doc_id, source, example_id in zip(documents["doc_id"], documents["source"], documents["first_example"], strict=True):
        owners.setdefault(source, f"source of doc_id {doc_id!r} (example_id {example_id!r})")
    for example_id, output in zip(examples["example_id"], examples["output"], strict=True):
        owners.setdefault(output, f"output of example_id {example_id!r}")
    return owners


def _sentence_rows(side: str, doc_id: str, example_id: str | None, sentences: Sequence[Sentence]) -> list[tuple]:
    return [(side, doc_id, example_id, i, s.text, s.start, s.end, whitespace_word_count(s.text)) for i, s in enumerate(sentences)]


# ---------------------------------------------------------------------------------------------
# Triples


def triple_units(
    sentences: pd.DataFrame, benchmark: str, batch_size: int = 64, examples_not_sampled: int = 0
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """OpenIE triples of every sentence row (each distinct sentence parsed once), and the report, which counts the
    `examples_not_sampled` whose sentences the caller left out (OpenIE triples scoring a seeded sample).

    Each sentence is parsed on its own, so `sentence_index` is that of the sentences frame even
    where the parser would have cut the sentence differently.
    """
    load_started = time.perf_counter()
    load_spacy(PARSE_ONLY, keep_hyphenated=True)
    started = time.perf_counter()
    owners: dict[str, str] = {}
    columns = ("side", "doc_id", "example_id", "sentence_index", "text")
    for side, doc_id, example_id, index, text in zip(*(sentences[column] for column in columns), strict=True):
        where = f"doc_id {doc_id!r}" if side == SOURCE else f"example_id {example_id!r}"
        owners.setdefault(text, f"{side} sentence {index} of {where}")
    texts = list(owners)
    parsed = _map_batched(
        texts,
        lambda batch: [extract_triples(doc) for doc in parse_triples_docs(batch, batch_size=batch_size)],
        batch_size,
        owners,
        benchmark,
        f"{benchmark} triples",
    )
    triples_of = dict(zip(texts, parsed, strict=True))
    rows: list[tuple] = []
    without_triples = {SOURCE: 0, OUTPUT: 0}
    for side, doc_id, example_id, index, text, offset in zip(
        sentences["side"],
        sentences["doc_id"],
        sentences["example_id"],
        sentences["sentence_index"],
        sentences["text"],
        sentences["start"],
        strict=True,
    ):
        found = triples_of[text]
        without_triples[side] += not found
        example_id = None if side == SOURCE else example_id
        for triple_index, triple in enumerate(found):
            (s0, s1), (r0, r1), (o0, o1) = triple.spans
            rows.append(
                (
                    side, doc_id, example_id, index, triple_index, triple.subject, triple.relation, triple.object,
                    triple.negated, offset + s0, offset + s1, offset + r0, offset + r1, offset + o0, offset + o1,
                    *triple.heads,
                )
            )  # fmt: skip
    triples = _frame(rows, TRIPLE_COLUMNS)
    seconds = time.perf_counter() - started
    on_side = triples["side"].value_counts()
    report = {
        "benchmark": benchmark,
        "sentences_parsed": len(sentences),
        "distinct_sentences_parsed": len(texts),
        "triples_source": int(on_side.get(SOURCE, 0)),
        "triples_output": int(on_side.get(OUTPUT, 0)),
        "triples_negated": int(triples["negated"].sum()),
        "sentences_without_triples_source": without_triples[SOURCE],
        "sentences_without_triples_output": without_triples[OUTPUT],
        "examples_not_sampled": examples_not_sampled,
        **_timing(int(sentences["n_words"].sum()), seconds, started - load_started),
    }
    return triples, report


# ---------------------------------------------------------------------------------------------
# The stage report and the whole stage in one call


def merge_reports(sentences: Mapping[str, Any], triples: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The per-benchmark report.json: counts of every step, and words/s of the whole stage
    (the benchmark's words over the seconds of the steps that ran, model loading not included).
    `triples` is None where no triples were extracted (the workflow extracts them only for the benchmarks
    that OpenIE triples scores): the triple counts are then None and their seconds not counted."""
    steps = {"sentences": sentences, **({"triples": triples} if triples is not None else {})}
    names = {report["benchmark"] for report in steps.values()}
    if len(names) != 1:
        raise FactlabError(f"reports of different benchmarks cannot be merged: {sorted(names)}")
    seconds = {step: report["seconds"] for step, report in steps.items()}
    words = sentences["words_source"] + sentences["words_output"]
    all_seconds = sum(seconds.values())
    return {
        "benchmark": sentences["benchmark"],
        "examples": sentences["examples"],
        "documents": sentences["documents"],
        "sentences": {SOURCE: sentences["sentences_source"], OUTPUT: sentences["sentences_output"]},
        "empty_sources": sentences["empty_sources"],
        "empty_outputs": sentences["empty_outputs"],
        "triples": None if triples is None else {SOURCE: triples["triples_source"], OUTPUT: triples["triples_output"]},
        "triples_negated": None if triples is None else triples["triples_negated"],
        "triples_examples_not_sampled": None if triples is None else triples["examples_not_sampled"],
        "sentences_without_triples": None
        if triples is None
        else {
            SOURCE: triples["sentences_without_triples_source"],
            OUTPUT: triples["sentences_without_triples_output"],
        },
        "words": words,
        "words_source": sentences["words_source"],
        "words_output": sentences["words_output"],
        "seconds": {**seconds, "total": round(all_seconds, 3)},
        "load_seconds": round(sum(report["load_seconds"] for report in steps.values()), 3),
        "words_per_s": round(words / all_seconds, 1) if all_seconds > 0 else None,
        "words_per_s_by_step": {step: report["words_per_s"] for step, report in steps.items()},
    }


def preprocess(
    frame: pd.DataFrame,
    benchmark: str,
    splitter: str = "pysbd",
    batch_size: int = 64,
    max_examples: int | None = None,
) -> Units:
    """The whole stage for one benchmark frame, as the workflow's three steps run it."""
    examples = select_examples(frame, benchmark, max_examples)
    sentences, sentences_report = sentence_units(examples, benchmark, splitter, batch_size)
    triples, triples_report = triple_units(sentences, benchmark, batch_size)
    return Units(sentences, triples, merge_reports(sentences_report, triples_report))


# ---------------------------------------------------------------------------------------------
# Helpers


def _map_batched(
    texts: list[str],
    function: Callable[[list[str]], list[T]],
    batch_size: int,
    owners: Mapping[str, str],
    benchmark: str,
    description: str,
    progress: bool = True,
) -> list[T]:
    """`function` over `texts` in batches with a progress bar (unless `progress` is false); a text that makes it fail
    is named (benchmark and record) in a DataError."""
    results: list[T] = []
    with _progress_bar(len(texts), description, progress) as bar:
        for begin in range(0, len(texts), batch_size):
            batch = texts[begin : begin + batch_size]
            try:
                results += function(batch)
            except FactlabError:
                raise
            except Exception as error:
                raise _failing_record(batch, function, owners, benchmark, error) from error
            bar.update(len(batch))
    return results


def _failing_record(
    batch: list[str], function: Callable[[list[str]], list[T]], owners: Mapping[str, str], benchmark: str, error: Exception
) -> DataError:
    for text in batch:
        try:
            function([text])
        except Exception as single_error:
            return DataError(f"benchmark {benchmark!r}: cannot process the {owners[text]}: {single_error!r}", record=owners[text])
    return DataError(f"benchmark {benchmark!r}: a batch failed ({error!r}) that succeeds text by text", record=owners[batch[0]])


def _progress_bar(total: int, description: str, progress: bool = True) -> tqdm:
    return tqdm(total=total, desc=description, unit="text", file=sys.stderr, mininterval=PROGRESS_SECONDS, disable=not progress)


def _frame(rows: list[tuple], columns: Mapping[str, str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns)).astype(dict(columns))


def _timing(words: int, seconds: float, load_seconds: float) -> dict[str, Any]:
    return {
        "words": words,
        "seconds": round(seconds, 3),
        "load_seconds": round(load_seconds, 3),
        "words_per_s": round(words / seconds, 1) if seconds > 0 else None,
    }
