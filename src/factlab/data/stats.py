"""Dataset statistics: one row per benchmark and split."""

from __future__ import annotations

import pandas as pd

from factlab.text.words import whitespace_word_count


def word_counts(texts: pd.Series) -> pd.Series:
    """`whitespace_word_count` of each text; a missing text has none."""
    return texts.fillna("").map(whitespace_word_count)


def benchmark_statistics(name: str, frame: pd.DataFrame, dropped: int) -> pd.DataFrame:
    """Rows, documents, systems, positive share, mean source/output words per split.

    `dropped` (rows the adapter could not use) is reported on every split row of the benchmark,
    since upstream drops are not attributable to a split.
    """
    rows = []
    for split, part in frame.groupby("split", sort=True):
        labelled = part["label"].dropna()
        rows.append(
            {
                "benchmark": name,
                "split": split,
                "rows": len(part),
                "documents": part["doc_id"].nunique(),
                "systems": part["system"].nunique(),
                "positive_share": float(labelled.mean()) if len(labelled) else float("nan"),
                "mean_source_words": float(word_counts(part["source"]).mean()),
                "mean_output_words": float(word_counts(part["output"]).mean()),
                "dropped": dropped,
            }
        )
    return pd.DataFrame(rows)
