"""Chunking policies that cut a long source into model-sized pieces, counting every cut.

- `alignscore_chunks`: AlignScore's ~350-word chunks at sentence boundaries.
- `token_windows`: SCALE's overlapping windows over model token ids.
- `pack_sentences`: greedy packing of whole sentences up to a token budget.

Each returns `(chunks, ChunkReport)`. Nothing here truncates: content that does not fit is kept
in a chunk counted as over budget (or split into windows), so the stage report can say how often
the model-side limit will bite. Parameters are plain arguments so they can live in params.yaml.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Literal, get_args

from factlab.errors import ConfigError
from factlab.text.sentences import Sentence
from factlab.text.words import whitespace_word_count

AlignScorePolicy = Literal["reference", "even"]
# The values of score.alignscore.chunk_policy, for command-line choices and settings checks (the Literal types them).
CHUNK_POLICIES: tuple[str, ...] = get_args(AlignScorePolicy)
WindowPolicy = Literal["covering", "reference"]


@dataclass
class ChunkReport:
    """What chunking did to the inputs; reports of several documents add up with `+`."""

    n_inputs: int = 0  # documents (sentence lists or token sequences) chunked
    n_units: int = 0  # sentences or tokens read
    n_chunks: int = 0
    n_truncated: int = 0  # chunks that lost content (0 here; scorers add their own model-side cuts)
    n_dropped: int = 0  # units left out of every chunk (0 here by construction, checked in tests)
    n_over_budget: int = 0  # chunks longer than the budget, kept whole or cut into windows
    n_split: int = 0  # over-budget sentences cut into overlapping token windows
    n_empty_inputs: int = 0  # empty documents, given one empty chunk so they still get a score
    n_redundant: int = 0  # windows inside the span of earlier ones ("reference" window policy)

    def __add__(self, other: ChunkReport) -> ChunkReport:
        return ChunkReport(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def as_counts(self) -> dict[str, int]:
        """Counts for a stage report; drops use the project's `dropped_` prefix."""
        counts = {name.removeprefix("n_"): value for name, value in asdict(self).items()}
        counts["dropped_units"] = counts.pop("dropped")
        return counts


@dataclass(frozen=True)
class SentenceChunk:
    """Consecutive sentences `sentences[first:stop]` joined with single spaces (AlignScore's join).

    For a piece of one over-long sentence cut into windows, `token_span` gives the token range
    inside that sentence (the caller slices its token ids) and `text` is the whole sentence.
    """

    text: str
    first: int
    stop: int
    start: int  # character offsets in the original text (from the sentences)
    end: int
    size: int  # words (AlignScore) or tokens (packing) in the chunk
    token_span: tuple[int, int] | None = None


@dataclass(frozen=True)
class TokenWindow:
    start: int  # token index of the first token of the window
    end: int  # one past the last
    token_ids: Sequence[int]


def alignscore_chunks(
    sentences: Sequence[Sentence],
    words_per_chunk: int = 350,
    policy: AlignScorePolicy = "reference",
) -> tuple[list[SentenceChunk], ChunkReport]:
    """AlignScore source chunks: `n = words // words_per_chunk + 1` groups of whole sentences.

    "reference" reproduces AlignScore's `inference.py`: groups of `max(len(sentences) // n, 1)`
    consecutive sentences, so a remainder forms extra, smaller chunks (10 sentences, n = 3 gives
    3 + 3 + 3 + 1). "even" gives exactly `min(n, len(sentences))` groups whose sentence counts
    differ by at most one, the "divided evenly" the paper describes. A chunk with more words than
    `words_per_chunk` (a long sentence) is kept whole and counted as over budget; whether the
    model then truncates it (AlignScore: 512 tokens) is for the scorer to count. Words are
    counted per sentence, so a boundary without a space ('said."The') counts one word more than
    AlignScore's count over the whole text.
    """
    _require_positive(words_per_chunk=words_per_chunk)
    report = ChunkReport(n_inputs=1, n_units=len(sentences))
    if not sentences:
        # AlignScore scores an empty source as one empty chunk (`premise_sents or ['']`).
        report.n_chunks, report.n_empty_inputs = 1, 1
        return [SentenceChunk("", 0, 0, 0, 0, 0)], report
    counts = [whitespace_word_count(s.text) for s in sentences]
    n_chunks = sum(counts) // words_per_chunk + 1
    if policy == "reference":
        per_chunk = max(len(sentences) // n_chunks, 1)
        bounds = [(i, min(i + per_chunk, len(sentences))) for i in range(0, len(sentences), per_chunk)]
    elif policy == "even":
        bounds = _even_bounds(len(sentences), min(n_chunks, len(sentences)))
    else:
        raise ConfigError(f"unknown AlignScore chunk policy {policy!r}; choose one of {CHUNK_POLICIES}")
    chunks = [_sentence_chunk(sentences, first, stop, sum(counts[first:stop])) for first, stop in bounds]
    report.n_chunks = len(chunks)
    report.n_over_budget = sum(chunk.size > words_per_chunk for chunk in chunks)
    return chunks, report


def token_windows(
    token_ids: Sequence[int],
    chunk_size: int,
    prompt_len: int,
    overlap: float = 0.25,
    policy: WindowPolicy = "covering",
) -> tuple[list[TokenWindow], ChunkReport]:
    """SCALE windows over a source's token ids (no special tokens), for any tokenizer.

    Each window holds `width = chunk_size - prompt_len` tokens so that window + prompt fits
    `chunk_size`; windows start every `stride = int(width * (1 - overlap))` tokens (SCALE: 25%
    overlap). "covering" stops at the first window that reaches the end, so the windows cover
    the input once. "reference" reproduces SCALE's `get_chunks`: a single window only when the
    input is strictly shorter than `width`, else `ceil(n / (width * (1 - overlap)))` windows,
    the tail ones possibly inside the span of earlier ones (counted as `n_redundant`). SCALE
    tests the length of the whole prompt-filled text, whose tokenization can differ by a token
    from prompt and source tokenized apart, so its one-window cut-off may differ by one token.
    """
    _require_positive(chunk_size=chunk_size)
    width = chunk_size - prompt_len
    if prompt_len < 0 or width <= 0:
        raise ConfigError(f"prompt_len must be in [0, chunk_size): got {prompt_len} with chunk_size {chunk_size}")
    if not 0 <= overlap < 1:
        raise ConfigError(f"overlap must be in [0, 1): got {overlap}")
    n_tokens = len(token_ids)
    spans = _window_spans(n_tokens, width, overlap, policy)
    report = ChunkReport(n_inputs=1, n_units=n_tokens, n_chunks=len(spans), n_empty_inputs=int(n_tokens == 0))
    report.n_redundant = _count_redundant(spans)
    return [TokenWindow(start, end, token_ids[start:end]) for start, end in spans], report


def pack_sentences(
    sentences: Sequence[Sentence],
    token_counts: Sequence[int],
    budget: int,
    split_long: bool = False,
    overlap: float = 0.25,
) -> tuple[list[SentenceChunk], ChunkReport]:
    """Greedy packing: consecutive whole sentences while their token counts fit `budget`.

    A sentence longer than the budget never gets truncated: it becomes a chunk of its own,
    counted in `n_over_budget`, or with `split_long` it is cut into overlapping windows of
    `budget` tokens (`token_span` says which tokens), counted in `n_split`.
    """
    _require_positive(budget=budget)
    if len(token_counts) != len(sentences):
        raise ValueError(f"{len(token_counts)} token counts for {len(sentences)} sentences")
    if any(count < 0 for count in token_counts):
        raise ValueError("token counts must be non-negative")
    report = ChunkReport(n_inputs=1, n_units=len(sentences))
    if not sentences:
        report.n_chunks, report.n_empty_inputs = 1, 1
        return [SentenceChunk("", 0, 0, 0, 0, 0)], report
    chunks: list[SentenceChunk] = []
    first, size = 0, 0
    for index, count in enumerate(token_counts):
        if index > first and size + count > budget:
            chunks.append(_sentence_chunk(sentences, first, index, size))
            first, size = index, 0
        if count > budget:
            chunks.extend(_long_sentence_chunks(sentences, index, count, budget, split_long, overlap, report))
            first, size = index + 1, 0
            continue
        size += count
    if first < len(sentences):
        chunks.append(_sentence_chunk(sentences, first, len(sentences), size))
    report.n_chunks = len(chunks)
    return chunks, report


def _long_sentence_chunks(
    sentences: Sequence[Sentence],
    index: int,
    count: int,
    budget: int,
    split_long: bool,
    overlap: float,
    report: ChunkReport,
) -> list[SentenceChunk]:
    report.n_over_budget += 1
    whole = _sentence_chunk(sentences, index, index + 1, count)
    if not split_long:
        return [whole]
    report.n_split += 1
    return [
        SentenceChunk(whole.text, index, index + 1, whole.start, whole.end, end - start, (start, end))
        for start, end in _window_spans(count, budget, overlap, "covering")
    ]


def _window_spans(n_tokens: int, width: int, overlap: float, policy: WindowPolicy) -> list[tuple[int, int]]:
    stride = max(int(width * (1 - overlap)), 1)
    if policy == "covering":
        if n_tokens <= width:
            return [(0, n_tokens)]
        n_windows = math.ceil((n_tokens - width) / stride) + 1
    elif policy == "reference":
        if n_tokens < width:
            return [(0, n_tokens)]
        # SCALE counts windows with the unrounded stride but places them with the rounded one.
        n_windows = math.ceil(n_tokens / (width * (1 - overlap)))
    else:
        raise ConfigError(f"unknown window policy {policy!r}; choose 'covering' or 'reference'")
    return [(i * stride, min(i * stride + width, n_tokens)) for i in range(n_windows)]


def _count_redundant(spans: Sequence[tuple[int, int]]) -> int:
    reached = 0
    redundant = 0
    for _start, end in spans:
        if end <= reached:
            redundant += 1
        reached = max(reached, end)
    return redundant


def _even_bounds(n_items: int, n_groups: int) -> list[tuple[int, int]]:
    """`n_groups` consecutive ranges over `n_items` whose sizes differ by at most one."""
    base, extra = divmod(n_items, n_groups)
    bounds, first = [], 0
    for group in range(n_groups):
        stop = first + base + (group < extra)
        bounds.append((first, stop))
        first = stop
    return bounds


def _sentence_chunk(sentences: Sequence[Sentence], first: int, stop: int, size: int) -> SentenceChunk:
    group = sentences[first:stop]
    return SentenceChunk(" ".join(s.text for s in group), first, stop, group[0].start, group[-1].end, size)


def _require_positive(**values: int) -> None:
    for name, value in values.items():
        if value <= 0:
            raise ConfigError(f"{name} must be positive, got {value}")
