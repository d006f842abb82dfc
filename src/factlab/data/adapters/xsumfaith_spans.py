"""XSumFaith hallucinated spans (Maynez et al., 2020) as gold tokens for token-level localisation.

`hallucination_annotations_xsum_summaries.csv` has one row per (BBC article, system, worker,
marked span): 500 articles x 5 summaries (the 4 systems and the reference, `Gold`), 3 workers each
(one summary has 2). A worker who marked nothing has one row with type `NULL` and offsets -1.
This table (kind "table", not a canonical benchmark: it is never preprocessed or scored itself)
has one row per summary; the scores to localise come from the `xsumfaith` benchmark, whose
`example_id`s (`xsumfaith-<bbcid>-<system>`) this table shares.

Upstream conventions, converted here once:

- The summary text escapes apostrophes (`world\\'s`); they are unescaped. `hallucinated_span_start`
  and `_end` index the unescaped text from 1 with the end exclusive: the span is
  `text[start - 1:end - 1]` (true of 10,358 of the 10,397 marked spans). In the other 39 the span
  text carries a literal "\\n" of the annotation page and start is 0: the marker is dropped and the
  span is the one place its text occurs in the summary (`spans_located_by_text`). A span found
  neither way is an error naming the file, row and field.
- Rows repeated verbatim (33) are counted once (`duplicate_rows`); a `NULL` row of a worker who
  also marked spans (11 workers) is ignored (`null_rows_beside_spans`).
- Where the factuality file (the `xsumfaith` benchmark's `output`) writes a summary differently
  (2 summaries, quotation marks dropped), the spans are carried over to that text by a character
  alignment (difflib) so that scored sentence offsets and tokens refer to one text
  (`outputs_aligned_to_factuality`).

Tokens are runs of word characters or of other non-space characters (`\\w+|[^\\w\\s]+`), with
[start, end) offsets in `output` (`token_offsets`): a span ending before a full stop leaves the stop
out. A token is marked by a worker when any of its characters lies in one of the worker's spans.
Labels follow the canonical convention, 1 = supported (consistent), 0 = hallucinated:
`worker_token_labels` per worker (order of `worker_ids`), `token_labels` the majority (0 when a
strict majority of the summary's workers marked the token). `worker_spans` keeps each worker's
[start, end, type] in `output`.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from factlab.data.adapters.xsumfaith import PAIR_KEY, SYSTEMS, read_factuality
from factlab.data.readers import read_text_csv
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

SPANS_FILE = "hallucination_annotations_xsum_summaries.csv"
SPAN_SYSTEMS = (*SYSTEMS, "Gold")
WORKERS = ("wid_0", "wid_1", "wid_2")
SPAN_TYPES = ("intrinsic", "extrinsic")
NO_SPAN = "NULL"
COLUMNS = (
    "bbcid",
    "system",
    "summary",
    "hallucination_type",
    "hallucinated_span",
    "hallucinated_span_start",
    "hallucinated_span_end",
    "worker_id",
)
TOKEN = re.compile(r"\w+|[^\w\s]+")
# The annotation page's line break, written into 39 span texts as backslash + "n".
NEWLINE_MARKER = "\\n"
TABLE_COLUMNS = (
    "example_id",
    "doc_id",
    "system",
    "split",
    "output",
    "tokens",
    "token_offsets",
    "token_labels",
    "worker_ids",
    "worker_token_labels",
    "worker_spans",
    "n_workers",
    "n_tokens",
    "n_unsupported_tokens",
    "in_factuality_file",
)


def unescape(text: str) -> str:
    return text.replace("\\'", "'")


def tokenize(text: str) -> list[tuple[str, int, int]]:
    """(token, start, end) of every word-character run and every run of other non-space characters."""
    return [(match.group(), match.start(), match.end()) for match in TOKEN.finditer(text)]


def read_spans(path: Path) -> pd.DataFrame:
    """The span file with its columns checked; `row` is the file's row number (header = 1)."""
    table = read_text_csv(path)
    missing = [column for column in COLUMNS if column not in table.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}", file=path, field=missing[0])
    table["row"] = np.arange(len(table)) + 2
    for column, allowed in (("system", SPAN_SYSTEMS), ("worker_id", WORKERS), ("hallucination_type", (*SPAN_TYPES, NO_SPAN))):
        bad = ~table[column].isin(allowed)
        if bad.any():
            first = table[bad].iloc[0]
            raise DataError(
                f"{column} {first[column]!r} is not one of {list(allowed)}", file=path, record=f"row {first['row']}", field=column
            )
    for column in ("hallucinated_span_start", "hallucinated_span_end"):
        bad = ~table[column].str.fullmatch(r"-?\d+")
        if bad.any():
            first = table[bad].iloc[0]
            raise DataError(
                f"{column} {first[column]!r} is not an integer", file=path, record=f"row {first['row']}", field=column
            )
        table[column] = table[column].astype(int)
    return table


def locate_span(text: str, row: Mapping[str, Any], *, file: Path) -> tuple[int, int, bool]:
    """[start, end) of one marked span in the unescaped `text`, and whether it was found by its text."""
    span = unescape(row["hallucinated_span"])
    start, end = int(row["hallucinated_span_start"]) - 1, int(row["hallucinated_span_end"]) - 1
    if 0 <= start < end <= len(text) and text[start:end] == span:
        return start, end, False
    bare = span.replace(NEWLINE_MARKER, "")
    if span != bare and bare and text.count(bare) == 1:
        start = text.index(bare)
        return start, start + len(bare), True
    raise DataError(
        f"span {span!r} is neither at [{start + 1}, {end + 1}) (1-based) nor once in the summary",
        file=file,
        record=f"row {row['row']}",
        field="hallucinated_span",
    )


def char_map(old: str, new: str) -> dict[int, int]:
    """Character positions of `old` that survive in `new` (difflib's matching blocks), old -> new."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return {a + k: b + k for a, b, size in matcher.get_matching_blocks() for k in range(size)}


def move_spans(spans: list[list], old: str, new: str) -> list[list]:
    """Spans [start, end, type] of `old` carried to `new`: from the first to the last surviving character."""
    mapping = char_map(old, new)
    moved = []
    for start, end, kind in spans:
        kept = [mapping[i] for i in range(start, end) if i in mapping]
        if kept:
            moved.append([min(kept), max(kept) + 1, kind])
    return moved


def token_marks(offsets: list[list[int]], spans: list[list]) -> list[int]:
    """1 for each token overlapping any span, else 0."""
    return [int(any(start < span_end and span_start < end for span_start, span_end, _ in spans)) for start, end in offsets]


def cuts_a_token(offsets: list[list[int]], start: int, end: int) -> bool:
    """Whether a span boundary falls inside a token (the token counts as marked all the same)."""
    return any(s < start < e or s < end < e for s, e in offsets)


def adapt_xsumfaith_spans(raw: RawFiles) -> Built:
    path = raw.path("xsumfaith", SPANS_FILE)
    table = read_spans(path)
    factuality = read_factuality(raw).groupby(PAIR_KEY, sort=False)["summary"].first()
    duplicates = table.duplicated(subset=list(COLUMNS))
    counts = {
        "read": len(table),
        "duplicate_rows": int(duplicates.sum()),
        "null_rows_beside_spans": 0,
        "spans": 0,
        "spans_located_by_text": 0,
        "outputs_aligned_to_factuality": 0,
        "spans_cutting_tokens": 0,
    }
    table = table[~duplicates]
    # Plain records grouped in Python: pandas indexing per summary and worker (7,500 groups) took 28 s of a 30 s build.
    by_summary: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for record in table.to_dict("records"):
        by_summary.setdefault(tuple(record[column] for column in PAIR_KEY), []).append(record)
    rows = []
    for key, group in by_summary.items():
        bbcid, system = key
        where = f"row {group[0]['row']}"
        summaries = {record["summary"] for record in group}
        if len(summaries) != 1:
            raise DataError("workers of one summary saw different texts", file=path, record=where, field="summary")
        text = unescape(summaries.pop())
        by_worker: dict[str, list[dict[str, Any]]] = {}
        for record in group:
            by_worker.setdefault(record["worker_id"], []).append(record)
        spans_by_worker: dict[str, list[list]] = {}
        for worker in sorted(by_worker):
            marks = by_worker[worker]
            marked = [record for record in marks if record["hallucination_type"] != NO_SPAN]
            nulls = [record for record in marks if record["hallucination_type"] == NO_SPAN]
            if any(record["hallucinated_span_start"] != -1 or record["hallucinated_span_end"] != -1 for record in nulls):
                raise DataError(
                    "a NULL row must have offsets -1", file=path, record=f"row {nulls[0]['row']}", field="hallucinated_span_start"
                )
            counts["null_rows_beside_spans"] += int(len(marked) > 0 and len(nulls) > 0)
            spans = []
            for mark in marked:
                start, end, by_text = locate_span(text, mark, file=path)
                counts["spans_located_by_text"] += by_text
                spans.append([start, end, mark["hallucination_type"]])
            spans_by_worker[str(worker)] = sorted(spans)
        output = text
        in_factuality = key in factuality.index
        if in_factuality and factuality[key] != text:
            output = factuality[key]
            spans_by_worker = {worker: move_spans(spans, text, output) for worker, spans in spans_by_worker.items()}
            counts["outputs_aligned_to_factuality"] += 1
        tokens = tokenize(output)
        if not tokens:
            raise DataError("summary has no tokens", file=path, record=where, field="summary")
        offsets = [[start, end] for _, start, end in tokens]
        workers = sorted(spans_by_worker)
        marks = np.array([token_marks(offsets, spans_by_worker[worker]) for worker in workers])
        majority = 2 * marks.sum(axis=0) > len(workers)
        for spans in spans_by_worker.values():
            counts["spans"] += len(spans)
            counts["spans_cutting_tokens"] += sum(cuts_a_token(offsets, span[0], span[1]) for span in spans)
        rows.append(
            {
                "example_id": f"xsumfaith-{bbcid}-{system}",
                "doc_id": bbcid,
                "system": system,
                "split": "test",
                "output": output,
                "tokens": json.dumps([token for token, _, _ in tokens], ensure_ascii=False),
                "token_offsets": json.dumps(offsets),
                "token_labels": json.dumps([int(not flag) for flag in majority]),
                "worker_ids": json.dumps(workers),
                "worker_token_labels": json.dumps([[1 - int(flag) for flag in row] for row in marks]),
                "worker_spans": json.dumps([spans_by_worker[worker] for worker in workers]),
                "n_workers": len(workers),
                "n_tokens": len(tokens),
                "n_unsupported_tokens": int(majority.sum()),
                "in_factuality_file": in_factuality,
            }
        )
    frame = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    counts.update(
        summaries=len(frame),
        articles=int(frame["doc_id"].nunique()),
        summaries_in_factuality_file=int(frame["in_factuality_file"].sum()),
        summaries_with_two_workers=int((frame["n_workers"] == 2).sum()),
        tokens=int(frame["n_tokens"].sum()),
        unsupported_tokens=int(frame["n_unsupported_tokens"].sum()),
        summaries_with_unsupported_token=int((frame["n_unsupported_tokens"] > 0).sum()),
    )
    return Built(frame, counts)


SPECS = [
    BenchmarkSpec(
        name="xsumfaith_spans",
        datasets=("xsumfaith",),
        build=adapt_xsumfaith_spans,
        kind="table",
        required=TABLE_COLUMNS,
        unique=("example_id",),
        description="XSumFaith hallucinated spans of 3 workers as per-token gold labels (5 systems incl. Gold)",
    )
]
