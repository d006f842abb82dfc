"""CLIMATE-FEVER (Diggelmann et al., 2020): real-world climate claims against Wikipedia sentences.

`dataset/climate-fever.jsonl`: one record per claim (1,535), each with 5 evidence sentences
(`evidences`: `evidence_id` "<article>:<sentence no.>", `evidence_label`, `article`, `evidence`,
`votes`, `entropy`). One row per claim–evidence pair (7,675), as NLI training data: evidence
sentence -> `source`, claim -> `output`. `nli_label`: SUPPORTS -> entailment, REFUTES ->
contradiction, NOT_ENOUGH_INFO -> neutral; `label` = 1 iff entailment. The claim-level verdict
(`claim_label`, which also has DISPUTED) is kept but not used as a label: it aggregates the 5
sentences. No split upstream: every row is "train". `claim_id` (upstream, a string), `evidence_id`
and `article` are kept; `doc_id` is the premise hash shared by all NLI corpora.
"""

from __future__ import annotations

from factlab.data.adapters.nli import built_with_counts, nli_row, nli_spec
from factlab.data.readers import iter_jsonl, require
from factlab.data.spec import Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

DATASET = "climate_fever"
EVIDENCE_LABELS = {"SUPPORTS": "entailment", "REFUTES": "contradiction", "NOT_ENOUGH_INFO": "neutral"}


def adapt_climate_fever(raw: RawFiles) -> Built:
    path = raw.path(DATASET, "dataset/climate-fever.jsonl")
    rows = []
    for line_no, record in iter_jsonl(path):
        where = f"line {line_no}"
        claim_id = str(require(record, "claim_id", file=path, record_id=where))
        claim = require(record, "claim", file=path, record_id=where)
        evidences = require(record, "evidences", file=path, record_id=where)
        if not isinstance(evidences, list) or not evidences:
            raise DataError("evidences is not a non-empty list", file=path, record=where, field="evidences")
        for index, evidence in enumerate(evidences):
            at = f"line {line_no} evidence {index}"
            if not isinstance(evidence, dict):
                raise DataError("evidence is not an object", file=path, record=at, field="evidences")
            label = require(evidence, "evidence_label", file=path, record_id=at)
            if label not in EVIDENCE_LABELS:
                raise DataError(
                    f"label {label!r} is not one of {sorted(EVIDENCE_LABELS)}", file=path, record=at, field="evidence_label"
                )
            premise = require(evidence, "evidence", file=path, record_id=at)
            row = nli_row(
                f"climate_fever-{claim_id}-e{index}",
                DATASET,
                "train",
                premise,
                claim,
                EVIDENCE_LABELS[label],
                file=path,
                record=at,
            )
            rows.append(
                row
                | {
                    "claim_id": claim_id,
                    "claim_label": record.get("claim_label"),
                    "evidence_id": evidence.get("evidence_id"),
                    "article": evidence.get("article"),
                }
            )
    built = built_with_counts(rows)
    built.counts["claims"] = len({row["claim_id"] for row in rows})
    return built


SPECS = [
    nli_spec(
        "climate_fever",
        (DATASET,),
        adapt_climate_fever,
        "CLIMATE-FEVER claim–evidence sentence pairs (supports / refutes / not enough info)",
    )
]
