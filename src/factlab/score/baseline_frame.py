"""What every FRANK baseline scorer (Pagnoni et al., 2021) shares: who owns which sentences, and the score frame.

Each scorer takes the examples (`example_id, doc_id, source, output`) and the preprocess stage's
sentence table, and returns `(scores, counts)`: a frame with `example_id, score` (higher = more
consistent) and a `sentences` column (per output sentence: `sentence_index, sentence, start, end,
support`, plus where meaningful the best-matching source sentence and its character span in the
source), and a dict of counts where every cut and every example left without a score is counted.
An example whose output or source has no sentences scores NaN in every scorer (counted in
`examples_without_output_sentences` / `examples_without_source_sentences`).

The scorers: `factlab.score.embedding_cosine`, `factlab.score.rouge`, `factlab.score.bertscore` and
`factlab.score.openie_triples`. Kept free of torch: the rouge baseline imports it too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from factlab.errors import DataError
from factlab.score.sentences import sentences_by_owner
from factlab.text.sentences import Sentence

LOG = logging.getLogger(__name__)


@dataclass
class Owners:
    """The examples' ids and their sentences (`sentences_by_owner` of the preprocess table)."""

    example_ids: list[str]
    doc_ids: list[str]
    sources: dict[str, list[Sentence]]  # doc_id -> source sentences
    outputs: dict[str, list[Sentence]]  # example_id -> output sentences

    @classmethod
    def of(cls, examples: pd.DataFrame, sentences: pd.DataFrame) -> Owners:
        missing = [name for name in ("example_id", "doc_id") if name not in examples.columns]
        if missing:
            raise DataError(f"the examples lack the columns {missing}", field=missing[0])
        return cls(
            examples["example_id"].astype(str).tolist(),
            examples["doc_id"].astype(str).tolist(),
            sentences_by_owner(sentences, "source", "doc_id"),
            sentences_by_owner(sentences, "output", "example_id"),
        )

    def rows(self) -> Iterator[tuple[int, str, str, list[Sentence], list[Sentence]]]:
        """(row, example_id, doc_id, output sentences, source sentences) of every example."""
        for row, (example_id, doc_id) in enumerate(zip(self.example_ids, self.doc_ids, strict=True)):
            yield row, example_id, doc_id, self.outputs.get(example_id, []), self.sources.get(doc_id, [])


@dataclass
class Scored:
    """Records of the score frame being built, and the counts every scorer reports."""

    records: list[dict[str, Any]] = field(default_factory=list)
    without_output: int = 0
    without_source: int = 0

    def skip(self, example_id: str, outputs: Sequence[Sentence], sources: Sequence[Sentence]) -> bool:
        """Record NaN for an example with nothing to score (no output or no source sentence)."""
        if outputs and sources:
            return False
        self.without_output += not outputs
        self.without_source += bool(outputs) and not sources
        self.records.append({"example_id": example_id, "score": float("nan"), "n_sentences": len(outputs), "sentences": []})
        return True

    def add(self, example_id: str, score: float, detail: list[dict[str, Any]], **extra: Any) -> None:
        self.records.append(
            {"example_id": example_id, "score": float(score), "n_sentences": len(detail), **extra, "sentences": detail}
        )

    def result(self, name: str, **counts: int) -> tuple[pd.DataFrame, dict[str, int]]:
        all_counts = {
            "examples": len(self.records),
            "examples_without_output_sentences": self.without_output,
            "examples_without_source_sentences": self.without_source,
            **counts,
        }
        if self.without_output or self.without_source:
            LOG.warning(
                "%s: %d examples without output sentences and %d without source sentences score NaN",
                name,
                self.without_output,
                self.without_source,
            )
        return pd.DataFrame.from_records(self.records), all_counts


def sentence_detail(index: int, sentence: Sentence, support: float, **extra: Any) -> dict[str, Any]:
    """One output sentence's entry of the `sentences` column: its span, its support, and the scorer's `extra`."""
    return {
        "sentence_index": index,
        "sentence": sentence.text,
        "start": sentence.start,
        "end": sentence.end,
        "support": support,
        **extra,
    }


def best_source(sources: Sequence[Sentence], index: int) -> dict[str, int]:
    """The best-matching source sentence's index and character span, for `sentence_detail`."""
    return {"best_source_sentence": index, "source_start": sources[index].start, "source_end": sources[index].end}
