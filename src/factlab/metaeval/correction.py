"""Statistics of the checker's suggested corrections (FactEdit's evaluation, Balachandran et al., 2022, Table 6.2).

Per system of a benchmark with human consistency labels, on its test split: how many outputs the checker changed,
the share an independent judge rates consistent before and after correction (the judge's validation threshold),
over-correction (the share of outputs humans rated consistent that were changed at all, with its Wilson interval:
a system may have only a handful of such outputs), and ROUGE-L F1 of each
changed output to its original (how much changed). On synthetic corruptions of sentences of documents no training
used: the share the correction restores exactly, per error type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from factlab.metaeval.errors import StatisticsError

SYSTEM_COLUMNS = (
    "system",
    "n_outputs",
    "n_changed",
    "judge_consistent_before",
    "judge_consistent_after",
    "n_human_consistent",
    "n_over_corrected",
    "over_correction",
    "over_correction_ci_low",
    "over_correction_ci_high",
    "rouge_l_changed",
)
CORRECTION_FRAME_COLUMNS = ("system", "label", "changed", "judge_before", "judge_after", "rouge_l")


def rouge_l(reference: str, candidate: str) -> float:
    """ROUGE-L F1 of `candidate` against `reference` (Google's rouge-score, no stemming)."""
    from rouge_score import rouge_scorer

    return float(rouge_scorer.RougeScorer(["rougeL"]).score(reference, candidate)["rougeL"].fmeasure)


def wilson_interval(successes: int, n: int, confidence: float) -> tuple[float, float]:
    """Wilson's score interval of a binomial share (NaNs for n = 0): unlike a bootstrap, it stays informative for
    shares of a few outputs and for 0 or n successes."""
    from scipy.stats import norm

    if n == 0:
        return np.nan, np.nan
    z = float(norm.ppf(0.5 + confidence / 2))
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def system_rows(frame: pd.DataFrame, judge_threshold: float, confidence: float = 0.95) -> pd.DataFrame:
    """One row per system (and `all`) of a frame with `CORRECTION_FRAME_COLUMNS`: label 1 = humans rated the output
    consistent; changed: the checker changed it; judge_before/after: the judge's score of the original and of the
    corrected output (the same for an unchanged one); rouge_l: corrected against original. Over-correction carries
    its Wilson interval at `confidence`."""
    missing = [column for column in CORRECTION_FRAME_COLUMNS if column not in frame.columns]
    if missing:
        raise StatisticsError(f"correction frame lacks {missing}")
    if frame.empty:
        raise StatisticsError("no outputs")
    rows = []
    for system, group in [*sorted(frame.groupby("system")), ("all", frame)]:
        changed = group["changed"].to_numpy(dtype=bool)
        consistent = group["label"].to_numpy(dtype=np.int64) == 1
        n_consistent, over_corrected = int(consistent.sum()), int(changed[consistent].sum())
        low, high = wilson_interval(over_corrected, n_consistent, confidence)
        rows.append(
            {
                "system": system,
                "n_outputs": len(group),
                "n_changed": int(changed.sum()),
                "judge_consistent_before": float((group["judge_before"] >= judge_threshold).mean()),
                "judge_consistent_after": float((group["judge_after"] >= judge_threshold).mean()),
                "n_human_consistent": n_consistent,
                "n_over_corrected": over_corrected,
                "over_correction": over_corrected / n_consistent if n_consistent else np.nan,
                "over_correction_ci_low": low,
                "over_correction_ci_high": high,
                "rouge_l_changed": float(group.loc[changed, "rouge_l"].mean()) if changed.any() else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=list(SYSTEM_COLUMNS))


@dataclass(frozen=True)
class RestoreRow:
    transform: str
    error_type: str
    n_corrupted: int
    n_flagged: int  # the checker marked a span
    n_changed: int  # and suggested a correction
    n_restored: int  # which is the original sentence exactly

    @property
    def restore_rate(self) -> float:
        return self.n_restored / self.n_corrupted if self.n_corrupted else float("nan")


def normalised(text: str) -> str:
    return " ".join(text.split())


def restore_rows(
    transforms: Sequence[str],
    error_types: Sequence[str],
    flagged: Sequence[bool],
    corrupted: Sequence[str],
    corrected: Sequence[str],
    originals: Sequence[str],
) -> list[RestoreRow]:
    """Per transform, how many corrupted sentences the checker flagged, changed (its correction differs from the
    corrupted text), and restored (its correction is the original: the same words in the same order)."""
    if not len(transforms) == len(error_types) == len(flagged) == len(corrupted) == len(corrected) == len(originals):
        raise StatisticsError("restore inputs differ in length")
    frame = pd.DataFrame(
        {
            "transform": list(transforms),
            "error_type": list(error_types),
            "flagged": [bool(value) for value in flagged],
            "changed": [normalised(c) != normalised(x) for c, x in zip(corrected, corrupted, strict=True)],
            "restored": [normalised(c) == normalised(o) for c, o in zip(corrected, originals, strict=True)],
        }
    )
    return [
        RestoreRow(
            str(transform),
            str(error_type),
            len(group),
            int(group["flagged"].sum()),
            int(group["changed"].sum()),
            int(group["restored"].sum()),
        )
        for (transform, error_type), group in frame.groupby(["transform", "error_type"], sort=True)
    ]
