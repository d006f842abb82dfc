"""SummaC benchmark (Laban et al., 2022): validation cuts of 4 of its 6 sets, from summac PR 15.

`data/<set>.json` maps ids such as `xsumfaith_0` to records built by SummaC's own loaders
(`summac/benchmark.py`), with the document included. One row per record: source = `document`,
output = `claim` (the summary), label = SummaC's `label`, already 1 = consistent:
- xsumfaith: 1 when the most frequent hallucination type among the annotation rows is "NULL";
  `annotations` has one entry per annotation row, 1 = no hallucination (not one per worker).
- polytope: 1 when the summary has no annotated error (`overall_label`); the per-type
  `*_label` columns are 1 when the summary has no error of that type; `errors` lists them.
- factcc: FactCC's human CORRECT/INCORRECT label; `annotations` = [label].
- summeval: 1 when most of the 3 experts gave consistency 5; `annotations` are their 1-5
  scores and human_score is their mean (1-5 scale, SummEval's).
split = SummaC's `cut` ("val" becomes "validation"). factcc records carry no cut: SummaC reads
them from FactCC's annotated `val` file, so they are "validation" too (counted in
`cut_missing_assumed_validation`). doc_id is a short sha1 of the document (the sets have no
common document id); upstream ids are kept (`bbcid`, `cnndm_id`, `upstream_id`, `filepath`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.data.ids import text_doc_id
from factlab.data.readers import read_json, require
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

SUMMAC_SETS = ("xsumfaith", "polytope", "factcc", "summeval")
CUTS = {"val": "validation", "test": "test"}
RENAMED = {"model_name": "system", "ID": "upstream_id", "id": "upstream_id"}
CONSUMED = ("document", "claim", "label", "cut", "dataset")


def parse_label(record: dict[str, Any], *, file: Path, record_id: str) -> int:
    label = require(record, "label", file=file, record_id=record_id)
    if isinstance(label, bool) or label not in (0, 1):
        raise DataError(f"label {label!r} is not 0 or 1", file=file, record=record_id, field="label")
    return int(label)


def parse_split(record: dict[str, Any], *, file: Path, record_id: str) -> str | None:
    """The split of a record, or None when it has no cut (factcc)."""
    if "cut" not in record:
        return None
    cut = record["cut"]
    if cut not in CUTS:
        raise DataError(f"cut {cut!r} is not val or test", file=file, record=record_id, field="cut")
    return CUTS[cut]


def adapt_record(summac_set: str, record_id: str, record: dict[str, Any], file: Path) -> dict[str, Any]:
    document = require(record, "document", file=file, record_id=record_id)
    claim = require(record, "claim", file=file, record_id=record_id)
    if record.get("dataset", summac_set) != summac_set:
        raise DataError(f"record belongs to {record['dataset']!r}", file=file, record=record_id, field="dataset")
    row: dict[str, Any] = {
        "example_id": f"summac-{record_id}",
        "doc_id": text_doc_id(f"summac_{summac_set}", document),
        "system": "unknown",
        "split": parse_split(record, file=file, record_id=record_id) or "validation",
        "source": document,
        "output": claim,
        "label": parse_label(record, file=file, record_id=record_id),
    }
    for field, value in record.items():
        if field not in CONSUMED:
            row[RENAMED.get(field, field)] = value
    if summac_set == "summeval":
        scores = require(record, "annotations", file=file, record_id=record_id)
        if not scores or not all(isinstance(s, (int, float)) and 1 <= s <= 5 for s in scores):
            raise DataError(f"expert scores {scores!r} are not in 1-5", file=file, record=record_id, field="annotations")
        row["human_score"] = sum(scores) / len(scores)
    return row


def adapt_summac(raw: RawFiles, summac_set: str) -> Built:
    path = raw.path("summac_benchmark_pr15_subset", f"data/{summac_set}.json")
    records = read_json(path)
    if not isinstance(records, dict):
        raise DataError("expected a JSON object of id -> record", file=path)
    rows = []
    missing_cut = 0
    for record_id, record in records.items():
        if not isinstance(record, dict):
            raise DataError("record is not an object", file=path, record=record_id)
        missing_cut += "cut" not in record
        rows.append(adapt_record(summac_set, record_id, record, path))
    return Built(pd.DataFrame(rows), {"read": len(rows), "cut_missing_assumed_validation": missing_cut})


SPECS = [
    BenchmarkSpec(
        name=f"summac_{summac_set}",
        datasets=("summac_benchmark_pr15_subset",),
        build=partial(adapt_summac, summac_set=summac_set),
        description=f"SummaC benchmark {summac_set}, validation cut, 1 = consistent",
    )
    for summac_set in SUMMAC_SETS
]
