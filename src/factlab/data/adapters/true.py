"""TRUE (Honovich et al., 2022): 8 of its 11 binary consistency sets, as copied into SCALE's repo.

One row per (grounding, generated_text) pair of `data/true/<set>.csv`; label is TRUE's own
(1 = consistent, already canonical). The CSVs carry no document ids, so `doc_id` is a short
sha1 of the grounding text: outputs sharing a source share a doc_id. `system` comes from the
CSV's `model` column where there is one (frank, q2), else "unknown". Every other upstream column
is kept, renamed to snake_case (`id` becomes `upstream_id`, FRANK's `hash` `article_hash`).
fever, mnbm and vitc (> 4 MB) are not mirrored, so they have no benchmark here.

`example_id` is `true_<set>-<row>` with the CSV row position; SCALE's published TRUE scores
(`scale_published.py`) list examples in the same order, so they join on it.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import pandas as pd

from factlab.data.ids import text_doc_id
from factlab.data.readers import read_text_csv
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

MIRRORED_SETS = ("begin", "dialfact", "frank", "paws", "q2", "qags_cnndm", "qags_xsum", "summeval")
TEXT_FIELDS = {"grounding": "source", "generated_text": "output"}
# Row numbers written by pandas when SCALE saved the CSVs; the row position says the same.
INDEX_COLUMN = "Unnamed: 0"
RENAMED = {"model": "system", "id": "upstream_id", "hash": "article_hash"}


def true_example_id(true_set: str, row: int) -> str:
    return f"true_{true_set}-{row:05d}"


def snake_case(column: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", column.strip().lower()).strip("_")


def parse_labels(table: pd.DataFrame, path: Path) -> pd.Series:
    bad = ~table["label"].str.strip().isin(["0", "1"])
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        raise DataError(f"label {table['label'].iloc[row]!r} is not 0 or 1", file=path, record=f"row {row}", field="label")
    return table["label"].str.strip().astype(int)


def adapt_true(raw: RawFiles, true_set: str) -> Built:
    path = raw.path("true_benchmark_scale_copy", f"data/true/{true_set}.csv")
    table = read_text_csv(path)
    for column in (*TEXT_FIELDS, "label"):
        if column not in table.columns:
            raise DataError("missing column", file=path, record="header", field=column)
        empty = table[column].str.strip() == ""
        if empty.any():
            row = int(empty.to_numpy().nonzero()[0][0])
            raise DataError("empty value", file=path, record=f"row {row}", field=column)
    name = f"true_{true_set}"
    frame = pd.DataFrame(
        {
            "example_id": [true_example_id(true_set, row) for row in range(len(table))],
            "doc_id": [text_doc_id(name, text) for text in table["grounding"]],
            "system": "unknown",
            "split": "test",
            "source": table["grounding"],
            "output": table["generated_text"],
            "label": parse_labels(table, path),
        }
    )
    extra = [c for c in table.columns if c not in (*TEXT_FIELDS, "label", INDEX_COLUMN)]
    for column in extra:
        frame[RENAMED.get(column, snake_case(column))] = table[column]
    return Built(frame, {"read": len(table)})


SPECS = [
    BenchmarkSpec(
        name=f"true_{true_set}",
        datasets=("true_benchmark_scale_copy",),
        build=partial(adapt_true, true_set=true_set),
        description=f"TRUE {true_set} (SCALE's copy): grounding/generated_text pairs, 1 = consistent",
    )
    for true_set in MIRRORED_SETS
]
