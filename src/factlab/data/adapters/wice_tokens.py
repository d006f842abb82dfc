"""WiCE unsupported tokens (Kamoi et al., 2023), dev and test: a benchmark for token-level localisation.

`data/non_supported_tokens/{dev,test}.jsonl` hold subclaims (Claim-Split decompositions of WiCE
claims) judged partially supported, each with `claim_tokens` and a parallel boolean list
`non_supported_spans` (true = unsupported token); upstream annotated only partially supported
subclaims and kept those with high inter-annotator agreement, as one aggregated label per token
(no per-annotator labels). The train file is the `wice_subclaims` training corpus (factlab.data.adapters.wice).

One row per subclaim, in the canonical schema so that it can be preprocessed and scored: the
subclaim's own text -> `output` (outer spaces stripped; each token must be found in it in order,
`token_offsets` = [start, end) in `output`), its cited web page -> `source` (the record's own
`evidence` sentences joined with one space, `evidence_offsets` as in `wice_claims`). `tokens` and
`token_labels` are JSON lists; labels follow the canonical convention, 1 = supported, 0 = unsupported
(upstream `non_supported_spans` inverted). label = 1 iff no token is unsupported: 0 for every row.
doc_id = `text_doc_id("wice", source)`, the same id as the parent claim's row in `wice_claims`;
`system` = "claim_split" (the subclaims are machine decompositions, not the editors' sentences).

Each subclaim is joined to its parent claim in `data/entailment_retrieval/claim/<split>.jsonl` by
id (`meta.id` "dev02986-2" -> claim "dev02986"): `claim_label` (the claim's 3-way label) and
`claim` (its text). The subclaim records carry their evidence themselves; the join checks that it is
the claim's (`evidence_same_as_claim`). A subclaim without a parent claim keeps null claim fields and
is counted (`claims_not_joined`).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from factlab.data.adapters.wice import (
    DATASET,
    META_KEPT,
    checked_tokens,
    join_evidence,
    non_empty_text,
    supporting_sets,
    token_offsets,
    wice_id,
)
from factlab.data.ids import text_doc_id
from factlab.data.readers import iter_jsonl
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles

SPLITS = ("dev", "test")
TOKENS_FILE = "data/non_supported_tokens/{split}.jsonl"
CLAIMS_FILE = "data/entailment_retrieval/claim/{split}.jsonl"


def claims_by_id(raw: RawFiles, split: str) -> dict[str, dict[str, Any]]:
    """The parent claims of one split by `meta.id`: text, label and evidence."""
    path = raw.path(DATASET, CLAIMS_FILE.format(split=split))
    claims = {}
    for line_no, record in iter_jsonl(path):
        upstream_id, _ = wice_id(record, split, file=path, where=f"line {line_no}")
        claims[upstream_id] = record
    return claims


def adapt_wice_tokens(raw: RawFiles) -> Built:
    rows = []
    counts = {"read": 0, "claims_joined": 0, "claims_not_joined": 0, "evidence_same_as_claim": 0}
    for split in SPLITS:
        path = raw.path(DATASET, TOKENS_FILE.format(split=split))
        claims = claims_by_id(raw, split)
        for line_no, record in iter_jsonl(path):
            where = f"line {line_no}"
            counts["read"] += 1
            upstream_id, meta = wice_id(record, split, file=path, where=where)
            subclaim = non_empty_text(record, "claim", file=path, where=where).strip()
            tokens, unsupported = checked_tokens(record, file=path, where=where)
            offsets = token_offsets(subclaim, tokens, file=path, where=where)
            source, evidence_offsets = join_evidence(record, file=path, where=where)
            supporting = supporting_sets(record, len(evidence_offsets), file=path, where=where)
            claim_id = upstream_id.rsplit("-", 1)[0]
            parent = claims.get(claim_id)
            counts["claims_joined" if parent else "claims_not_joined"] += 1
            counts["evidence_same_as_claim"] += bool(parent) and parent.get("evidence") == record["evidence"]
            rows.append(
                {
                    "example_id": f"wice-{upstream_id}",
                    "doc_id": text_doc_id(DATASET, source),
                    "system": "claim_split",
                    "split": split,
                    "source": source,
                    "output": subclaim,
                    "label": int(not any(unsupported)),
                    "wice_label": record.get("label"),
                    "tokens": json.dumps(tokens, ensure_ascii=False),
                    "token_offsets": json.dumps(offsets),
                    "token_labels": json.dumps([int(not flag) for flag in unsupported]),
                    "n_tokens": len(tokens),
                    "n_unsupported_tokens": sum(unsupported),
                    "supporting_sentences": json.dumps(supporting),
                    "evidence_offsets": json.dumps(evidence_offsets),
                    "wice_id": upstream_id,
                    "claim_id": claim_id,
                    "claim_label": parent.get("label") if parent else None,
                    "claim": parent.get("claim") if parent else None,
                    **{key: meta.get(key) for key in META_KEPT},
                }
            )
    frame = pd.DataFrame(rows)
    for split, group in frame.groupby("split"):
        counts[f"{split}_subclaims"] = len(group)
        counts[f"{split}_tokens"] = int(group["n_tokens"].sum())
        counts[f"{split}_unsupported_tokens"] = int(group["n_unsupported_tokens"].sum())
        counts[f"{split}_claims"] = int(group["claim_id"].nunique())
    return Built(frame, counts)


SPECS = [
    BenchmarkSpec(
        name="wice_tokens",
        datasets=(DATASET,),
        build=adapt_wice_tokens,
        role="evaluation",
        description="WiCE dev/test subclaims (partially supported) vs cited web pages, with gold unsupported tokens",
    )
]
