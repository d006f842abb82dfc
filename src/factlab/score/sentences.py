"""What every scorer does with the preprocess stage's sentences: group them by owner, aggregate over them.

Kept free of torch and spaCy: the rouge baseline and the merge of shards import it too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from factlab.text.sentences import Sentence

AGGREGATIONS = ("mean", "min")  # over output sentences: mean support, or the least supported sentence


def sentences_by_owner(sentences: pd.DataFrame, side: str, owner: str) -> dict[str, list[Sentence]]:
    rows = sentences[sentences["side"] == side].sort_values([owner, "sentence_index"])
    grouped: dict[str, list[Sentence]] = {}
    for key, text, start, end in zip(rows[owner], rows["text"], rows["start"], rows["end"], strict=True):
        grouped.setdefault(str(key), []).append(Sentence(str(text), int(start), int(end)))
    return grouped


def aggregate(values: Sequence[float], aggregation: str) -> float:
    if not values:
        return float("nan")
    return float(np.mean(values) if aggregation == "mean" else np.min(values))
