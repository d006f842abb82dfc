"""Cheap scores computed in the tests themselves, independent of every factlab scorer."""

from __future__ import annotations


def word_share(source: str, output: str) -> float:
    """The share of the output's words found in the source (case-folded, split on whitespace)."""
    words = output.lower().split()
    present = set(source.lower().split())
    return sum(word in present for word in words) / len(words)
