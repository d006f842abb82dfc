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

Then the chunks scored per output sentence (`top_chunks`): the chosen cell is scored again with each candidate k of
the lexical pre-ranker (factlab.score.alignscore.rank_chunks), and the choice is the smallest k whose macro-mean AUC
is at least the exhaustive reading's minus `max_auc_loss` (`choose_top_chunks`); 0 (every chunk) when none is.
Those pairs are a subset of the cell's exhaustive ones, so the pair cache answers them all: the candidates cost no
model call. Their rows join the table (`top_chunks` k; the grid's rows read 0) and the choice records k with the
exhaustive and the chosen macro AUC. A choice written without `top_chunks` reads as 0.

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
from factlab.models.support_heads import SUPPORT_HEADS, head_readers, readable_heads, with_support_head
from factlab.score.alignscore import AlignScoreSettings, score_benchmark
from factlab.score.sentences import AGGREGATIONS, aggregate
from factlab.text.chunking import AlignScorePolicy

LOG = logging.getLogger(__name__)
TABLE_COLUMNS = (
    "support_head",
    "words_per_chunk",
    "aggregation",
    "benchmark",
    "n",
    "n_consistent",
    "roc_auc",
    "pairs",
    "top_chunks",  # chunks scored per output sentence (0: every chunk, the grid's reading)
    "pairs_left_out",  # (chunk, sentence) pairs the pre-ranker left out
)
CELL = ["support_head", "words_per_chunk", "aggregation"]
AUC_TOLERANCE = 1e-9  # float noise in a macro mean, not a loss: a candidate equal to the exhaustive reading qualifies


@dataclass(frozen=True)
class TuningSettings:
    support_heads: Sequence[str] = SUPPORT_HEADS
    words_per_chunk: Sequence[int] = (60, 120, 200, 350)
    aggregations: Sequence[str] = AGGREGATIONS
    max_examples_per_benchmark: int = 0  # 0 = every labelled example
    seed: int = 2022
    top_chunks: Sequence[int] = (1, 2, 3)  # the pre-ranker's candidates k (chunks scored per output sentence)
    max_auc_loss: float = 0.005  # the most macro AUC the chosen k may lose against every chunk

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
        if any(int(k) < 1 for k in self.top_chunks):
            raise ConfigError(f"score.alignscore.tuning.top_chunks must list positive chunk counts, got {list(self.top_chunks)}")
        if not 0 <= self.max_auc_loss < 1:
            raise ConfigError(f"score.alignscore.tuning.max_auc_loss must be in [0, 1), got {self.max_auc_loss}")


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
    cache: PairCache | None = None,
) -> pd.DataFrame:
    """ROC AUC of every grid cell on every validation benchmark (`name -> (examples, sentences)`); `cache`: shared
    with `sweep_top_chunks`, whose pairs it then holds."""
    cache = cache if cache is not None else PairCache()
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
            rows += cell_rows(name, sample, sentences, readers[head], cell, settings.aggregations, engine, cache)
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def sweep_top_chunks(
    benchmarks: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
    scorer: PairScorer,
    settings: TuningSettings,
    chunk_policy: AlignScorePolicy,
    choice: Mapping[str, Any],
    engine: EngineSettings | None = None,
    cache: PairCache | None = None,
) -> pd.DataFrame:
    """ROC AUC of the chosen cell (`choose`) with each of the pre-ranker's candidates `settings.top_chunks` on every
    validation benchmark: the grid's rows for that cell, with `top_chunks` k. With the sweep's `cache`, every pair
    is already scored (a subset of the cell's exhaustive pairs)."""
    reader = with_support_head(scorer, str(choice["support_head"]))
    rows: list[dict[str, Any]] = []
    for k in sorted({int(k) for k in settings.top_chunks}):
        for name, (examples, sentences) in benchmarks.items():
            sample = tuning_sample(examples, settings.max_examples_per_benchmark, settings.seed)
            cell = AlignScoreSettings(
                int(choice["words_per_chunk"]), chunk_policy, support_head=str(choice["support_head"]), top_chunks=k
            )
            rows += cell_rows(name, sample, sentences, reader, cell, [str(choice["aggregation"])], engine, cache)
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def cell_rows(
    name: str,
    sample: pd.DataFrame,
    sentences: pd.DataFrame,
    reader: PairScorer,
    cell: AlignScoreSettings,
    aggregations: Sequence[str],
    engine: EngineSettings | None,
    cache: PairCache,
) -> list[dict[str, Any]]:
    """The table's rows of one benchmark's `sample` scored with `cell`: one per aggregation (one model call serves
    them all: they re-read the same per-sentence supports)."""
    scores, counts = score_benchmark(sample, sentences, reader, cell, engine, cache)
    labels = sample["label"].astype(int).to_numpy()
    rows = []
    for aggregation in aggregations:
        values = np.array([aggregate([s["support"] for s in detail], aggregation) for detail in scores["sentences"]])
        known = ~np.isnan(values)
        auc = roc_auc_score(labels[known], values[known]) if len(set(labels[known])) == 2 else float("nan")
        rows.append(
            {
                "support_head": cell.support_head,
                "words_per_chunk": cell.words_per_chunk,
                "aggregation": aggregation,
                "benchmark": name,
                "n": int(known.sum()),
                "n_consistent": int(labels[known].sum()),
                "roc_auc": float(auc),
                "pairs": int(counts["pairs"]),
                "top_chunks": cell.top_chunks,
                "pairs_left_out": int(counts["pairs_left_out_by_pre_ranker"]),
            }
        )
    return rows


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


def grid_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The grid's rows of a tuning table (every chunk scored); a table without `top_chunks` is all grid."""
    return table[table["top_chunks"] == 0] if "top_chunks" in table.columns else table


def choose(table: pd.DataFrame) -> dict[str, Any]:
    """The grid cell with the highest macro-mean AUC over the benchmarks that have both labels; ties: the 3-way
    head, then the larger chunk. The pre-ranker's rows (`top_chunks` > 0) are `choose_top_chunks`'."""
    usable = grid_rows(table).dropna(subset=["roc_auc"])
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


def choose_top_chunks(table: pd.DataFrame, choice: Mapping[str, Any], max_auc_loss: float) -> dict[str, Any]:
    """The smallest `top_chunks` k whose macro-mean AUC for the chosen cell is at least the exhaustive reading's
    (the grid's row of that cell) minus `max_auc_loss`; 0 (every chunk) when no candidate is. Both macro means are
    over the benchmarks on which the exhaustive reading has an AUC."""
    cell = table[
        (table["support_head"] == choice["support_head"])
        & (table["words_per_chunk"] == int(choice["words_per_chunk"]))
        & (table["aggregation"] == choice["aggregation"])
    ]
    exhaustive = grid_rows(cell).dropna(subset=["roc_auc"])
    if exhaustive.empty:
        raise FactlabError("alignscore tuning: the chosen cell has no AUC on any validation benchmark")
    benchmarks = set(exhaustive["benchmark"])
    exhaustive_auc = float(exhaustive["roc_auc"].mean())
    candidates = []
    if "top_chunks" in cell.columns:
        pruned = cell[(cell["top_chunks"] > 0) & cell["benchmark"].isin(benchmarks)]
        for k, rows in pruned.groupby("top_chunks", sort=True):
            complete = rows["roc_auc"].notna().all() and set(rows["benchmark"]) == benchmarks
            auc = float(rows["roc_auc"].mean()) if complete else float("nan")  # no AUC on a benchmark: not a candidate
            counted = [int(rows[column].sum()) if column in rows else 0 for column in ("pairs", "pairs_left_out")]
            candidates.append((int(k), auc, *counted))
    floor = exhaustive_auc - max_auc_loss - AUC_TOLERANCE
    qualifying = [k for k, auc, _, _ in candidates if auc >= floor]  # NaN never qualifies
    chosen = min(qualifying, default=0)
    chosen_auc = next((auc for k, auc, _, _ in candidates if k == chosen), exhaustive_auc)
    return {
        "top_chunks": chosen,
        "exhaustive_mean_roc_auc": round(exhaustive_auc, 4),
        "chosen_mean_roc_auc": round(chosen_auc, 4),
        "max_auc_loss": max_auc_loss,
        "top_chunks_criterion": "the smallest top_chunks whose macro-mean ROC AUC is at least the exhaustive reading's "
        "minus max_auc_loss (0: every chunk)",
        "top_chunks_candidates": [
            {"top_chunks": k, "mean_roc_auc": round_auc(auc), "pairs": pairs, "pairs_left_out": left_out}
            for k, auc, pairs, left_out in candidates
        ],
    }


def round_auc(value: float) -> float | None:
    """A macro AUC as the choice records it: 4 decimals; None for no AUC (JSON has no NaN)."""
    return None if np.isnan(value) else round(value, 4)
