"""The canonical benchmark schema, checked before any parquet is written."""

from __future__ import annotations

import pandas as pd

from factlab.errors import DataError

# Every benchmark has these; `label` is 1 = consistent/supported, 0 = not, <NA> when only a
# continuous judgment exists.
REQUIRED_COLUMNS: tuple[str, ...] = ("example_id", "doc_id", "system", "split", "source", "output", "label")
TEXT_COLUMNS: tuple[str, ...] = ("example_id", "doc_id", "system", "split", "source", "output")


def _first_bad(frame: pd.DataFrame, mask: pd.Series) -> str:
    return str(frame.loc[mask.to_numpy(), "example_id"].iloc[0]) if "example_id" in frame else str(mask.idxmax())


def validate_benchmark(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """Check `frame` against the canonical schema and return it with canonical dtypes.

    Raises DataError naming the benchmark, the first offending example_id and the field.
    """
    where = f"benchmark {name}"
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"missing required column(s) {missing}", file=where, field=missing[0])
    if frame.empty:
        raise DataError("benchmark has no rows", file=where)
    out = frame.copy()
    for column in TEXT_COLUMNS:
        nulls = out[column].isna()
        if nulls.any():
            raise DataError("null value in a required text column", file=where, record=_first_bad(out, nulls), field=column)
        not_str = ~out[column].map(lambda v: isinstance(v, str))
        if not_str.any():
            raise DataError("value is not a string", file=where, record=_first_bad(out, not_str), field=column)
    dupes = out["example_id"].duplicated()
    if dupes.any():
        raise DataError("duplicate example_id", file=where, record=_first_bad(out, dupes), field="example_id")
    label = pd.to_numeric(out["label"], errors="coerce")
    unparseable = label.isna() & out["label"].notna()
    out_of_range = label.notna() & ~label.isin([0, 1])
    bad = unparseable | out_of_range
    if bad.any():
        value = out.loc[bad.to_numpy(), "label"].iloc[0]
        raise DataError(f"label {value!r} is not 0, 1 or null", file=where, record=_first_bad(out, bad), field="label")
    out["label"] = label.astype("Int8")
    if "human_score" in out:
        score = pd.to_numeric(out["human_score"], errors="coerce")
        bad_score = score.isna() & out["human_score"].notna()
        if bad_score.any():
            raise DataError("human_score is not numeric", file=where, record=_first_bad(out, bad_score), field="human_score")
        out["human_score"] = score.astype("float64")
    for column in TEXT_COLUMNS:
        out[column] = out[column].astype("string")
    return out.reset_index(drop=True)


def validate_table(frame: pd.DataFrame, name: str, required: tuple[str, ...], unique: tuple[str, ...]) -> pd.DataFrame:
    """Validate a non-benchmark table (published scores, side tables): columns and a unique key."""
    where = f"table {name}"
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise DataError(f"missing required column(s) {missing}", file=where, field=missing[0])
    if frame.empty:
        raise DataError("table has no rows", file=where)
    if unique:
        dupes = frame.duplicated(list(unique))
        if dupes.any():
            row = frame.loc[dupes.to_numpy(), list(unique)].iloc[0].to_dict()
            raise DataError(f"duplicate key {row}", file=where, field=",".join(unique))
    return frame.reset_index(drop=True)
