"""Batches of similar length for inference: the one way factlab groups texts or pairs before a model reads them.

Sorting by length keeps padding small, since a batch is padded to its longest row (on a CPU every padded position
costs as much as a real one). Training draws its batches differently, shuffled within length buckets
(`factlab.train.loop.bucketed_batches`), so that each epoch sees them in a new order.
"""

from __future__ import annotations

from collections.abc import Sequence


def length_batches(
    lengths: Sequence[int], max_rows: int, token_budget: int | None = None, max_padding: float | None = None
) -> list[list[int]]:
    """Indices sorted by length (ties by index), cut into consecutive batches of at most `max_rows` rows whose
    padded size (rows x longest) fits `token_budget` and whose padding is at most `max_padding` of their real
    tokens (each limit applies where given). A row longer than the budget is a batch of its own."""
    if max_rows < 1:
        raise ValueError(f"max_rows must be positive, got {max_rows}")
    order = sorted(range(len(lengths)), key=lambda index: (lengths[index], index))
    batches: list[list[int]] = []
    current: list[int] = []
    real = 0
    for index in order:
        longest = lengths[index]  # ascending: the newest row is the longest
        rows = len(current) + 1
        padded = rows * longest
        full = (
            rows > max_rows
            or (token_budget is not None and padded > token_budget)
            or (max_padding is not None and padded > (1 + max_padding) * (real + longest))
        )
        if current and full:
            batches.append(current)
            current, real = [], 0
        current.append(index)
        real += longest
    if current:
        batches.append(current)
    return batches
