"""AlignScore (Zha et al., 2023) over a preprocessed benchmark.

The source is cut into chunks of about `words_per_chunk` words at sentence boundaries
(factlab.text.chunking.alignscore_chunks, from the source sentences of the preprocess
stage), the output into its sentences; every (chunk, sentence) pair goes through the engine in one
call (deduplicated, length-batched); sentence support = max over chunks, example score = mean over
sentences (`aggregation: mean`) or min (`min`: one unsupported sentence is enough). With `top_chunks` k > 0, a
lexical pre-ranker (`rank_chunks`: how many of the sentence's distinct lower-cased words occur in the chunk, ties
to the earlier chunk) keeps each sentence's k best chunks and only those pairs are scored (a source of at most k
chunks is scored whole); the max, the best chunk, the evidence and the token support are then over the chunks
scored. The ranking reads the sentence and its own source only, so a pair's score never depends on the other
examples. The tuning chooses k on validation data (factlab.score.tuning); 0 scores every chunk. Support is read off
the trained aligner's 3-way head (`support_head: three_way`, AlignScore's `nli_sp`) or its binary head
(`binary`, AlignScore's `bin_sp`); the tuning chooses among them on validation data.

The score table has `example_id, score` and the detail that localises: per output sentence its
text, offsets, support, the best chunk and that chunk's character span in the source; plus the
cut counts of the engine (premise pieces cut to fit the model).

With `localise` (the scoring rule and `factlab check`; not the tuning, which reads scores only), the score
points at the error:
- evidence: one more pass scores each source sentence of the sentence's best chunk against it by the same
  head (one short pair per source sentence of the best chunk); the best three, with their offsets in the
  source, are the sentence's `evidence`;
- tokens: an aligner with a token head (factlab.models.token_support) gives each word piece's
  P(unsupported) for every (chunk, sentence) pair in the support pass's own forwards (remembered:
  factlab.models.token_memo), the lowest over chunks (a word is supported when some chunk supports
  it); the example's `tokens` column lists every piece with its offsets in the output and its support
  (1 - P(unsupported)), what the localisation analysis projects onto gold tokens
  (factlab.metaeval.analyses.localisation_command); with a type head, each sentence's `error_types`: the
  distribution over FRANK's categories of the error it would make.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from factlab.errors import FactlabError
from factlab.models.engine import EngineSettings, PairCache, score_pairs
from factlab.models.protocols import ERROR_TYPES, PairScorer, reads_aligner_heads
from factlab.models.support_heads import SUPPORT_HEADS, SharedForward, with_support_head
from factlab.models.token_memo import RememberedAligner, TokenMemo
from factlab.models.token_support import score_tokens
from factlab.score.sentences import AGGREGATIONS, aggregate, sentences_by_owner
from factlab.text.chunking import AlignScorePolicy, SentenceChunk, alignscore_chunks
from factlab.text.sentences import Sentence
from factlab.text.words import overlap_words

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class AlignScoreSettings:
    words_per_chunk: int = 350
    chunk_policy: AlignScorePolicy = "reference"
    aggregation: str = "mean"
    support_head: str = "three_way"  # factlab.models.support_heads
    localise: bool = False  # evidence sentences and, with a token head, token support (module docstring)
    evidence_sentences: int = 3  # the best source sentences kept per output sentence
    top_chunks: int = 0  # chunks scored per output sentence, the pre-ranker's best (`rank_chunks`); 0 = every chunk

    def __post_init__(self) -> None:
        if self.words_per_chunk < 1:
            raise FactlabError("alignscore words_per_chunk must be positive")
        if self.top_chunks < 0:
            raise FactlabError("alignscore top_chunks must be 0 (every chunk) or positive")
        if self.aggregation not in AGGREGATIONS:
            raise FactlabError(f"unknown alignscore aggregation {self.aggregation!r}; expected one of {AGGREGATIONS}")
        if self.support_head not in SUPPORT_HEADS:
            raise FactlabError(f"unknown alignscore support head {self.support_head!r}; expected one of {SUPPORT_HEADS}")


@dataclass
class AlignScorePairs:
    outputs: dict[str, list[Sentence]]  # example_id -> output sentences
    chunks: dict[str, list[SentenceChunk]]  # doc_id -> source chunks
    pairs: list[tuple[str, str]]  # (chunk, sentence) for every sentence of every example and every chunk it scores
    owners: list[tuple[int, int, int]]  # (example row, sentence index, chunk index in its source) of each pair
    left_out: int = 0  # (chunk, sentence) pairs the pre-ranker left out (settings.top_chunks)


def rank_chunks(sentence: str, chunk_words: Sequence[set[str]]) -> list[int]:
    """Chunk indices, best first, by lexical overlap with `sentence`: how many of its distinct lower-cased words
    (factlab.text.words.overlap_words: `\\w+` runs) occur in the chunk (`chunk_words`: each chunk's word set); ties: the
    earlier chunk first."""
    wanted = set(overlap_words(sentence))
    overlap = [len(wanted & chunk) for chunk in chunk_words]
    return sorted(range(len(chunk_words)), key=lambda index: (-overlap[index], index))


def alignscore_pairs(examples: pd.DataFrame, sentences: pd.DataFrame, settings: AlignScoreSettings) -> AlignScorePairs:
    """Every (chunk, output sentence) pair AlignScore scores for `examples` (`example_id`, `doc_id`): every chunk of
    the source, or the pre-ranker's `top_chunks` best, in source order."""
    sources = sentences_by_owner(sentences, "source", "doc_id")
    outputs = sentences_by_owner(sentences, "output", "example_id")
    chunks: dict[str, list[SentenceChunk]] = {}
    for doc_id in dict.fromkeys(examples["doc_id"].astype(str)):
        chunks[doc_id], _ = alignscore_chunks(sources.get(doc_id, []), settings.words_per_chunk, settings.chunk_policy)
    chunk_words: dict[str, list[set[str]]] = {}  # per source, read only where the pre-ranker chooses
    pairs: list[tuple[str, str]] = []
    owners: list[tuple[int, int, int]] = []
    left_out = 0
    ids = zip(examples["example_id"].astype(str), examples["doc_id"].astype(str), strict=True)
    for row, (example_id, doc_id) in enumerate(ids):
        source = chunks[doc_id]
        for sentence_index, sentence in enumerate(outputs.get(example_id, [])):
            scored: Sequence[int] = range(len(source))
            if 0 < settings.top_chunks < len(source):
                if doc_id not in chunk_words:
                    chunk_words[doc_id] = [set(overlap_words(chunk.text)) for chunk in source]
                scored = sorted(rank_chunks(sentence.text, chunk_words[doc_id])[: settings.top_chunks])
                left_out += len(source) - len(scored)
            for chunk_index in scored:
                pairs.append((source[chunk_index].text, sentence.text))
                owners.append((row, sentence_index, chunk_index))
    return AlignScorePairs(outputs, chunks, pairs, owners, left_out)


def best_premises(
    owners: Sequence[tuple[int, int, int]], scores: Sequence[float], premise_cut: Sequence[int]
) -> dict[tuple[int, int], tuple[float, int, int]]:
    """(row, hypothesis) -> (score, premise index, premise pieces cut) of its best-scoring premise (first on ties).

    `owners[i]` is the (example row, hypothesis, premise) of pair i: AlignScore's max over chunks,
    SCALE's over windows and QASemConsistency's over chunks per QA.
    """
    best: dict[tuple[int, int], tuple[float, int, int]] = {}
    for (row, hypothesis, premise), value, cut in zip(owners, scores, premise_cut, strict=True):
        key = (row, hypothesis)
        if key not in best or value > best[key][0]:
            best[key] = (float(value), premise, int(cut))
    return best


def score_benchmark(
    examples: pd.DataFrame,
    sentences: pd.DataFrame,
    scorer: PairScorer,
    settings: AlignScoreSettings,
    engine: EngineSettings | None = None,
    cache: PairCache | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """AlignScore of every example (`example_id`, `doc_id`) from its preprocessed sentences."""
    job = alignscore_pairs(examples, sentences, settings)
    outputs, chunks, pairs, owners = job.outputs, job.chunks, job.pairs, job.owners
    reads_tokens = settings.localise and reads_aligner_heads(scorer) and scorer.has_token_head  # type: ignore[attr-defined]
    memo = TokenMemo() if reads_tokens else None
    reader = with_support_head(scorer, settings.support_head)
    head = settings.support_head
    first_pass = SharedForward(scorer, (head,), memo).view(head) if reads_tokens else reader
    result = score_pairs(first_pass, pairs, engine, cache, description="alignscore pairs")
    best = best_premises(owners, result.scores, result.premise_cut)
    evidence, tokens, error_types = {}, {}, {}
    if settings.localise:
        best_chunks = {key: chunks[str(examples["doc_id"].iloc[key[0]])][value[1]] for key, value in best.items()}
        sources = sentences_by_owner(sentences, "source", "doc_id")
        evidence = evidence_sentences(examples, outputs, sources, best_chunks, reader, settings, engine, cache)
        if reads_tokens:
            tokens, error_types = token_support(examples, job, best, scorer, engine, memo)
    records = []
    empty_outputs = 0
    for row, (example_id, doc_id) in enumerate(
        zip(examples["example_id"].astype(str), examples["doc_id"].astype(str), strict=True)
    ):
        detail = []
        for sentence_index, sentence in enumerate(outputs.get(example_id, [])):
            support, chunk_index, cut = best[(row, sentence_index)]
            chunk = chunks[doc_id][chunk_index]
            detail.append(
                {
                    "sentence_index": sentence_index,
                    "sentence": sentence.text,
                    "start": sentence.start,
                    "end": sentence.end,
                    "support": support,
                    "best_chunk": chunk_index,
                    "chunk_start": chunk.start,
                    "chunk_end": chunk.end,
                    "premise_pieces_cut": cut,
                }
                | ({"evidence": evidence[(row, sentence_index)]} if evidence else {})
                | ({"error_types": error_types[(row, sentence_index)]} if error_types else {})
            )
        empty_outputs += not detail
        record = {
            "example_id": example_id,
            "score": aggregate([item["support"] for item in detail], settings.aggregation),
            "n_sentences": len(detail),
            "n_chunks": len(chunks[doc_id]),
            "sentences": detail,
        }
        if tokens:
            record["tokens"] = [piece for index in range(len(detail)) for piece in tokens[(row, index)]]
        records.append(record)
    counts = {
        **result.counts,
        "pairs_left_out_by_pre_ranker": job.left_out,
        "examples": len(records),
        "examples_without_output_sentences": empty_outputs,
    }
    if empty_outputs:
        LOG.warning("%d examples have no output sentences: their score is NaN", empty_outputs)
    return pd.DataFrame.from_records(records), counts


def evidence_sentences(
    examples: pd.DataFrame,
    outputs: dict[str, list[Sentence]],
    sources: dict[str, list[Sentence]],
    best_chunks: dict[tuple[int, int], SentenceChunk],
    reader: PairScorer,
    settings: AlignScoreSettings,
    engine: EngineSettings | None,
    cache: PairCache | None,
) -> dict[tuple[int, int], list[dict[str, Any]]]:
    """(row, output sentence) -> the best `evidence_sentences` source sentences of its best chunk, best first:
    index, offsets in the source, support."""
    pairs, owners = [], []
    for (row, index), chunk in best_chunks.items():
        example = examples.iloc[row]
        output = outputs[str(example["example_id"])][index]
        source = sources.get(str(example["doc_id"]), [])
        for source_index in range(chunk.first, min(chunk.stop, len(source))):
            pairs.append((source[source_index].text, output.text))
            owners.append((row, index, source_index))
    result = score_pairs(reader, pairs, engine, cache, description="evidence sentences")
    found: dict[tuple[int, int], list[dict[str, Any]]] = {key: [] for key in best_chunks}
    for (row, index, source_index), support in zip(owners, result.scores, strict=True):
        sentence = sources[str(examples["doc_id"].iloc[row])][source_index]
        found[(row, index)].append(
            {"source_sentence": source_index, "start": sentence.start, "end": sentence.end, "support": float(support)}
        )
    return {key: sorted(items, key=lambda item: -item["support"])[: settings.evidence_sentences] for key, items in found.items()}


def token_support(
    examples: pd.DataFrame,
    job: AlignScorePairs,
    best: dict[tuple[int, int], tuple[float, int, int]],
    scorer: Any,  # an aligner with a token head, in any runtime
    engine: EngineSettings | None,
    memo: TokenMemo | None = None,
) -> tuple[dict[tuple[int, int], list[dict[str, Any]]], dict[tuple[int, int], dict[str, float]]]:
    """(row, output sentence) -> its word pieces (offsets in the output, support), each piece's P(unsupported) the
    lowest over the source's chunks: a word is supported when some chunk supports it (on the validation parts of
    XSumFaith and WiCE this reads better than the best chunk alone); and -> the type head's
    distribution over ERROR_TYPES against the best chunk (empty without a type head)."""
    result = score_tokens(RememberedAligner(scorer, memo) if memo is not None else scorer, job.pairs, engine)  # type: ignore[arg-type]
    lowest: dict[tuple[int, int], tuple[Any, Any]] = {}
    types: dict[tuple[int, int], dict[str, float]] = {}
    for index, ((row, sentence, chunk), offsets, unsupported) in enumerate(
        zip(job.owners, result.offsets, result.unsupported, strict=True)
    ):
        key = (row, sentence)
        if key in lowest:
            kept = min(len(unsupported), len(lowest[key][1]))
            unsupported = np.minimum(lowest[key][1][:kept], unsupported[:kept])
            offsets = offsets[:kept]
        lowest[key] = (offsets, unsupported)
        if result.error_types is not None and chunk == best[key][1]:
            types[key] = dict(zip(ERROR_TYPES, map(float, result.error_types[index]), strict=True))
    pieces: dict[tuple[int, int], list[dict[str, Any]]] = {}
    example_ids = examples["example_id"].astype(str).tolist()
    for (row, sentence), (offsets, unsupported) in lowest.items():
        shift = job.outputs[example_ids[row]][sentence].start
        pieces[(row, sentence)] = [
            {"start": int(start) + shift, "end": int(end) + shift, "support": 1.0 - float(p)}
            for (start, end), p in zip(offsets, unsupported, strict=True)
            if end > start
        ]
    return pieces, types
