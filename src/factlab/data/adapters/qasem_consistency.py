"""QASemConsistency (Cattan et al., 2024): responses decomposed into QA-SRL/QANom QAs, each voted.

`data/{dev,test}.jsonl`: one record per response (CLIFF summaries, FActScore biographies) or per
response sentence (Verifiability), 299 in all, each with its QAs (3 votes each) and annotated
spans (3 votes each). Two benchmarks:

- `qasem_consistency`: one row per record. `source` and `summary` are token lists upstream:
  they are joined with single spaces (so punctuation stands apart, as tokenised: "Muir 's").
  label = 1 iff every QA of the response is supported by majority; human_score = share of its QAs
  supported by majority. Spans are kept as parallel list columns (`span_start`, `span_end`
  token offsets into the response, `span_text`, `span_qa_ids`, `span_votes`, `span_label`).
- `qasem_consistency_qas`: one row per QA (3,098). source = the response's source, output =
  question + " " + answer (the hypothesis of QASemConsistency), doc_id = the response's id.

Upstream conventions differ and are converted here, once:
- QA votes: 0 = supported, 1 = hallucinated. Kept as `votes_raw`; `votes` = 1 - raw
  (1 = supported); label = majority of `votes`.
- Span votes: 1 = covered, 0 = hallucinated: already canonical, kept as `span_votes`.

Ids come from the data: a record is `<dataset>/<source_id>/<model>` (for Verifiability, `model`
holds the sentence id and `source_id` the response id); a QA adds `/qa<qa_id>`. A response's
doc_id is a short sha1 of its source text, since Verifiability sentences of one response cite
different sources and one source serves several responses. Systems are the `model` field, and
for Verifiability the engine named after the hash in `source_id` (perplexity, neeva, bing_chat).

`answer_idx` and `predicate_idx` are offsets into the response's tokens (all sentences); a QA's
`sentence` is the one holding its predicate. 8 Verifiability QAs have `sent_id` 1 in a
one-sentence record: their sentence is the record's, and they are counted in
`sent_id_out_of_range` (nothing is dropped).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.data.ids import text_doc_id
from factlab.data.readers import iter_jsonl, require
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

DATASET = "qasem_consistency"
SPLITS = ("dev", "test")
TASKS = ("cliff", "factscore", "verifiability")
VERIFIABILITY_SOURCE_ID = re.compile(r"^[0-9a-f]{64}-(?P<engine>.+)$")
QA_FIELDS = ("qa_id", "sent_id", "predicate", "predicate_idx", "predicate_pos", "question", "answer", "answer_idx")
OPTIONAL_QA_FIELDS = ("copula", "clean_answer_idx")
SPAN_COLUMNS = ("span_id", "span_start", "span_end", "span_text", "span_qa_ids", "span_votes", "span_label")


@dataclass(frozen=True)
class Response:
    """One upstream record with its texts joined and its id, as both benchmarks need."""

    record: dict[str, Any]
    record_ref: str  # "line 3" of `file`, for errors
    file: Path
    split: str
    response_id: str
    task: str
    system: str
    source: str
    sentences: list[list[str]]  # tokens per sentence

    @property
    def tokens(self) -> list[str]:
        return [token for sentence in self.sentences for token in sentence]

    @property
    def output(self) -> str:
        return " ".join(self.tokens)


def token_list(value: Any, *, file: Path, record_id: str, field: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(token, str) for token in value):
        raise DataError("expected a non-empty list of token strings", file=file, record=record_id, field=field)
    return value


def sentence_tokens(summary: Any, *, file: Path, record_id: str) -> list[list[str]]:
    """Summaries are a token list (one sentence, Verifiability) or a list of token lists."""
    if isinstance(summary, list) and summary and all(isinstance(s, list) for s in summary):
        return [token_list(s, file=file, record_id=record_id, field="summary") for s in summary]
    return [token_list(summary, file=file, record_id=record_id, field="summary")]


def system_of(task: str, model: str, source_id: str, *, file: Path, record_id: str) -> str:
    if task != "verifiability":
        return model
    match = VERIFIABILITY_SOURCE_ID.match(source_id)
    if not match:
        raise DataError("Verifiability source_id is not <sha256>-<engine>", file=file, record=record_id, field="source_id")
    return match["engine"]


def iter_responses(raw: RawFiles) -> Iterator[Response]:
    for split in SPLITS:
        path = raw.path(DATASET, f"data/{split}.jsonl")
        for line_no, record in iter_jsonl(path):
            ref = f"line {line_no}"
            task = require(record, "dataset", file=path, record_id=ref)
            if task not in TASKS:
                raise DataError(f"unknown task {task!r}", file=path, record=ref, field="dataset")
            source_id = str(require(record, "source_id", file=path, record_id=ref))
            model = str(require(record, "model", file=path, record_id=ref))
            source = require(record, "source", file=path, record_id=ref)
            tokens = token_list(source, file=path, record_id=ref, field="source")
            yield Response(
                record=record,
                record_ref=ref,
                file=path,
                split=split,
                response_id=f"{task}/{source_id}/{model}",
                task=task,
                system=system_of(task, model, source_id, file=path, record_id=ref),
                source=" ".join(tokens),
                sentences=sentence_tokens(require(record, "summary", file=path, record_id=ref), file=path, record_id=ref),
            )


def three_votes(value: Any, *, file: Path, record_id: str, field: str) -> list[int]:
    if not isinstance(value, list) or len(value) != 3 or any(isinstance(v, bool) or v not in (0, 1) for v in value):
        raise DataError(f"expected 3 votes of 0/1, got {value!r}", file=file, record=record_id, field=field)
    return [int(v) for v in value]


def majority(votes: list[int]) -> int:
    return int(2 * sum(votes) > len(votes))


def supported_votes(raw_votes: list[int]) -> list[int]:
    """QA votes upstream: 0 = supported, 1 = hallucinated; canonical: 1 = supported."""
    return [1 - vote for vote in raw_votes]


def qa_rows(response: Response, counts: dict[str, int]) -> list[dict[str, Any]]:
    qas = require(response.record, "qas", file=response.file, record_id=response.record_ref)
    starts = [0, *itertools.accumulate(len(s) for s in response.sentences)]
    n_tokens = starts[-1]
    rows = []
    for index, qa in enumerate(qas):
        ref = f"{response.record_ref} qa {index}"
        fields = {field: require(qa, field, file=response.file, record_id=ref) for field in QA_FIELDS}
        predicate_idx = fields["predicate_idx"]
        if not isinstance(predicate_idx, int) or not 0 <= predicate_idx < n_tokens:
            message = f"predicate_idx {predicate_idx!r} is outside the response"
            raise DataError(message, file=response.file, record=ref, field="predicate_idx")
        sentence_index = bisect.bisect_right(starts, predicate_idx) - 1
        if fields["sent_id"] >= len(response.sentences):
            counts["sent_id_out_of_range"] += 1
        votes_raw = three_votes(qa.get("annotations"), file=response.file, record_id=ref, field="annotations")
        votes = supported_votes(votes_raw)
        rows.append(
            {
                "example_id": f"{response.response_id}/qa{fields['qa_id']}",
                "doc_id": response.response_id,
                "system": response.system,
                "split": response.split,
                "source": response.source,
                "output": f"{fields['question']} {fields['answer']}",
                "label": majority(votes),
                "human_score": sum(votes) / len(votes),
                "task": response.task,
                **fields,
                **{field: qa.get(field) for field in OPTIONAL_QA_FIELDS},
                "sentence": " ".join(response.sentences[sentence_index]),
                "response": response.output,
                "votes_raw": votes_raw,
                "votes": votes,
            }
        )
    if not rows:
        raise DataError("response has no QAs", file=response.file, record=response.record_ref, field="qas")
    return rows


def span_columns(response: Response) -> dict[str, list[Any]]:
    spans = require(response.record, "spans", file=response.file, record_id=response.record_ref)
    tokens = response.tokens
    columns: dict[str, list[Any]] = {column: [] for column in SPAN_COLUMNS}
    for index, span in enumerate(spans):
        ref = f"{response.record_ref} span {index}"
        start = require(span, "start", file=response.file, record_id=ref)
        end = require(span, "end", file=response.file, record_id=ref)
        if not 0 <= start < end <= len(tokens):
            raise DataError(f"span {start}-{end} is outside the response", file=response.file, record=ref, field="start")
        # Span votes upstream: 1 = covered, 0 = hallucinated: already canonical.
        votes = three_votes(span.get("annotations"), file=response.file, record_id=ref, field="annotations")
        columns["span_id"].append(require(span, "id", file=response.file, record_id=ref))
        columns["span_start"].append(start)
        columns["span_end"].append(end)
        columns["span_text"].append(" ".join(tokens[start:end]))
        columns["span_qa_ids"].append(list(span.get("qaIds", [])))
        columns["span_votes"].append(votes)
        columns["span_label"].append(majority(votes))
    return columns


def response_row(response: Response, qas: list[dict[str, Any]]) -> dict[str, Any]:
    supported = [qa["label"] for qa in qas]
    return {
        "example_id": response.response_id,
        "doc_id": text_doc_id(DATASET, response.source),
        "system": response.system,
        "split": response.split,
        "source": response.source,
        "output": response.output,
        "label": int(all(supported)),
        "human_score": sum(supported) / len(supported),
        "task": response.task,
        "source_id": str(response.record["source_id"]),
        "model": response.record["model"],
        "datasource": response.record.get("datasource"),
        "sentences": [" ".join(s) for s in response.sentences],
        "n_qas": len(qas),
        "qa_ids": [qa["qa_id"] for qa in qas],
        "qa_labels": supported,
        "cliff_labels": response.record.get("cliff_labels"),
        **span_columns(response),
    }


def adapt_responses(raw: RawFiles) -> Built:
    counts = {"sent_id_out_of_range": 0}
    rows = [response_row(response, qa_rows(response, counts)) for response in iter_responses(raw)]
    return Built(pd.DataFrame(rows), {"read": len(rows), **counts})


def adapt_qas(raw: RawFiles) -> Built:
    counts = {"sent_id_out_of_range": 0}
    rows = [row for response in iter_responses(raw) for row in qa_rows(response, counts)]
    return Built(pd.DataFrame(rows), {"read": len(rows), **counts})


SPECS = [
    BenchmarkSpec(
        name="qasem_consistency",
        datasets=(DATASET,),
        build=adapt_responses,
        description="QASemConsistency responses (CLIFF, FActScore, Verifiability sentences); 1 = all QAs supported",
    ),
    BenchmarkSpec(
        name="qasem_consistency_qas",
        datasets=(DATASET,),
        build=adapt_qas,
        description="QASemConsistency QA pairs, 3 votes each; 1 = supported by majority",
    ),
]
