"""factlab.batching: length_batches and width_batches, each limit worked by hand."""

from __future__ import annotations

import pytest

from factlab.batching import length_batches, padded_width, width_batches


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


def test_a_rows_padded_width_depends_on_its_length_alone() -> None:
    # steps of 8 up to 128 pieces, 16 up to 256, 32 beyond; never past the model's limit unless the row is longer
    assert [padded_width(n) for n in (1, 8, 9, 64, 127, 128, 129, 256, 257, 480, 481)] == [
        8,
        8,
        16,
        64,
        128,
        128,
        144,
        256,
        288,
        480,
        512,
    ]
    assert padded_width(500, limit=510) == 510 and padded_width(600, limit=512) == 600
    assert max((padded_width(n) - n) / n for n in range(65, 4096)) <= 0.125
    with pytest.raises(ValueError, match="at least one piece"):
        padded_width(0)


def test_width_batches_hold_rows_of_one_width_within_the_budget() -> None:
    lengths = [5, 50, 7, 12, 40, 3, 33, 8, 130]
    batches = width_batches(lengths, max_rows=3, token_budget=100)
    # widths: 3,5,7,8 -> 8; 12 -> 16; 33,40 -> 40; 50 -> 56; 130 -> 144 (over the budget: alone)
    # budget 100: 12 rows of 8 (max_rows 3 binds), 6 of 16, 2 of 40, 1 of 56, 1 of 144
    assert batches == [([5, 0, 2], 8), ([7], 8), ([3], 16), ([6, 4], 40), ([1], 56), ([8], 144)]
    assert all(len({padded_width(lengths[i]) for i in rows}) == 1 for rows, _ in batches)
