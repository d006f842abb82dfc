"""FRANK's ROUGE baseline: ROUGE-1/2/L of the whole output (prediction) against the whole source (target).

Computed with the `rouge-score` package. FRANK's released `Rouge 1/2/L` are F-measures with Porter
stemming (the defaults here) computed against the *reference summary*; this scorer compares with
the source (pass the reference as `source` to get FRANK's numbers exactly, see the tests).
Support of an output sentence: the same ROUGE against the whole source; best source sentence:
the one with the highest ROUGE against it. Kept free of torch: a rouge job never loads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from factlab.errors import ConfigError
from factlab.score.baseline_frame import Owners, Scored, best_source, sentence_detail

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
ROUGE_MEASURES = ("precision", "recall", "fmeasure")


@dataclass(frozen=True)
class RougeSettings:
    rouge_type: str = "rougeL"
    measure: str = "fmeasure"  # FRANK's released Rouge columns are F-measures
    use_stemmer: bool = True  # FRANK's numbers are reproduced only with Porter stemming

    def __post_init__(self) -> None:
        if self.rouge_type not in ROUGE_TYPES:
            raise ConfigError(f"unknown rouge_type {self.rouge_type!r}; expected one of {ROUGE_TYPES}")
        if self.measure not in ROUGE_MEASURES:
            raise ConfigError(f"unknown rouge measure {self.measure!r}; expected one of {ROUGE_MEASURES}")


@lru_cache(maxsize=4)
def _rouge_scorer(rouge_type: str, use_stemmer: bool) -> Any:
    from rouge_score import rouge_scorer, tokenizers

    class CachedTokenizer(tokenizers.Tokenizer):
        """rouge-score's own tokenizer, remembering each text: a source sentence compared with
        every output sentence of its document is tokenised (and stemmed) once."""

        def __init__(self) -> None:
            self.inner = tokenizers.DefaultTokenizer(use_stemmer=use_stemmer)
            self.tokens = lru_cache(maxsize=4096)(self.inner.tokenize)

        def tokenize(self, text: str) -> list[str]:
            return self.tokens(text)

    return rouge_scorer.RougeScorer([rouge_type], tokenizer=CachedTokenizer())


def rouge_value(target: str, prediction: str, settings: RougeSettings) -> float:
    """ROUGE of `prediction` against `target` (precision = share of the prediction's n-grams found in the target)."""
    score = _rouge_scorer(settings.rouge_type, settings.use_stemmer).score(target, prediction)[settings.rouge_type]
    return float(getattr(score, settings.measure))


def score_rouge(examples: pd.DataFrame, sentences: pd.DataFrame, settings: RougeSettings) -> tuple[pd.DataFrame, dict[str, int]]:
    """ROUGE of each whole output against its whole source (the example score), and per output
    sentence against the whole source (support) and against each source sentence (the best one)."""
    owners = Owners.of(examples, sentences)
    source_of = dict(zip(owners.example_ids, examples["source"].astype(str), strict=True))
    output_of = dict(zip(owners.example_ids, examples["output"].astype(str), strict=True))
    scored = Scored()
    for _, example_id, _, outputs, sources in owners.rows():
        if scored.skip(example_id, outputs, sources):
            continue
        source = source_of[example_id]
        detail = []
        for index, sentence in enumerate(outputs):
            against = [rouge_value(s.text, sentence.text, settings) for s in sources]
            best = int(np.argmax(against))
            detail.append(
                sentence_detail(
                    index,
                    sentence,
                    rouge_value(source, sentence.text, settings),
                    **best_source(sources, best),
                    best_source_rouge=against[best],
                )
            )
        scored.add(example_id, rouge_value(source, output_of[example_id], settings), detail)
    return scored.result("rouge")
