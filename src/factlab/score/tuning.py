"""AlignScore's support head, chunk size and aggregation, chosen on validation data only.

Every (support head, words per chunk, aggregation) cell of a grid scores a seeded sample of the labelled
examples of each validation benchmark (the SummaC validation cuts by default: never reported);
the cell with the highest ROC AUC, macro-averaged over the benchmarks, is the choice that every
`score_alignscore` job then uses. Ties go to the 3-way head (AlignScore's default reading), then to the
larger chunk (fewer pairs to score). A model without the aligner's binary head (a hub classifier, a released
checkpoint) is tuned on its one reading, `three_way`. The table of
every cell and the choice are written to `results/score/` so that the choice is rebuildable and
visible beside what it was chosen from. The choice records the chunk policy it was tuned with; its readers
(`read_choice`: AlignScore and QASemConsistency scoring, SCALE's best chunk, the checker) refuse another.

One model call serves every aggregation of a chunk size (the aggregations re-read the same
per-sentence supports), and the pair cache serves pairs that two chunk sizes share (a source shorter
than both chunk sizes is one chunk in each); the heads are read from one forward per batch
(`factlab.models.support_heads.SharedForward`), so the binary head's cells cost no model call.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from factlab.errors import ConfigError, FactlabError
from factlab.models.engine import EngineSettings, PairCache
from factlab.models.protocols import PairScorer
from factlab.models.support_heads import SUPPORT_HEADS, head_readers, readable_heads
from factlab.preprocess.chunking import AlignScorePolicy
from factlab.score.alignscore import AlignScoreSettings, score_benchmark
from factlab.score.sentences import AGGREGATIONS, aggregate

LOG = logging.getLogger(__name__)
TABLE_COLUMNS = ("support_head", "words_per_chunk", "aggregation", "benchmark", "n", "n_consistent", "roc_auc", "pairs")
CELL = ["support_head", "words_per_chunk", "aggregation"]


@dataclass(frozen=True)
class TuningSettings:
    support_heads: Sequence[str] = SUPPORT_HEADS
    words_per_chunk: Sequence[int] = (60, 120, 200, 350)
    aggregations: Sequence[str] = AGGREGATIONS
    max_examples_per_benchmark: int = 0  # 0 = every labelled example
    seed: int = 2022

    def __post_init__(self) -> None:
        if not self.words_per_chunk or any(int(words) < 1 for words in self.words_per_chunk):
            raise ConfigError("score.alignscore.tuning.words_per_chunk must list positive chunk sizes")
        unknown = sorted(set(self.aggregations) - set(AGGREGATIONS))
        if not self.aggregations or unknown:
            raise ConfigError(f"score.alignscore.tuning.aggregations must be among {AGGREGATIONS}, got {list(self.aggregations)}")
        heads = sorted(set(self.support_heads) - set(SUPPORT_HEADS))
        if not self.support_heads or heads:
            raise ConfigError(
                f"score.alignscore.tuning.support_heads must be among {SUPPORT_HEADS}, got {list(self.support_heads)}"
            )
        if self.max_examples_per_benchmark < 0:
            raise ConfigError("score.alignscore.tuning.max_examples_per_benchmark must be 0 (all) or positive")


def tuning_sample(examples: pd.DataFrame, max_examples: int, seed: int) -> pd.DataFrame:
    """The labelled examples, or a seeded sample of `max_examples` of them, in example_id order."""
    labelled = examples[examples["label"].notna()]
    if max_examples and len(labelled) > max_examples:
        labelled = labelled.sample(n=max_examples, random_state=seed)
    return labelled.sort_values("example_id", kind="stable").reset_index(drop=True)


def sweep(
    benchmarks: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
    scorer: PairScorer,
    settings: TuningSettings,
    chunk_policy: AlignScorePolicy,
    engine: EngineSettings | None = None,
) -> pd.DataFrame:
    """ROC AUC of every grid cell on every validation benchmark (`name -> (examples, sentences)`)."""
    cache = PairCache()
    rows: list[dict[str, Any]] = []
    heads = readable_heads(scorer, [head for head in SUPPORT_HEADS if head in settings.support_heads])
    skipped = [head for head in settings.support_heads if head not in heads]
    if not heads:
        wanted = list(settings.support_heads)
        raise ConfigError(f"score.alignscore.tuning.support_heads {wanted}: {scorer.identity} has none of them")
    if skipped:
        LOG.warning("alignscore tuning: %s has no %s head; tuning %s only", scorer.identity, skipped, heads)
    readers = head_readers(scorer, heads)
    for head, words in itertools.product(heads, sorted({int(words) for words in settings.words_per_chunk})):
        for name, (examples, sentences) in benchmarks.items():
            sample = tuning_sample(examples, settings.max_examples_per_benchmark, settings.seed)
            cell = AlignScoreSettings(words, chunk_policy, support_head=head)
            scores, counts = score_benchmark(sample, sentences, readers[head], cell, engine, cache)
            labels = sample["label"].astype(int).to_numpy()
            for aggregation in settings.aggregations:
                values = np.array([aggregate([s["support"] for s in detail], aggregation) for detail in scores["sentences"]])
                known = ~np.isnan(values)
                auc = roc_auc_score(labels[known], values[known]) if len(set(labels[known])) == 2 else float("nan")
                rows.append(
                    {
                        "support_head": head,
                        "words_per_chunk": words,
                        "aggregation": aggregation,
                        "benchmark": name,
                        "n": int(known.sum()),
                        "n_consistent": int(labels[known].sum()),
                        "roc_auc": float(auc),
                        "pairs": int(counts["pairs"]),
                    }
                )
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def read_choice(choice_path: str, chunk_policy: str) -> dict[str, Any]:
    """The tuning's choice (`choose`, written with its chunk policy by `factlab score alignscore-tune`) for a reader
    that cuts chunks by `chunk_policy`. The chunk size was chosen for the chunks of the policy the choice records,
    so a reader configured with another policy is refused."""
    choice = json.loads(Path(choice_path).read_text())
    if "chunk_policy" not in choice:
        raise FactlabError(f"{choice_path}: no field 'chunk_policy' (written by factlab score alignscore-tune)")
    tuned_policy = choice["chunk_policy"]
    if tuned_policy != chunk_policy:
        raise ConfigError(
            f"{choice_path} was tuned with chunk policy {tuned_policy!r}, but the configured chunk policy "
            f"(score.alignscore.chunk_policy) is {chunk_policy!r}: tune again with it"
        )
    return choice


def choose(table: pd.DataFrame) -> dict[str, Any]:
    """The cell with the highest macro-mean AUC over the benchmarks that have both labels; ties: the 3-way head,
    then the larger chunk."""
    usable = table.dropna(subset=["roc_auc"])
    if usable.empty:
        raise FactlabError("alignscore tuning: no validation benchmark has both labels in its sample; cannot choose")
    cells = (
        usable.groupby(CELL, as_index=False)
        .agg(mean_roc_auc=("roc_auc", "mean"), benchmarks=("benchmark", "nunique"))
        .assign(head_order=lambda frame: frame["support_head"].map(SUPPORT_HEADS.index))
        .sort_values(
            ["mean_roc_auc", "head_order", "words_per_chunk", "aggregation"], ascending=[False, True, False, True], kind="stable"
        )
    )
    best = cells.iloc[0]
    return {
        "support_head": str(best["support_head"]),
        "words_per_chunk": int(best["words_per_chunk"]),
        "aggregation": str(best["aggregation"]),
        "criterion": "macro-mean ROC AUC over the validation benchmarks",
        "mean_roc_auc": round(float(best["mean_roc_auc"]), 4),
        "benchmarks": sorted(usable["benchmark"].unique().tolist()),
        "grid": [
            {"support_head": str(h), "words_per_chunk": int(w), "aggregation": str(a), "mean_roc_auc": round(float(m), 4)}
            for h, w, a, m in cells[[*CELL, "mean_roc_auc"]].itertuples(index=False)
        ],
    }
