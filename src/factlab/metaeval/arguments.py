"""Command-line arguments the meta-evaluation commands share."""

from __future__ import annotations

from factlab.errors import FactlabError


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
