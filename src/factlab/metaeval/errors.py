"""The error every meta-evaluation statistic raises on input it cannot give a meaningful number for."""

from __future__ import annotations

from factlab.errors import FactlabError


class StatisticsError(FactlabError, ValueError):
    """A statistic is undefined for this input (NaN, length mismatch, constant vector, one class, n too small).

    Also a ValueError, so code written against scipy/sklearn conventions still catches it.
    """
