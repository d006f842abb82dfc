"""Input checks shared by every meta-evaluation statistic, and explicit NaN dropping.

Statistics in factlab.metaeval never drop or repair values on their own: NaN, a length mismatch,
a constant vector or too few items raise `StatisticsError` with a message saying what to do.
Dropping incomplete rows is a separate, explicit step (`dropna_pairs`) that reports how many rows
it removed, so the count can go into a results file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from factlab.metaeval.errors import StatisticsError

FloatArray = NDArray[np.float64]


def as_float_vector(values: ArrayLike, name: str) -> FloatArray:
    """`values` as a 1-D float64 array (pandas <NA> becomes NaN); raises on anything else."""
    if hasattr(values, "to_numpy"):
        # pandas nullable dtypes (Int8 labels, Float64) need na_value to become plain floats.
        try:
            values = values.to_numpy(dtype=float, na_value=np.nan)  # type: ignore[union-attr]
        except (TypeError, ValueError) as error:
            raise StatisticsError(f"{name} is not numeric: {error}") from error
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as error:
        raise StatisticsError(f"{name} is not numeric: {error}") from error
    if array.ndim != 1:
        raise StatisticsError(f"{name} must be 1-dimensional, got shape {array.shape}")
    return array


def as_category_vector(values: ArrayLike, name: str) -> NDArray[Any]:
    """`values` as a 1-D array of category labels (any hashable type); missing values raise."""
    array = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values, dtype=object)  # type: ignore[union-attr]
    if array.ndim != 1:
        raise StatisticsError(f"{name} must be 1-dimensional, got shape {array.shape}")
    missing = pd.isna(array)
    if missing.any():
        raise StatisticsError(f"{name} has {int(missing.sum())} missing value(s); drop those rows explicitly first")
    return array


def require_same_length(**arrays: NDArray[Any]) -> int:
    """The common length of the named arrays; raises naming the lengths when they differ."""
    lengths = {name: len(array) for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise StatisticsError(f"length mismatch: {lengths}")
    return next(iter(lengths.values()))


def require_no_nan(array: FloatArray, name: str) -> None:
    """Raise if `array` holds NaN or infinity (use `dropna_pairs` to drop incomplete rows)."""
    n_nan = int(np.isnan(array).sum())
    if n_nan:
        raise StatisticsError(f"{name} has {n_nan} NaN value(s); drop them explicitly with dropna_pairs first")
    n_inf = int(np.isinf(array).sum())
    if n_inf:
        raise StatisticsError(f"{name} has {n_inf} infinite value(s)")


def require_min_n(n: int, minimum: int, what: str) -> None:
    """Raise if `n` items are fewer than `minimum` needed for `what`."""
    if n < minimum:
        raise StatisticsError(f"{what} needs at least {minimum} items, got {n}")


def require_not_constant(array: FloatArray, name: str) -> None:
    """Raise if all values are equal (a correlation with a constant is undefined)."""
    if len(array) and np.all(array == array[0]):
        raise StatisticsError(f"{name} is constant ({array[0]!r}): the statistic is undefined")


def paired_vectors(
    x: ArrayLike, y: ArrayLike, names: tuple[str, str] = ("x", "y"), minimum: int = 3
) -> tuple[FloatArray, FloatArray]:
    """Validate two paired score vectors: numeric, same length, no NaN, >= `minimum` items, not constant."""
    xs, ys = as_float_vector(x, names[0]), as_float_vector(y, names[1])
    n = require_same_length(**{names[0]: xs, names[1]: ys})
    require_no_nan(xs, names[0])
    require_no_nan(ys, names[1])
    require_min_n(n, minimum, "a correlation")
    require_not_constant(xs, names[0])
    require_not_constant(ys, names[1])
    return xs, ys


def binary_labels(y_true: ArrayLike, name: str = "y_true") -> NDArray[np.int64]:
    """Labels as an int array of 0/1 (1 = consistent); raises on NaN, other values or one class only."""
    labels = as_float_vector(y_true, name)
    require_no_nan(labels, name)
    bad = ~np.isin(labels, (0.0, 1.0))
    if bad.any():
        raise StatisticsError(f"{name} must hold only 0 and 1 (1 = consistent); found {labels[bad][0]!r}")
    if len(np.unique(labels)) < 2:
        raise StatisticsError(f"{name} holds only one class ({labels[0]:g}): the statistic needs both classes")
    return labels.astype(np.int64)


@dataclass(frozen=True)
class NanDropped:
    """Rows kept by `dropna_pairs`: the filtered arrays, the keep mask and how many rows were dropped."""

    arrays: tuple[NDArray[Any], ...]
    keep: NDArray[np.bool_]
    n_dropped: int

    @property
    def n_kept(self) -> int:
        return int(self.keep.sum())


def _missing_mask(values: ArrayLike) -> NDArray[np.bool_]:
    if hasattr(values, "isna"):
        return np.asarray(values.isna(), dtype=bool)  # type: ignore[union-attr]
    return np.asarray(pd.isna(np.asarray(values, dtype=object)), dtype=bool)


def dropna_pairs(x: ArrayLike, y: ArrayLike, *others: ArrayLike) -> NanDropped:
    """Drop every row where any of the aligned arrays is missing (NaN / None / <NA>), and count it.

    Pairwise deletion is the only NaN handling in factlab.metaeval, and it is explicit: the caller
    gets `n_dropped` to report. Arrays keep their dtype (`x` and
    `y` are returned as float64; `others`, e.g. document ids, as numpy arrays of their own type).
    """
    arrays = (x, y, *others)
    lengths = {f"array {i}": len(np.asarray(a, dtype=object)) for i, a in enumerate(arrays)}
    if len(set(lengths.values())) > 1:
        raise StatisticsError(f"length mismatch: {lengths}")
    masks = [_missing_mask(a) for a in arrays]
    keep = ~np.logical_or.reduce(masks)
    filtered: list[NDArray[Any]] = [as_float_vector(x, "x")[keep], as_float_vector(y, "y")[keep]]
    for other in others:
        values = other.to_numpy() if hasattr(other, "to_numpy") else np.asarray(other)  # type: ignore[union-attr]
        filtered.append(np.asarray(values)[keep])
    return NanDropped(
        arrays=tuple(filtered),
        keep=keep,
        n_dropped=int((~keep).sum()),
    )
