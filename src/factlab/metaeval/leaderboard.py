"""The leaderboard: every scorer's ROC AUC on every benchmark it scored, each set against the benchmark's reference.

Per benchmark, the reference is the built-in scorer with the highest AUC among those that scored the whole
benchmark: a scorer of a seeded sample is compared with it on its sample, never chosen as it, since an AUC on fewer
examples is noisier. Every other scorer, built in or brought by a user, is compared with the reference on the
examples both scored by the paired document bootstrap (`paired`). The p-values of all the table's comparisons are
adjusted together by Holm's step-down method, which controls the chance of any false finding among them without
assuming the comparisons independent (they share a reference and examples).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from factlab.metaeval.bootstrap import bootstrap_ci
from factlab.metaeval.detection import roc_auc
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.paired import paired_auc_on_shared_examples
from factlab.metaeval.variants import PAIRED_TEST

if TYPE_CHECKING:
    import pandas as pd

BUILTIN, PUBLISHED, USER = "built-in", "published", "user"
COLUMNS = (
    "benchmark",
    "scorer",
    "kind",
    "n",
    "roc_auc",
    "roc_auc_low",
    "roc_auc_high",
    "reference",
    "difference",
    "difference_low",
    "difference_high",
    "p_value",
    "p_holm",
    "significant",
    "sampled",
    "paired_test",
)
SUMMARY_COLUMNS = ("scorer", "kind", "benchmarks", "sampled_benchmarks", "mean_roc_auc", "reference_on", "significant")


def holm_adjust(p_values: ArrayLike) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values, in the input's order: the i-th smallest of m p-values times (m − i + 1),
    made non-decreasing along that order and capped at 1. A NaN (no test) stays NaN and is not counted in m."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise StatisticsError(f"p-values must be one-dimensional, got shape {p.shape}")
    tested = np.flatnonzero(~np.isnan(p))
    if ((p[tested] < 0) | (p[tested] > 1)).any():
        raise StatisticsError("p-values must lie in [0, 1]")
    order = tested[np.argsort(p[tested], kind="stable")]
    multipliers = len(order) - np.arange(len(order))
    adjusted = np.full(p.shape, np.nan)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(multipliers * p[order]))
    return adjusted


def auc_with_interval(frame: pd.DataFrame, *, resamples: int, confidence: float, seed: int) -> tuple[float, float, float]:
    """ROC AUC of one scorer's labelled scores (`label`, `score`, `doc_id`; unscored rows left out) and its percentile
    document-bootstrap interval; NaN where the scored examples hold one label only, or the bootstrap cannot give one."""
    scored = frame.dropna(subset=["score"])
    labels = scored["label"].astype(int).to_numpy()
    values = scored["score"].to_numpy(dtype=float)
    if len(set(labels)) < 2:
        return np.nan, np.nan, np.nan
    try:
        ci = bootstrap_ci(
            roc_auc,
            labels,
            values,
            groups=scored["doc_id"].astype(str).to_numpy(),
            n_resamples=resamples,
            confidence=confidence,
            rng=np.random.default_rng(seed),
        )
    except StatisticsError:
        return roc_auc(labels, values), np.nan, np.nan
    return ci.estimate, ci.low, ci.high


def reference_scorer(aucs: Mapping[str, float], builtin: Collection[str], sampled: Collection[str]) -> str | None:
    """The built-in scorer of the whole benchmark (not in `sampled`) with the highest defined AUC, the first by name
    on a tie; None where there is none."""
    candidates = sorted(
        (scorer for scorer, auc in aucs.items() if scorer in builtin and scorer not in sampled and not np.isnan(auc)),
        key=lambda scorer: (-aucs[scorer], scorer),
    )
    return candidates[0] if candidates else None


def leaderboard(
    frames: Mapping[str, Mapping[str, pd.DataFrame]],
    *,
    builtin: Collection[str],
    sampled: Collection[tuple[str, str]],
    published: Collection[str] = (),
    resamples: int,
    confidence: float,
    seed: int,
) -> pd.DataFrame:
    """The leaderboard (COLUMNS) of {scorer: {benchmark: labelled scores}}: one row per (benchmark, scorer), by
    benchmark then scorer name. `builtin` names the built-in scorers, `published` the released scores of published
    metrics (score.published; any other is a user's); `sampled` the
    (scorer, benchmark) pairs scored on a seeded sample. The reference's own row has no difference; a comparison that
    cannot be made (one label among the shared examples) has none either, and is not counted in Holm's m.
    `significant`: the Holm-adjusted p-value is below 1 − confidence."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for benchmark in sorted({name for scored in frames.values() for name in scored}):
        scorers = sorted(scorer for scorer in frames if benchmark in frames[scorer])
        on_sample = {scorer for scorer in scorers if (scorer, benchmark) in sampled}
        benchmark_rows = {}
        for scorer in scorers:
            frame = frames[scorer][benchmark]
            auc, low, high = auc_with_interval(frame, resamples=resamples, confidence=confidence, seed=seed)
            benchmark_rows[scorer] = {
                "benchmark": benchmark,
                "scorer": scorer,
                "kind": BUILTIN if scorer in builtin else (PUBLISHED if scorer in published else USER),
                "n": int(frame["score"].notna().sum()),
                "roc_auc": auc,
                "roc_auc_low": low,
                "roc_auc_high": high,
                "sampled": scorer in on_sample,
            }
        reference = reference_scorer({s: row["roc_auc"] for s, row in benchmark_rows.items()}, builtin, on_sample)
        for scorer, row in benchmark_rows.items():
            row["reference"] = reference
            if reference is None or scorer == reference or np.isnan(row["roc_auc"]):
                continue
            try:
                difference = paired_auc_on_shared_examples(
                    frames[scorer][benchmark],
                    frames[reference][benchmark],
                    n_resamples=resamples,
                    confidence=confidence,
                    rng=np.random.default_rng(seed),
                )
            except StatisticsError:
                continue
            row.update(
                difference=difference.difference,
                difference_low=difference.low,
                difference_high=difference.high,
                p_value=difference.p_value,
                paired_test=PAIRED_TEST,
            )
        rows += benchmark_rows.values()
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table["p_holm"] = holm_adjust(table["p_value"].to_numpy(dtype=float))
    tested = table["p_holm"].notna()
    table["significant"] = pd.array(np.where(tested, table["p_holm"] < 1.0 - confidence, None), dtype="boolean")
    return table


def scorer_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per scorer (SUMMARY_COLUMNS): its kind, how many benchmarks it has an AUC on, those of them scored on a sample,
    the unweighted mean AUC over them (comparable between scorers only over the same benchmarks), the benchmarks it
    is the reference of, and how many of its comparisons are significant after Holm."""
    import pandas as pd

    rows = []
    for scorer, part in table.groupby("scorer", sort=True):
        ranked = part.dropna(subset=["roc_auc"])
        rows.append(
            {
                "scorer": scorer,
                "kind": part["kind"].iloc[0],
                "benchmarks": len(ranked),
                "sampled_benchmarks": sorted(ranked.loc[ranked["sampled"].astype(bool), "benchmark"]),
                "mean_roc_auc": ranked["roc_auc"].mean() if len(ranked) else np.nan,
                "reference_on": sorted(part.loc[part["reference"] == scorer, "benchmark"]),
                "significant": int(part["significant"].fillna(False).sum()),
            }
        )
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
