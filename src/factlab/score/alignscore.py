"""AlignScore (Zha et al., 2023) over a preprocessed benchmark.

The source is cut into chunks of about `words_per_chunk` words at sentence boundaries
(factlab.preprocess.chunking.alignscore_chunks, from the source sentences of the preprocess
stage), the output into its sentences; every (chunk, sentence) pair goes through the engine in one
call (deduplicated, length-batched); sentence support = max over chunks, example score = mean over
sentences (`aggregation: mean`) or min (`min`: one unsupported sentence is enough). Support is read off
the trained aligner's 3-way head (`support_head: three_way`, AlignScore's `nli_sp`) or its binary head
(`binary`, AlignScore's `bin_sp`); the tuning chooses among them on validation data.

The score table has `example_id, score` and the detail that localises: per output sentence its
text, offsets, support, the best chunk and that chunk's character span in the source; plus the
cut counts of the engine (premise pieces cut to fit the model).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from factlab.errors import FactlabError
from factlab.models.aligner import PairScorer
from factlab.models.engine import EngineSettings, PairCache, score_pairs
from factlab.models.support_heads import SUPPORT_HEADS, with_support_head
from factlab.preprocess.chunking import AlignScorePolicy, SentenceChunk, alignscore_chunks
from factlab.preprocess.sentences import Sentence
from factlab.score.sentences import AGGREGATIONS, aggregate, sentences_by_owner

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class AlignScoreSettings:
    words_per_chunk: int = 350
    chunk_policy: AlignScorePolicy = "reference"
    aggregation: str = "mean"
    support_head: str = "three_way"  # factlab.models.support_heads

    def __post_init__(self) -> None:
        if self.words_per_chunk < 1:
            raise FactlabError("alignscore words_per_chunk must be positive")
        if self.aggregation not in AGGREGATIONS:
            raise FactlabError(f"unknown alignscore aggregation {self.aggregation!r}; expected one of {AGGREGATIONS}")
        if self.support_head not in SUPPORT_HEADS:
            raise FactlabError(f"unknown alignscore support head {self.support_head!r}; expected one of {SUPPORT_HEADS}")


@dataclass
class AlignScorePairs:
    outputs: dict[str, list[Sentence]]  # example_id -> output sentences
    chunks: dict[str, list[SentenceChunk]]  # doc_id -> source chunks
    pairs: list[tuple[str, str]]  # (chunk, sentence) for every sentence of every example and every chunk of its source
    owners: list[tuple[int, int, int]]  # (example row, sentence index, chunk index) of each pair


def alignscore_pairs(examples: pd.DataFrame, sentences: pd.DataFrame, settings: AlignScoreSettings) -> AlignScorePairs:
    """Every (chunk, output sentence) pair AlignScore scores for `examples` (`example_id`, `doc_id`)."""
    sources = sentences_by_owner(sentences, "source", "doc_id")
    outputs = sentences_by_owner(sentences, "output", "example_id")
    chunks: dict[str, list[SentenceChunk]] = {}
    for doc_id in dict.fromkeys(examples["doc_id"].astype(str)):
        chunks[doc_id], _ = alignscore_chunks(sources.get(doc_id, []), settings.words_per_chunk, settings.chunk_policy)
    pairs: list[tuple[str, str]] = []
    owners: list[tuple[int, int, int]] = []
    ids = zip(examples["example_id"].astype(str), examples["doc_id"].astype(str), strict=True)
    for row, (example_id, doc_id) in enumerate(ids):
        for sentence_index, sentence in enumerate(outputs.get(example_id, [])):
            for chunk_index, chunk in enumerate(chunks[doc_id]):
                pairs.append((chunk.text, sentence.text))
                owners.append((row, sentence_index, chunk_index))
    return AlignScorePairs(outputs, chunks, pairs, owners)


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
    scorer = with_support_head(scorer, settings.support_head)
    result = score_pairs(scorer, pairs, engine, cache, description="alignscore pairs")
    best = best_premises(owners, result.scores, result.premise_cut)
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
            )
        empty_outputs += not detail
        records.append(
            {
                "example_id": example_id,
                "score": aggregate([item["support"] for item in detail], settings.aggregation),
                "n_sentences": len(detail),
                "n_chunks": len(chunks[doc_id]),
                "sentences": detail,
            }
        )
    counts = {**result.counts, "examples": len(records), "examples_without_output_sentences": empty_outputs}
    if empty_outputs:
        LOG.warning("%d examples have no output sentences: their score is NaN", empty_outputs)
    return pd.DataFrame.from_records(records), counts
