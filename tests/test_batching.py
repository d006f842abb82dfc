"""factlab.batching.length_batches, each limit worked by hand."""

from __future__ import annotations

import pytest

from factlab.batching import length_batches


def lengths_of(batches: list[list[int]], lengths: list[int]) -> list[list[int]]:
    return [[lengths[i] for i in batch] for batch in batches]


def test_rows_only_give_fixed_size_batches_in_length_order() -> None:
    lengths = [9, 2, 7, 2, 5]
    # sorted by (length, index): 1, 3, 4, 2, 0
    assert length_batches(lengths, max_rows=2) == [[1, 3], [4, 2], [0]]


def test_the_token_budget_bounds_rows_times_the_longest() -> None:
    lengths = [5, 50, 7, 12, 40, 3, 33, 8]
    batches = length_batches(lengths, max_rows=3, token_budget=60)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    # sorted 3,5,7 | 8,12 (8,12,33 would pad to 3 x 33 = 99 > 60) | 33 | 40 | 50
    assert lengths_of(batches, lengths) == [[3, 5, 7], [8, 12], [33], [40], [50]]


def test_padding_is_capped_as_a_share_of_the_real_tokens() -> None:
    lengths = [30, 5, 6, 29, 7, 512, 31]
    batches = length_batches(lengths, max_rows=2, token_budget=512, max_padding=0.25)
    # 5,6 | 7 (7 with 5,6 is past max_rows; 7 with 29 pads 58 > 1.25 x 36) | 29,30 | 31 | 512
    assert batches == [[1, 2], [4], [3, 0], [6], [5]]
    for batch in batches:
        padded, real = len(batch) * max(lengths[i] for i in batch), sum(lengths[i] for i in batch)
        assert padded <= 512 and padded <= 1.25 * real and len(batch) <= 2


def test_a_row_over_the_budget_is_a_batch_of_its_own() -> None:
    assert length_batches([100, 4, 4], max_rows=8, token_budget=16) == [[1, 2], [0]]


def test_rows_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_rows"):
        length_batches([1], max_rows=0)
