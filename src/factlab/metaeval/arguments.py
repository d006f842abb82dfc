"""What the detection and localisation commands share: their `<benchmark>=<value>` arguments, and the precision of
the headline numbers they write to metrics.json (`dvc metrics show`)."""

from __future__ import annotations

from typing import Any

from factlab.errors import FactlabError

HEADLINE_DIGITS = 4


def benchmark_arguments(values: list[str], option: str, what: str) -> dict[str, str]:
    """`<benchmark>=<value>` arguments of `option` -> {benchmark: value}; each benchmark once."""
    pairs = {}
    for value in values:
        benchmark, separator, named = value.partition("=")
        if not separator or not benchmark or not named:
            raise FactlabError(f"{option} {value!r}: expected <benchmark>=<{what}>")
        if benchmark in pairs:
            raise FactlabError(f"{option} names benchmark {benchmark!r} twice")
        pairs[benchmark] = named
    return pairs


def headline_number(value: Any) -> float | None:
    """A metrics.json number: rounded to `HEADLINE_DIGITS`; None where it is undefined (NaN)."""
    import pandas as pd

    return None if pd.isna(value) else round(float(value), HEADLINE_DIGITS)
