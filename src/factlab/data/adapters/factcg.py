"""FactCG (Lei et al., 2025) CG2C-doc: document-level synthetic claims from graph-based generation.

`data/training_stage2/CG2C_doc.json` (one JSON object a line despite the `.json` name): `text_a`
the document -> `source`, `text_b` the claim -> `output`, `orig_label` 1 supported / 0 not ->
`label`, `nli_label` entailment / not_entailment. `task` is "bin_grounding" and `text_c` empty
throughout; neither is kept. No split upstream: every row is "train".

`text_b` holds a one-element list with the claim. The mirror README describes it as a
stringified list, but the mirrored file stores a real JSON list (and `orig_label` as a number, not
"1"/"0"). Both forms are accepted: a string is parsed safely (json, then ast.literal_eval, never
eval). Anything but exactly one non-empty string is an error naming the file, line and field.

The file repeats 8 lines verbatim (same document, claim and label): identical (source, output)
rows are kept once and counted in `dropped_duplicate` (2,068 read, 2,060 kept); the same pair
with two labels would be an error.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.data.adapters.nli import is_repeat, nli_row, nli_spec
from factlab.data.readers import iter_jsonl, require
from factlab.data.spec import Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

DATASET = "factcg"
LABELS = {"1": "entailment", "0": "not_entailment"}


def parse_claim(value: Any, *, file: Path, record: str) -> str:
    """The claim of `text_b`: a one-element list of a non-empty string, or that list's string form."""
    parsed = value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            try:
                parsed = ast.literal_eval(value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                parsed = None
    if not (isinstance(parsed, list) and len(parsed) == 1 and isinstance(parsed[0], str) and parsed[0].strip()):
        raise DataError(
            f"not a list of exactly one non-empty claim: {str(value)[:80]!r}", file=file, record=record, field="text_b"
        )
    return parsed[0]


def parse_label(value: Any, *, file: Path, record: str) -> str:
    """`orig_label` 1/0 (number or string) as an nli_label."""
    key = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else None
    if key not in LABELS:
        raise DataError(f"label {value!r} is not 1 or 0", file=file, record=record, field="orig_label")
    return LABELS[key]


def adapt_factcg(raw: RawFiles) -> Built:
    path = raw.path(DATASET, "data/training_stage2/CG2C_doc.json")
    rows = []
    first: dict[tuple[str, str], dict[str, Any]] = {}
    counts = {"read": 0, "read_label_1": 0, "read_label_0": 0, "dropped_duplicate": 0}
    for line_no, record in iter_jsonl(path):
        where = f"line {line_no}"
        document = require(record, "text_a", file=path, record_id=where)
        if not isinstance(document, str):
            raise DataError("document is not a string", file=path, record=where, field="text_a")
        claim = parse_claim(require(record, "text_b", file=path, record_id=where), file=path, record=where)
        nli_label = parse_label(require(record, "orig_label", file=path, record_id=where), file=path, record=where)
        counts["read"] += 1
        counts["read_label_1" if nli_label == "entailment" else "read_label_0"] += 1
        if is_repeat(first, (document, claim), nli_label, "document and claim", file=path, record=where, field="orig_label"):
            counts["dropped_duplicate"] += 1
            continue
        row = nli_row(f"factcg_cg2c_doc-{line_no:05d}", DATASET, "train", document, claim, nli_label, file=path, record=where)
        first[(document, claim)] = row
        rows.append(row)
    counts["documents"] = len({row["doc_id"] for row in rows})
    return Built(pd.DataFrame(rows), counts)


SPECS = [
    nli_spec(
        "factcg_cg2c_doc",
        (DATASET,),
        adapt_factcg,
        "FactCG CG2C-doc: documents vs graph-generated supported / unsupported claims (synthetic)",
    )
]
