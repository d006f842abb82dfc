"""Inter-annotator agreement on category labels: Fleiss' κ, Krippendorff's α, majority share.

Input convention: an (items × raters) array of category labels (numbers or strings), one row per
annotated item, one column per rating slot. For Fleiss' κ every cell is a rater slot, so raters
need not be the same people across items (as with MTurk workers in QAGS or XSumFaith).
Missing ratings (NaN / None) are accepted only by `krippendorff_alpha_nominal`, which by
definition ignores units with fewer than two ratings; the other statistics raise on them.
κ and α are undefined when all ratings fall in one category (chance agreement is 1); they raise
`StatisticsError` rather than return NaN.

The coefficients come from libraries, behind these input checks: Fleiss' κ from
statsmodels.stats.inter_rater (`aggregate_raters` + `fleiss_kappa`), Krippendorff's α from the
`krippendorff` package (`level_of_measurement="nominal"`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from statsmodels.stats import inter_rater

from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.inputs import require_min_n


@dataclass(frozen=True)
class EncodedRatings:
    """Ratings as integer category codes (−1 = missing) and the sorted category values they index."""

    codes: NDArray[np.int64]
    categories: NDArray[Any]

    @property
    def n_categories(self) -> int:
        return len(self.categories)

    def counts(self) -> NDArray[np.int64]:
        """(items × categories) number of ratings per category (statsmodels' aggregate_raters; no missing ratings)."""
        table, _ = inter_rater.aggregate_raters(self.codes, n_cat=self.n_categories)
        counts: NDArray[np.int64] = table
        return counts


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


def _require_two_categories(n_categories: int, what: str) -> None:
    if n_categories < 2:
        raise StatisticsError(f"{what} is undefined when every rating is in one category (chance agreement = 1)")


def fleiss_kappa(ratings: ArrayLike) -> float:
    """Fleiss' κ (Fleiss 1971) for an (items × raters) label array with the same number of raters per item."""
    encoded = encode_ratings(ratings)
    _require_two_categories(encoded.n_categories, "Fleiss' kappa")
    return float(inter_rater.fleiss_kappa(encoded.counts(), method="fleiss"))


def krippendorff_alpha_nominal(ratings: ArrayLike) -> float:
    """Krippendorff's α for nominal data; NaN/None = missing; units with < 2 ratings are not pairable (ignored).

    α = 1 − D_o / D_e over the coincidence matrix of the pairable units (Krippendorff 2011),
    computed by `krippendorff.alpha`.
    """
    encoded = encode_ratings(ratings, allow_missing=True)
    codes = encoded.codes
    pairable = (codes >= 0).sum(axis=1) >= 2
    if not pairable.any():
        raise StatisticsError("Krippendorff's alpha needs at least one item with two or more ratings")
    paired_codes = codes[pairable]
    # Categories seen only in unpairable units do not enter α; one category among the pairable ones leaves it undefined.
    _require_two_categories(len(np.unique(paired_codes[paired_codes >= 0])), "Krippendorff's alpha")
    # krippendorff takes (raters × units) with NaN for a missing rating.
    reliability_data = np.where(codes >= 0, codes, np.nan).T
    return float(krippendorff.alpha(reliability_data=reliability_data, level_of_measurement="nominal"))


def majority_agreement_share(ratings: ArrayLike) -> float:
    """Share of all ratings that equal their item's most frequent label (mean over items of max count / raters)."""
    counts = encode_ratings(ratings).counts()
    return float(counts.max(axis=1).sum() / counts.sum())
