"""QA-SRL training tables: the verbal QA-SRL gold standard (`qasrl_gs`) and nominal QANom (`qanom`).

One row per question-answer pair, in one layout for both (the columns in `COLUMNS`):
- `tokens` is the upstream tokenisation (the sentence split on single spaces); `sentence` is that text.
- `answer_ranges` are [start, end) token spans: both upstream READMEs define `answer_range` as
  INCLUSIVE_START:EXCLUSIVE_END, so `tokens[start:end]` is the answer. `answers` are those token
  strings re-joined with spaces, built from the tokens: the upstream `answer` strings lost
  non-ASCII characters ("Fundaci?n") or an "NA" token; such rows are counted
  (`answer_text_differs_upstream`), not dropped.
- The question template slots `wh, aux, subj, verb, obj, prep, obj2` are the upstream state-machine
  parse; "" is an empty slot. Upstream has no surface verb slot, only `verb_prefix` (e.g.
  "not~!~be") and `verb_slot_inflection` (e.g. "Past"); `verb` is their abstract combination
  ("not be Past"), in the spirit of QA-SRL Bank's "be pastParticiple"; both parts are kept too.
- `predicate` is the sentence token at `predicate_idx` (upstream lower-cases its copy; checked).
  `key` = `sentence_id + "_" + predicate_idx` (QANom's predicate key); `qa_id` = `key + "_q" + n`,
  n counting that predicate's rows in file order.
- `verb_form` is the verb lemma QANom gives; the QA-SRL gold standard gives none, so it is null there.
- `is_verbal`: True for every QA-SRL verb; QANom's predicate-detection label for nouns.

QANom also has one row per candidate noun without QAs (`question` = "", no answers): the
non-verbal candidates (negatives for a predicate detector) and verbal ones no QA was written for.
A few dev predicates labelled non-verbal still carry QAs; they are kept as upstream has them
(`qa_on_non_verbal_predicate`). QANom's train file repeats 38 rows verbatim (an export
artefact: whole sentences written twice); the repeats are dropped (`dropped_duplicate_row`).
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

MULTI_SEPARATOR = "~!~"  # upstream separator between answers, ranges and prefix words
SLOTS = ("wh", "aux", "subj", "verb", "obj", "prep", "obj2")
UPSTREAM_SLOTS = ("wh", "aux", "subj", "obj", "prep", "obj2", "verb_prefix", "verb_slot_inflection")
BOOLEANS = {"True": True, "False": False}
DOMAINS = ("wikinews", "wikipedia")
COLUMNS = (
    "qa_id",
    "key",
    "sentence_id",
    "split",
    "domain",
    "sentence",
    "tokens",
    "predicate_idx",
    "predicate",
    "verb_form",
    "is_verbal",
    "question",
    *SLOTS,
    "verb_prefix",
    "verb_slot_inflection",
    "is_passive",
    "is_negated",
    "answer_ranges",
    "answers",
    "worker_id",
)
REQUIRED = (
    "qa_id",
    "key",
    "sentence_id",
    "split",
    "domain",
    "sentence",
    "tokens",
    "predicate_idx",
    "predicate",
    "is_verbal",
    "question",
    "answer_ranges",
    "answers",
)
GS_COLUMNS = (
    "qasrl_id",
    "verb_idx",
    "verb",
    "worker_id",
    "question",
    "answer_range",
    "answer",
    "is_passive",
    "is_negated",
    *UPSTREAM_SLOTS,
)
QANOM_COLUMNS = (
    "qasrl_id",
    "sentence",
    "target_idx",
    "key",
    "noun",
    "worker_id",
    "is_verbal",
    "verb_form",
    "question",
    "answer_range",
    "answer",
    "is_passive",
    "is_negated",
    *UPSTREAM_SLOTS,
)
QANOM_ZIP = "qanom_dataset.zip"


def iter_csv(handle: TextIO, name: str | Path, columns: Iterable[str]) -> Iterator[tuple[str, dict[str, str]]]:
    """Yield ("line N", row) of a CSV whose header holds `columns` (in any order: QANom's differ)."""
    reader = csv.DictReader(handle)
    missing = sorted(set(columns) - set(reader.fieldnames or ()))
    if missing:
        raise DataError(f"CSV lacks columns {missing}", file=name, record="header")
    for row in reader:
        if None in row or any(value is None for value in row.values()):
            raise DataError("row has a different number of fields than the header", file=name, record=f"line {reader.line_num}")
        yield f"line {reader.line_num}", row


def parse_bool(value: str, *, file: str | Path, record: str, field: str) -> bool:
    if value not in BOOLEANS:
        raise DataError(f"{value!r} is not True/False", file=file, record=record, field=field)
    return BOOLEANS[value]


def parse_index(value: str, n_tokens: int, *, file: str | Path, record: str, field: str) -> int:
    if not value.isdigit() or int(value) >= n_tokens:
        raise DataError(f"{value!r} is not a token index of a {n_tokens}-token sentence", file=file, record=record, field=field)
    return int(value)


def parse_ranges(value: str, n_tokens: int, *, file: str | Path, record: str) -> list[list[int]]:
    """ "s:e~!~s:e" -> [[s, e], ...]; each must be a non-empty span inside the sentence."""
    spans = []
    for part in value.split(MULTI_SEPARATOR):
        start, _, end = part.partition(":")
        if not (start.isdigit() and end.isdigit() and 0 <= int(start) < int(end) <= n_tokens):
            raise DataError(
                f"answer range {part!r} is not start:end inside {n_tokens} tokens", file=file, record=record, field="answer_range"
            )
        spans.append([int(start), int(end)])
    return spans


def qa_fields(row: Mapping[str, str], tokens: list[str], *, file: str | Path, record: str) -> dict[str, Any]:
    """Question, slots and answers of one upstream row; empty when the row carries no QA."""
    has_qa = bool(row["question"])
    if has_qa != bool(row["answer_range"]):
        raise DataError(
            "question and answer_range must be both present or both empty", file=file, record=record, field="answer_range"
        )
    ranges = parse_ranges(row["answer_range"], len(tokens), file=file, record=record) if has_qa else []
    if has_qa and len(row["answer"].split(MULTI_SEPARATOR)) != len(ranges):
        raise DataError("answer and answer_range have different numbers of spans", file=file, record=record, field="answer")
    prefix = [word for word in row["verb_prefix"].split(MULTI_SEPARATOR) if word]
    slots = {slot: row[slot] for slot in ("wh", "aux", "subj", "obj", "prep", "obj2")}
    return {
        "question": row["question"],
        **slots,
        "verb": " ".join([*prefix, row["verb_slot_inflection"]]).strip() if has_qa else "",
        "verb_prefix": " ".join(prefix),
        "verb_slot_inflection": row["verb_slot_inflection"],
        "is_passive": parse_bool(row["is_passive"], file=file, record=record, field="is_passive"),
        "is_negated": parse_bool(row["is_negated"], file=file, record=record, field="is_negated"),
        "answer_ranges": ranges,
        "answers": [" ".join(tokens[start:end]) for start, end in ranges],
        "answer_text_differs_upstream": has_qa
        and MULTI_SEPARATOR.join(" ".join(tokens[s:e]) for s, e in ranges) != row["answer"],
    }


def predicate_token(tokens: list[str], index: int, upstream: str, *, file: str | Path, record: str, field: str) -> str:
    """The sentence token at `index`; upstream's copy may differ in case only."""
    token = tokens[index]
    if token.lower() != upstream.lower():
        raise DataError(f"token {index} is {token!r}, upstream says {upstream!r}", file=file, record=record, field=field)
    return token


def number_qas(rows: list[dict[str, Any]]) -> None:
    """Give each row qa_id = key + "_q" + its rank among its predicate's rows (file order)."""
    seen: Counter[str] = Counter()
    for row in rows:
        row["qa_id"] = f"{row['key']}_q{seen[row['key']]}"
        seen[row["key"]] += 1


def finish(rows: list[dict[str, Any]], counts: dict[str, int]) -> Built:
    number_qas(rows)
    frame = pd.DataFrame(rows)
    frame["verb_form"] = frame["verb_form"].astype("string")  # all null for QA-SRL: keep it a text column
    counts["answer_text_differs_upstream"] = int(frame.pop("answer_text_differs_upstream").sum())
    counts.update({f"rows_{split}": int(n) for split, n in frame["split"].value_counts().sort_index().items()})
    counts["sentences"] = int(frame["sentence_id"].nunique())
    counts["predicates"] = int(frame["key"].nunique())
    counts["qas"] = int(frame["question"].ne("").sum())
    return Built(frame[list(COLUMNS)], counts)


def load_gs_sentences(raw: RawFiles, domain: str, split: str) -> dict[str, str]:
    path = raw.path("qasrl_gs", f"data/sentences/{domain}.{split}.full.csv")
    sentences: dict[str, str] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        for record, row in iter_csv(handle, path, ("qasrl_id", "tokens", "sentence")):
            if row["tokens"] != row["sentence"]:
                raise DataError("sentence differs from its space-joined tokens", file=path, record=record, field="sentence")
            if row["qasrl_id"] in sentences:
                raise DataError("duplicate sentence id", file=path, record=record, field="qasrl_id")
            sentences[row["qasrl_id"]] = row["tokens"]
    return sentences


def adapt_qasrl_gs(raw: RawFiles) -> Built:
    """QA-SRL gold standard: dev and test of Wikinews and Wikipedia, joined with sentence texts."""
    rows: list[dict[str, Any]] = []
    for domain in DOMAINS:
        for split in ("dev", "test"):
            sentences = load_gs_sentences(raw, domain, split)
            path = raw.path("qasrl_gs", f"data/gold/{domain}.{split}.gold.csv")
            with open(path, encoding="utf-8", newline="") as handle:
                for record, row in iter_csv(handle, path, GS_COLUMNS):
                    if row["qasrl_id"] not in sentences:
                        raise DataError("sentence id not in the sentences file", file=path, record=record, field="qasrl_id")
                    sentence = sentences[row["qasrl_id"]]
                    tokens = sentence.split(" ")
                    index = parse_index(row["verb_idx"], len(tokens), file=path, record=record, field="verb_idx")
                    rows.append(
                        {
                            "key": f"{row['qasrl_id']}_{index}",
                            "sentence_id": row["qasrl_id"],
                            "split": split,
                            "domain": domain,
                            "sentence": sentence,
                            "tokens": tokens,
                            "predicate_idx": index,
                            "predicate": predicate_token(tokens, index, row["verb"], file=path, record=record, field="verb"),
                            "verb_form": None,
                            "is_verbal": True,
                            **qa_fields(row, tokens, file=path, record=record),
                            "worker_id": row["worker_id"],
                        }
                    )
    if any(not row["question"] for row in rows):
        raise DataError("a gold QA-SRL row has no question", record="qasrl_gs", field="question")
    return finish(rows, {"read": len(rows)})


def qanom_domain(sentence_id: str, *, file: str, record: str) -> str:
    """The corpus named in the id ("Wiki1k:wikinews:1767148:1:1" -> "wikinews")."""
    parts = sentence_id.split(":")
    if len(parts) < 2 or parts[1] not in DOMAINS:
        raise DataError(f"sentence id {sentence_id!r} names no known domain", file=file, record=record, field="qasrl_id")
    return parts[1]


def qanom_row(row: Mapping[str, str], split: str, *, file: str, record: str) -> dict[str, Any]:
    tokens = row["sentence"].split(" ")
    index = parse_index(row["target_idx"], len(tokens), file=file, record=record, field="target_idx")
    key = f"{row['qasrl_id']}_{index}"
    if row["key"] != key:
        raise DataError(f"key {row['key']!r} is not qasrl_id_target_idx", file=file, record=record, field="key")
    return {
        "key": key,
        "sentence_id": row["qasrl_id"],
        "split": split,
        "domain": qanom_domain(row["qasrl_id"], file=file, record=record),
        "sentence": row["sentence"],
        "tokens": tokens,
        "predicate_idx": index,
        "predicate": predicate_token(tokens, index, row["noun"], file=file, record=record, field="noun"),
        "verb_form": row["verb_form"],
        "is_verbal": parse_bool(row["is_verbal"], file=file, record=record, field="is_verbal"),
        **qa_fields(row, tokens, file=file, record=record),
        "worker_id": row["worker_id"],
    }


def adapt_qanom(raw: RawFiles) -> Built:
    """QANom train/dev/test, read from inside the zip (nothing is extracted to disk)."""
    path = raw.path("qanom", QANOM_ZIP)
    rows: list[dict[str, Any]] = []
    counts = {"read": 0, "dropped_duplicate_row": 0}
    with zipfile.ZipFile(path) as archive:
        for split in ("train", "dev", "test"):
            member = f"annot.{split}.csv"
            name = f"{path}::{member}"
            seen: set[tuple[str, ...]] = set()
            with archive.open(member) as binary, io.TextIOWrapper(binary, encoding="utf-8", newline="") as handle:
                for record, row in iter_csv(handle, name, QANOM_COLUMNS):
                    counts["read"] += 1
                    counts[f"read_{split}"] = counts.get(f"read_{split}", 0) + 1
                    fingerprint = tuple(row.values())
                    if fingerprint in seen:  # a verbatim repeat adds no annotation
                        counts["dropped_duplicate_row"] += 1
                        continue
                    seen.add(fingerprint)
                    rows.append(qanom_row(row, split, file=name, record=record))
    counts["qa_on_non_verbal_predicate"] = sum(1 for row in rows if row["question"] and not row["is_verbal"])
    return finish(rows, counts)


def table_spec(name: str, dataset: str, build: Any, description: str) -> BenchmarkSpec:
    return BenchmarkSpec(
        name=name,
        datasets=(dataset,),
        build=build,
        kind="table",
        required=REQUIRED,
        unique=("qa_id",),
        role="training",
        description=description,
    )


SPECS = [
    table_spec("qasrl_gs", "qasrl_gs", adapt_qasrl_gs, "QA-SRL gold standard (verbal predicates): one row per QA, dev and test"),
    table_spec(
        "qanom", "qanom", adapt_qanom, "QANom (nominal predicates): one row per QA, plus one per candidate noun without QAs"
    ),
]
