"""How often a checker's decisions go wrong for a user, from its per-output decisions and the human labels.

Per set of outputs: how many consistent outputs it flags (verdict inconsistent), how many inconsistent ones it
catches, the share it gives a verdict at all (coverage: not `uncertain`, and scored), how many consistent outputs
it marks a span in, and how many consistent outputs it would offer a correction for (the checker offers one for an
output it finds inconsistent and marks spans in: factlab.checker.api.failing). Each share's denominator is every
output of its class, those without a verdict included, so that an uncertain band cannot make the alarms look rarer
than a user meets them; each comes with a Wilson score interval (`wilson_interval`), which stays informative at a
handful of outputs and at 0 or n.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from factlab.metaeval.correction import wilson_interval
from factlab.metaeval.errors import StatisticsError

# factlab.checker.calibration.verdicts' codes; any other code (uncertain, unscored) is no verdict
CONSISTENT_VERDICT, INCONSISTENT_VERDICT = 1, 0

# Each share, the column counting its outputs, and the class of outputs it is a share of (1 consistent,
# 0 inconsistent, None every output).
SHARES: dict[str, tuple[str, int | None]] = {
    "consistent_flagged": ("n_consistent_flagged", 1),  # the verdict inconsistent
    "inconsistent_caught": ("n_inconsistent_caught", 0),  # the verdict inconsistent
    "coverage": ("n_with_verdict", None),  # a verdict at all
    "consistent_with_span": ("n_consistent_with_span", 1),  # at least one span
    "consistent_correction_offered": ("n_consistent_correction_offered", 1),  # the verdict inconsistent and a span
}
DECISION_COLUMNS = (
    "n",
    "n_consistent",
    "n_inconsistent",
    *(column for name, (count, _) in SHARES.items() for column in (count, name, f"{name}_ci_low", f"{name}_ci_high")),
)


def share_columns(name: str, count: str, successes: int, n: int, confidence: float) -> dict[str, Any]:
    """The count `count`, the share `name` (NaN for n = 0) and its Wilson interval at `confidence`."""
    low, high = wilson_interval(successes, n, confidence)
    return {count: successes, name: successes / n if n else np.nan, f"{name}_ci_low": low, f"{name}_ci_high": high}


def decision_row(labels: ArrayLike, verdicts: ArrayLike, spans: ArrayLike, confidence: float = 0.95) -> dict[str, Any]:
    """`DECISION_COLUMNS` of one set of outputs: `labels` 1 consistent / 0 inconsistent (humans), `verdicts` the
    checker's codes (1 consistent, 0 inconsistent, anything else no verdict), `spans` how many spans it marks in each
    output."""
    y = np.asarray(labels, dtype=np.int64)
    given = np.asarray(verdicts, dtype=np.int64)
    marked = np.asarray(spans, dtype=np.int64) > 0
    if not len(y) == len(given) == len(marked):
        raise StatisticsError(f"labels, verdicts and spans differ in length ({len(y)}, {len(given)}, {len(marked)})")
    if not np.isin(y, (0, 1)).all():
        raise StatisticsError("labels must be 0 (inconsistent) or 1 (consistent)")
    flagged = given == INCONSISTENT_VERDICT
    counted = {
        "consistent_flagged": flagged,
        "inconsistent_caught": flagged,
        "coverage": np.isin(given, (CONSISTENT_VERDICT, INCONSISTENT_VERDICT)),
        "consistent_with_span": marked,
        "consistent_correction_offered": flagged & marked,
    }
    row: dict[str, Any] = {"n": len(y), "n_consistent": int((y == 1).sum()), "n_inconsistent": int((y == 0).sum())}
    for name, (count, of_class) in SHARES.items():
        members = np.ones(len(y), dtype=bool) if of_class is None else y == of_class
        row.update(share_columns(name, count, int((counted[name] & members).sum()), int(members.sum()), confidence))
    return row
