"""Batches of similar length for inference: the one way factlab groups texts or pairs before a model reads them.

Sorting by length keeps padding small, since a batch is padded to its longest row (on a CPU every padded position
costs as much as a real one). Training draws its batches differently, shuffled within length buckets
(`factlab.train.loop.bucketed_batches`), so that each epoch sees them in a new order.

A model's answer for a row depends on the width it is padded to, not only on its own tokens: the attention and
pooling sums run over the padded width, and CPU kernels block their sums by it (MiniLM in bf16 moves by 1e-3 when a
row of 50 pieces is padded to 66 instead of 50; fp32 by 2e-7). Which rows a batch holds does not change a row's
answer (checked on every row count from 1 to 64). So `width_batches` pads each row to a width that depends on its
own length alone (`padded_width`) and batches only rows of one width: a pair scores the same whatever is scored
beside it, alone or inside a file of thousands, in any order.
"""

from __future__ import annotations

from collections.abc import Sequence

# (up to this many pieces, round widths up to a multiple of this): at most 7 pieces of padding on a row of up to 64
# pieces, at most 12.5% on a longer one.
WIDTH_STEPS = ((128, 8), (256, 16))
LONG_WIDTH_STEP = 32


def padded_width(length: int, limit: int | None = None) -> int:
    """The width a row of `length` pieces is padded to, whatever else is batched with it: `length` rounded up to a
    step that grows with it (`WIDTH_STEPS`), at most `limit` (a model's maximum length) unless `length` exceeds it."""
    if length < 1:
        raise ValueError(f"a row has at least one piece, got {length}")
    step = next((step for bound, step in WIDTH_STEPS if length <= bound), LONG_WIDTH_STEP)
    width = -(-length // step) * step
    return max(length, min(width, limit)) if limit is not None else width


def width_batches(
    lengths: Sequence[int], max_rows: int, token_budget: int | None = None, limit: int | None = None
) -> list[tuple[list[int], int]]:
    """(rows, width) batches: the rows of each `padded_width` in order of (length, index), cut into batches of at most
    `max_rows` rows whose padded size (rows x width) fits `token_budget`; narrow widths first. A row wider than the
    budget is a batch of its own."""
    if max_rows < 1:
        raise ValueError(f"max_rows must be positive, got {max_rows}")
    by_width: dict[int, list[int]] = {}
    for index in sorted(range(len(lengths)), key=lambda index: (lengths[index], index)):
        by_width.setdefault(padded_width(lengths[index], limit), []).append(index)
    batches: list[tuple[list[int], int]] = []
    for width, rows in sorted(by_width.items()):
        per_batch = max_rows if token_budget is None else max(1, min(max_rows, token_budget // width))
        batches += [(rows[start : start + per_batch], width) for start in range(0, len(rows), per_batch)]
    return batches


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
