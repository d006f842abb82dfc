"""Leakage between training text and evaluated text: shared runs of `n` words (default 8).

Words are lower-cased `\\w+` runs (factlab.text.words.overlap_words), so punctuation, case and spacing
differences do not hide a copy. Every source and output of every evaluation benchmark (built-in and custom) is
indexed; a training pair leaks when its premise or its claim shares any n-word run with that index. The mixture
builder drops leaking pairs (counted per origin); the leakage check rule re-reads the finished mixture and fails
the build if any pair still leaks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd
from tqdm import tqdm

from factlab.text.words import overlap_words

DEFAULT_N = 8


def runs_in_order(text: str, n: int = DEFAULT_N) -> list[int]:
    """Hashes of the text's distinct runs of n consecutive words, in the order they first occur.

    Python's string hash is salted per process: the hashes are compared within one process only, and
    nothing may depend on their order (a set's), or a report would change from run to run.
    """
    tokens = overlap_words(text)
    return list(dict.fromkeys(hash(" ".join(tokens[i : i + n])) for i in range(len(tokens) - n + 1)))


def shingles(text: str, n: int = DEFAULT_N) -> set[int]:
    """Hashes of every run of n consecutive words (a text shorter than n words has none)."""
    return set(runs_in_order(text, n))


@dataclass
class EvaluationIndex:
    n: int
    runs: dict[int, str] = field(default_factory=dict)  # run hash -> the benchmark it came from (first seen)

    @classmethod
    def build(cls, texts_by_benchmark: Iterable[tuple[str, Iterable[str]]], n: int = DEFAULT_N) -> EvaluationIndex:
        index = cls(n)
        for benchmark, texts in texts_by_benchmark:
            for text in dict.fromkeys(texts):  # each distinct text once, in a fixed order
                for run in shingles(text, n):
                    index.runs.setdefault(run, benchmark)
        return index

    def leaks(self, text: str) -> str | None:
        """The benchmark of the text's first run (in word order) that an evaluated text shares, or None."""
        for run in runs_in_order(text, self.n):
            found = self.runs.get(run)
            if found is not None:
                return found
        return None


def evaluation_texts(frames: dict[str, pd.DataFrame]) -> list[tuple[str, list[str]]]:
    """(benchmark, its distinct sources and outputs) for each evaluation benchmark frame."""
    return [
        (name, list(dict.fromkeys([*frame["source"].astype(str), *frame["output"].astype(str)])))
        for name, frame in sorted(frames.items())
    ]


def leaking_rows(pairs: pd.DataFrame, index: EvaluationIndex, progress: bool = True) -> pd.Series:
    """Per row of `pairs` (text_a, text_b): the evaluation benchmark it leaks into, or <NA>."""
    verdicts: dict[str, str | None] = {}
    found = []
    rows = zip(pairs["text_a"], pairs["text_b"], strict=True)
    for text_a, text_b in tqdm(rows, total=len(pairs), desc="leakage", disable=not progress, mininterval=10):
        for text in (text_a, text_b):
            if text not in verdicts:
                verdicts[text] = index.leaks(text)
        found.append(verdicts[text_a] or verdicts[text_b])
    return pd.Series(found, index=pairs.index, dtype="string")
