"""AlignScore's chunk size and aggregation, chosen on validation data only.

Every (words per chunk, aggregation) cell of a grid scores a seeded sample of the labelled
examples of each validation benchmark (the SummaC validation cuts by default: never reported);
the cell with the highest ROC AUC, macro-averaged over the benchmarks, is the choice that every
`score_alignscore` job then uses. Ties go to the larger chunk (fewer pairs to score). The table of
every cell and the choice are written to `results/score/` so that the choice is rebuildable and
visible beside what it was chosen from.

One model call serves every aggregation of a chunk size (the aggregations re-read the same
per-sentence supports), and the pair cache serves pairs that two chunk sizes share (a source shorter
than both chunk sizes is one chunk in each).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from factlab.errors import ConfigError, FactlabError
from factlab.models.aligner import PairScorer
from factlab.models.engine import EngineSettings, PairCache
from factlab.preprocess.chunking import AlignScorePolicy
from factlab.score.alignscore import AlignScoreSettings, score_benchmark
from factlab.score.sentences import AGGREGATIONS, aggregate

TABLE_COLUMNS = ("words_per_chunk", "aggregation", "benchmark", "n", "n_consistent", "roc_auc", "pairs")


@dataclass(frozen=True)
class TuningSettings:
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
    for words in sorted({int(words) for words in settings.words_per_chunk}):
        for name, (examples, sentences) in benchmarks.items():
            sample = tuning_sample(examples, settings.max_examples_per_benchmark, settings.seed)
            scores, counts = score_benchmark(sample, sentences, scorer, AlignScoreSettings(words, chunk_policy), engine, cache)
            labels = sample["label"].astype(int).to_numpy()
            for aggregation in settings.aggregations:
                values = np.array([aggregate([s["support"] for s in detail], aggregation) for detail in scores["sentences"]])
                known = ~np.isnan(values)
                auc = roc_auc_score(labels[known], values[known]) if len(set(labels[known])) == 2 else float("nan")
                rows.append(
                    {
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


def choose(table: pd.DataFrame) -> dict[str, Any]:
    """The cell with the highest macro-mean AUC over the benchmarks that have both labels; ties: larger chunk."""
    usable = table.dropna(subset=["roc_auc"])
    if usable.empty:
        raise FactlabError("alignscore tuning: no validation benchmark has both labels in its sample; cannot choose")
    cells = (
        usable.groupby(["words_per_chunk", "aggregation"], as_index=False)
        .agg(mean_roc_auc=("roc_auc", "mean"), benchmarks=("benchmark", "nunique"))
        .sort_values(["mean_roc_auc", "words_per_chunk", "aggregation"], ascending=[False, False, True], kind="stable")
    )
    best = cells.iloc[0]
    return {
        "words_per_chunk": int(best["words_per_chunk"]),
        "aggregation": str(best["aggregation"]),
        "criterion": "macro-mean ROC AUC over the validation benchmarks",
        "mean_roc_auc": round(float(best["mean_roc_auc"]), 4),
        "benchmarks": sorted(usable["benchmark"].unique().tolist()),
        "grid": [
            {"words_per_chunk": int(w), "aggregation": str(a), "mean_roc_auc": round(float(m), 4)}
            for w, a, m in cells[["words_per_chunk", "aggregation", "mean_roc_auc"]].itertuples(index=False)
        ],
    }
