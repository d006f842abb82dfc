"""A researcher's own metric as factlab's `python:` door takes it (scorers.custom: `python: ../tests/user_scorer.py:
word_support`): a callable of (sources, outputs) returning one record per pair. Word support: the share of the
output's words that occur in the source, and the words that do not as unsupported spans (character offsets)."""

from __future__ import annotations

import re

WORD = re.compile(r"\w+")


def word_support(sources: list[str], outputs: list[str]) -> list[dict]:
    results = []
    for source, output in zip(sources, outputs, strict=True):
        known = {word.lower() for word in WORD.findall(source)}
        words = list(WORD.finditer(output))
        unsupported = [match for match in words if match.group().lower() not in known]
        score = 1.0 - len(unsupported) / len(words) if words else 1.0
        results.append({"score": score, "spans": [[match.start(), match.end()] for match in unsupported]})
    return results
