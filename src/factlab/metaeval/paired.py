"""Paired significance of a difference between two scorers' ROC AUC on the same examples.

A paired percentile bootstrap: every resample draws source documents with replacement (summaries of
one article move together, as in the AUC intervals) and recomputes both AUCs on the same rows, so
the scorers' correlation is kept. The two-sided p-value is twice the smaller tail share of the
resampled differences on either side of 0 (capped at 1). DeLong's test assumes independent
examples; the document bootstrap does not, which is why it is the one used here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from factlab.metaeval.bootstrap import bootstrap_distribution, percentile_interval
from factlab.metaeval.detection import roc_auc
from factlab.metaeval.errors import StatisticsError

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class PairedDifference:
    """AUC(a) − AUC(b), its percentile interval and two-sided bootstrap p-value."""

    difference: float
    low: float
    high: float
    p_value: float
    n: int
    n_resamples: int


def _auc_difference(labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray) -> float:
    return roc_auc(labels, scores_a) - roc_auc(labels, scores_b)


def paired_auc_difference(
    y_true: ArrayLike,
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    *,
    groups: ArrayLike | None,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> PairedDifference:
    """AUC(a) − AUC(b) on the same labelled examples, with a paired (document) bootstrap."""
    labels = np.asarray(y_true)
    a, b = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    observed = _auc_difference(labels, a, b)
    distribution = bootstrap_distribution(_auc_difference, labels, a, b, groups=groups, n_resamples=n_resamples, rng=rng)
    values = distribution.values
    low, high = percentile_interval(values, confidence)
    tail = min(np.mean(values <= 0.0), np.mean(values >= 0.0))
    return PairedDifference(
        difference=float(observed),
        low=low,
        high=high,
        p_value=float(min(1.0, 2.0 * tail)),
        n=len(labels),
        n_resamples=n_resamples,
    )


def paired_auc_on_shared_examples(
    scored: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> PairedDifference:
    """AUC(scored) − AUC(reference) on the examples both scored, resampling their documents.

    Both frames hold one scorer's labelled scores of one benchmark (`example_id`, `score`, `label`, `doc_id`; a
    missing score is an unscored example). A scorer of a sample is thus compared on its sample only. Raises
    StatisticsError where the shared examples hold one label only."""
    shared = scored.dropna(subset=["score"]).merge(
        reference[["example_id", "score"]].dropna(), on="example_id", suffixes=("", "_reference")
    )
    if shared["label"].nunique() < 2:
        raise StatisticsError(f"the {len(shared)} examples both scored hold one label only")
    return paired_auc_difference(
        shared["label"].astype(int).to_numpy(),
        shared["score"].to_numpy(),
        shared["score_reference"].to_numpy(),
        groups=shared["doc_id"].astype(str).to_numpy(),
        n_resamples=n_resamples,
        confidence=confidence,
        rng=rng,
    )
