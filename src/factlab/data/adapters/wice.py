"""WiCE (Kamoi et al., 2023): Wikipedia claims against the web pages they cite.

Every record carries `evidence`, the cited page as a list of sentences (13 to 2,417 of them;
the first may be "(meta data) TITLE: ..." lines, and a few are empty or keep outer spaces), and
`supporting_sentences`, alternative sets of evidence indices (`[[]]` or a set after `[]` for
not_supported claims). `source` is the evidence sentences, verbatim, joined with one space;
`evidence_offsets` (a JSON string) holds each sentence's [start, end) character offsets in
`source`, so `source[start:end]` is sentence i and later code can map source sentences back to
WiCE's indices. `supporting_sentences` is kept as a JSON string too. `meta.id` ("dev02986",
"train31212-2") gives the example ids (`wice-<id>`; it must start with the file's split), and
the Wikipedia context is kept (`claim_title`, `claim_section`, `claim_context`). A record whose
evidence is empty is an error (nothing to check the claim against): none is.

Two benchmarks:

- `wice_claims` (evaluation): `data/entailment_retrieval/claim/{dev,test}.jsonl`, one row per
  claim -> `output`. label = 1 iff `supported`; partially_supported and not_supported are 0, and
  the 3-way label is kept as `wice_label` (a group column). doc_id = `text_doc_id("wice", source)`
  as for other evaluation benchmarks; `system` is "wikipedia" (the claims are Wikipedia sentences
  written by its editors, not model outputs).
- `wice_subclaims` (training): `data/non_supported_tokens/train.jsonl` only (its dev/test files are
  evaluation material for token localisation: the `wice_tokens` benchmark, factlab.data.adapters.wice_tokens).
  One row per subclaim (a Claim-Split decomposition of a train claim): evidence -> `source`, subclaim -> `output`.
  The record holds the subclaim's own untokenised text (`claim`), used as is (outer spaces
  stripped) rather than detokenising `claim_tokens`; each token must be found in it in order
  (`token_offsets`: JSON [start, end) in `output`). `non_supported_spans` (true = unsupported
  token) is kept as JSON with `n_tokens` and `n_unsupported_tokens`; label = 0 when any token is
  unsupported, else 1, nli_label not_entailment / entailment. Upstream annotated tokens only for
  subclaims judged partially_supported, so every row has an unsupported token: all labels are 0.
  doc_id is the NLI premise hash, as for the other training corpora; `claim_id` is the parent
  claim's id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.data.adapters.nli import nli_row, nli_spec
from factlab.data.ids import text_doc_id
from factlab.data.readers import iter_jsonl, require
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

DATASET = "wice"
CLAIM_LABELS = {"supported": 1, "partially_supported": 0, "not_supported": 0}
META_KEPT = ("claim_title", "claim_section", "claim_context")


def non_empty_text(record: dict[str, Any], field: str, *, file: Path, where: str) -> str:
    value = require(record, field, file=file, record_id=where)
    if not isinstance(value, str) or not value.strip():
        raise DataError("not a non-empty string", file=file, record=where, field=field)
    return value


def wice_id(record: dict[str, Any], split: str, *, file: Path, where: str) -> tuple[str, dict[str, Any]]:
    """`meta.id` (which must name the file's split) and the `meta` object."""
    meta = require(record, "meta", file=file, record_id=where)
    if not isinstance(meta, dict):
        raise DataError("meta is not an object", file=file, record=where, field="meta")
    value = require(meta, "id", file=file, record_id=where)
    if not isinstance(value, str) or not value.startswith(split):
        raise DataError(f"id {value!r} does not name split {split!r}", file=file, record=where, field="meta.id")
    return value, meta


def join_evidence(record: dict[str, Any], *, file: Path, where: str) -> tuple[str, list[list[int]]]:
    """`source` (the evidence sentences joined with " ") and each sentence's [start, end) in it."""
    sentences = require(record, "evidence", file=file, record_id=where)
    if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
        raise DataError("evidence is not a list of strings", file=file, record=where, field="evidence")
    source = " ".join(sentences)
    if not source.strip():
        raise DataError("evidence is empty", file=file, record=where, field="evidence")
    offsets, start = [], 0
    for sentence in sentences:
        offsets.append([start, start + len(sentence)])
        start += len(sentence) + 1
    return source, offsets


def supporting_sets(record: dict[str, Any], n_sentences: int, *, file: Path, where: str) -> list[list[int]]:
    """`supporting_sentences`: lists of evidence indices, each index within the evidence."""
    value = require(record, "supporting_sentences", file=file, record_id=where)
    valid = isinstance(value, list) and all(
        isinstance(group, list) and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n_sentences for i in group)
        for group in value
    )
    if not valid:
        raise DataError(
            f"not a list of lists of evidence indices (0-{n_sentences - 1})",
            file=file,
            record=where,
            field="supporting_sentences",
        )
    return value


def adapt_wice_claims(raw: RawFiles) -> Built:
    rows = []
    for split in ("dev", "test"):
        path = raw.path(DATASET, f"data/entailment_retrieval/claim/{split}.jsonl")
        for line_no, record in iter_jsonl(path):
            where = f"line {line_no}"
            upstream_id, meta = wice_id(record, split, file=path, where=where)
            claim = non_empty_text(record, "claim", file=path, where=where)
            label = require(record, "label", file=path, record_id=where)
            if label not in CLAIM_LABELS:
                raise DataError(f"label {label!r} is not one of {sorted(CLAIM_LABELS)}", file=path, record=where, field="label")
            source, offsets = join_evidence(record, file=path, where=where)
            supporting = supporting_sets(record, len(offsets), file=path, where=where)
            rows.append(
                {
                    "example_id": f"wice-{upstream_id}",
                    "doc_id": text_doc_id(DATASET, source),
                    "system": "wikipedia",
                    "split": split,
                    "source": source,
                    "output": claim,
                    "label": CLAIM_LABELS[label],
                    "wice_label": label,
                    "supporting_sentences": json.dumps(supporting),
                    "evidence_offsets": json.dumps(offsets),
                    "wice_id": upstream_id,
                    **{key: meta.get(key) for key in META_KEPT},
                }
            )
    frame = pd.DataFrame(rows)
    counts = {"read": len(frame)}
    for (split, label), n in frame.groupby(["split", "wice_label"]).size().items():
        counts[f"read_{split}_{label}"] = int(n)
    return Built(frame, counts)


def token_offsets(text: str, tokens: list[str], *, file: Path, where: str) -> list[list[int]]:
    """[start, end) of each token in `text`, found in order with only whitespace between them."""
    offsets, position = [], 0
    for index, token in enumerate(tokens):
        start = text.find(token, position) if token else -1
        if start < 0 or text[position:start].strip():
            raise DataError(
                f"token {index} {token!r} is not next in the claim text", file=file, record=where, field="claim_tokens"
            )
        position = start + len(token)
        offsets.append([start, position])
    if text[position:].strip():
        raise DataError("the claim text goes on after the last token", file=file, record=where, field="claim_tokens")
    return offsets


def checked_tokens(record: dict[str, Any], *, file: Path, where: str) -> tuple[list[str], list[bool]]:
    """`claim_tokens` (a non-empty list of strings) and the parallel `non_supported_spans` (true/false)."""
    tokens = require(record, "claim_tokens", file=file, record_id=where)
    unsupported = require(record, "non_supported_spans", file=file, record_id=where)
    if not isinstance(tokens, list) or not tokens or not all(isinstance(t, str) for t in tokens):
        raise DataError("not a non-empty list of strings", file=file, record=where, field="claim_tokens")
    if not isinstance(unsupported, list) or not all(isinstance(flag, bool) for flag in unsupported):
        raise DataError("not a list of true/false", file=file, record=where, field="non_supported_spans")
    if len(unsupported) != len(tokens):
        raise DataError(
            f"{len(unsupported)} flags for {len(tokens)} tokens", file=file, record=where, field="non_supported_spans"
        )
    return tokens, unsupported


def adapt_wice_subclaims(raw: RawFiles) -> Built:
    path = raw.path(DATASET, "data/non_supported_tokens/train.jsonl")
    rows = []
    for line_no, record in iter_jsonl(path):
        where = f"line {line_no}"
        upstream_id, meta = wice_id(record, "train", file=path, where=where)
        subclaim = non_empty_text(record, "claim", file=path, where=where).strip()
        tokens, unsupported = checked_tokens(record, file=path, where=where)
        offsets = token_offsets(subclaim, tokens, file=path, where=where)
        source, evidence_offsets = join_evidence(record, file=path, where=where)
        supporting = supporting_sets(record, len(evidence_offsets), file=path, where=where)
        nli_label = "not_entailment" if any(unsupported) else "entailment"
        row = nli_row(f"wice-{upstream_id}", DATASET, "train", source, subclaim, nli_label, file=path, record=where)
        rows.append(
            row
            | {
                "n_tokens": len(tokens),
                "n_unsupported_tokens": sum(unsupported),
                "wice_label": record.get("label"),
                "claim_tokens": json.dumps(tokens),
                "non_supported_spans": json.dumps(unsupported),
                "token_offsets": json.dumps(offsets),
                "supporting_sentences": json.dumps(supporting),
                "evidence_offsets": json.dumps(evidence_offsets),
                "wice_id": upstream_id,
                "claim_id": upstream_id.rsplit("-", 1)[0],
                **{key: meta.get(key) for key in META_KEPT},
            }
        )
    frame = pd.DataFrame(rows)
    counts = {
        "read": len(frame),
        "tokens": int(frame["n_tokens"].sum()),
        "unsupported_tokens": int(frame["n_unsupported_tokens"].sum()),
        "claims": int(frame["claim_id"].nunique()),
    }
    return Built(frame, counts)


SPECS = [
    BenchmarkSpec(
        name="wice_claims",
        datasets=(DATASET,),
        build=adapt_wice_claims,
        role="evaluation",
        description="WiCE Wikipedia claims vs their cited web pages: supported vs partially / not supported",
        group_columns=("wice_label",),
    ),
    nli_spec(
        "wice_subclaims",
        (DATASET,),
        adapt_wice_subclaims,
        "WiCE train subclaims (partially supported) vs cited web pages, with unsupported-token flags",
    ),
]
