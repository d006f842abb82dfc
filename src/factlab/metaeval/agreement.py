"""Inter-annotator agreement on category labels: Fleiss' κ, Cohen's κ, Krippendorff's α, majority share.

Input convention: an (items × raters) array of category labels (numbers or strings), one row per
annotated item, one column per rating slot. For Fleiss' κ every cell is a rater slot, so raters
need not be the same people across items (as with MTurk workers in QAGS or XSumFaith).
Missing ratings (NaN / None) are accepted only by `krippendorff_alpha_nominal`, which by
definition ignores units with fewer than two ratings; the other statistics raise on them.
κ and α are undefined when all ratings fall in one category (chance agreement is 1); they raise
`StatisticsError` rather than return NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import require_min_n, require_same_length


@dataclass(frozen=True)
class EncodedRatings:
    """Ratings as integer category codes (−1 = missing) and the sorted category values they index."""

    codes: NDArray[np.int64]
    categories: NDArray[Any]

    @property
    def n_categories(self) -> int:
        return len(self.categories)

    def counts(self) -> NDArray[np.int64]:
        """(items × categories) number of ratings per category (missing ratings not counted)."""
        table = np.zeros((self.codes.shape[0], self.n_categories), dtype=np.int64)
        for column in self.codes.T:
            present = column >= 0
            table[np.flatnonzero(present), column[present]] += 1
        return table


def encode_ratings(ratings: ArrayLike, *, allow_missing: bool = False) -> EncodedRatings:
    """Validate an (items × raters) label array and encode it as category codes."""
    array = np.asarray(ratings.to_numpy() if hasattr(ratings, "to_numpy") else ratings)  # type: ignore[union-attr]
    if array.ndim != 2:
        raise StatisticsError(f"ratings must be an (items × raters) array, got shape {array.shape}")
    require_min_n(array.shape[0], 1, "an agreement statistic")
    if array.shape[1] < 2:
        raise StatisticsError(f"agreement needs at least 2 raters per item, got {array.shape[1]} column(s)")
    missing = np.asarray(pd.isna(array), dtype=bool)
    if missing.any() and not allow_missing:
        raise StatisticsError(f"ratings have {int(missing.sum())} missing value(s); only Krippendorff's alpha allows them")
    values = array[~missing]
    if array.dtype.kind not in "biuf":
        values = values.astype(str)  # one comparable type for np.unique; labels like "yes"/"no"
    categories, codes_present = np.unique(values, return_inverse=True)
    codes = np.full(array.shape, -1, dtype=np.int64)
    codes[~missing] = codes_present
    return EncodedRatings(codes=codes, categories=categories)


def _require_two_categories(p_chance: float, what: str) -> None:
    if np.isclose(p_chance, 1.0):
        raise StatisticsError(f"{what} is undefined when every rating is in one category (chance agreement = 1)")


def fleiss_kappa(ratings: ArrayLike) -> float:
    """Fleiss' κ (Fleiss 1971) for an (items × raters) label array with the same number of raters per item."""
    encoded = encode_ratings(ratings)
    counts = encoded.counts()
    n_items, n_raters = encoded.codes.shape
    per_item = ((counts**2).sum(axis=1) - n_raters) / (n_raters * (n_raters - 1))
    shares = counts.sum(axis=0) / (n_items * n_raters)
    p_chance = float((shares**2).sum())
    _require_two_categories(p_chance, "Fleiss' kappa")
    return float((per_item.mean() - p_chance) / (1 - p_chance))


def cohen_kappa(rater_a: ArrayLike, rater_b: ArrayLike) -> float:
    """Cohen's κ between two raters' labels of the same items (unweighted), as sklearn's cohen_kappa_score."""
    a = np.asarray(rater_a.to_numpy() if hasattr(rater_a, "to_numpy") else rater_a)  # type: ignore[union-attr]
    b = np.asarray(rater_b.to_numpy() if hasattr(rater_b, "to_numpy") else rater_b)  # type: ignore[union-attr]
    if a.ndim != 1 or b.ndim != 1:
        raise StatisticsError("Cohen's kappa takes two 1-D label arrays")
    require_same_length(rater_a=a, rater_b=b)
    encoded = encode_ratings(np.column_stack([a, b]))
    codes, k = encoded.codes, encoded.n_categories
    observed = float(np.mean(codes[:, 0] == codes[:, 1]))
    marginal_a = np.bincount(codes[:, 0], minlength=k) / len(codes)
    marginal_b = np.bincount(codes[:, 1], minlength=k) / len(codes)
    p_chance = float(marginal_a @ marginal_b)
    _require_two_categories(p_chance, "Cohen's kappa")
    return (observed - p_chance) / (1 - p_chance)


def krippendorff_alpha_nominal(ratings: ArrayLike) -> float:
    """Krippendorff's α for nominal data; NaN/None = missing; units with < 2 ratings are not pairable (ignored).

    α = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k over the coincidence matrix o (Krippendorff 2011).
    """
    encoded = encode_ratings(ratings, allow_missing=True)
    counts = encoded.counts().astype(float)
    per_unit = counts.sum(axis=1)
    pairable = per_unit >= 2
    counts, per_unit = counts[pairable], per_unit[pairable]
    if len(counts) == 0:
        raise StatisticsError("Krippendorff's alpha needs at least one item with two or more ratings")
    coincidences = np.einsum("uc,uk->ck", counts / (per_unit[:, None] - 1), counts)
    coincidences -= np.diag((counts / (per_unit[:, None] - 1)).sum(axis=0))
    totals = coincidences.sum(axis=0)
    n = totals.sum()
    off_diagonal = ~np.eye(len(totals), dtype=bool)
    expected = float(np.outer(totals, totals)[off_diagonal].sum())
    if expected == 0:
        raise StatisticsError("Krippendorff's alpha is undefined when every rating is in one category")
    observed = float(coincidences[off_diagonal].sum())
    return 1.0 - (n - 1) * observed / expected


def majority_vote(ratings: ArrayLike) -> NDArray[Any]:
    """The most frequent label of each item; raises on a tie (e.g. 2 raters disagreeing, or 2–2 of 4)."""
    encoded = encode_ratings(ratings)
    counts = encoded.counts()
    top = counts.max(axis=1, keepdims=True)
    tied = (counts == top).sum(axis=1) > 1
    if tied.any():
        raise StatisticsError(f"{int(tied.sum())} item(s) have no unique majority label (first: row {int(np.argmax(tied))})")
    result: NDArray[Any] = encoded.categories[counts.argmax(axis=1)]
    return result


def majority_agreement_share(ratings: ArrayLike) -> float:
    """Share of all ratings that equal their item's most frequent label (mean over items of max count / raters)."""
    encoded = encode_ratings(ratings)
    counts = encoded.counts()
    return float(counts.max(axis=1).sum() / counts.sum())
