"""HaluEval QA (Li et al., 2023): knowledge-grounded right vs hallucinated answers to HotpotQA questions.

`generation/qa/qa_{one,multi}-turn_data.json` (one JSON object a line despite the `.json` name):
`knowledge`, `question`, `right_answer`, `hallucinated_answer`. The two files hold the same 500
questions in the same order with the same knowledge and right answers; only hallucinated
answers differ, in 487 of 500 (sampled with a one-turn or a multi-turn instruction).

Each record gives two rows, knowledge -> `source` and the question with an answer -> `output`:
label 1 / `nli_label` entailment for the right answer, 0 / not_entailment for the hallucinated
one (`answer_kind` right / hallucinated). Identical (source, output) rows are kept once, the
first read (one-turn file first): the 500 right answers of the multi-turn file and the
hallucinated answers both files share are counted in `dropped_duplicate`. The same pair with
two different labels is an error. No split upstream: every row is "train". `variant` names the
file a kept row came from; `question` and `answer` are kept as given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from factlab.data.adapters.nli import is_repeat, nli_row, nli_spec
from factlab.data.readers import iter_jsonl, require
from factlab.data.spec import Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

DATASET = "halueval"
VARIANTS = ("one-turn", "multi-turn")
ANSWERS = (("right", "right_answer", "entailment"), ("hallucinated", "hallucinated_answer", "not_entailment"))


def qa_statement(question: str, answer: str) -> str:
    """The question followed by its answer, as one hypothesis text.

    A template, not a rewrite into a declarative sentence: turning a question and answer into a
    statement well needs a generation model, which the build must not depend on (offline,
    deterministic, no weights). "Question? Answer" is also the hypothesis form this project
    already uses for QA pairs (MCTest-NLI, QASemConsistency's question + " " + answer), and the
    answer stays verbatim, so a checker sees exactly the claim HaluEval labels.
    """
    return f"{question.rstrip()} {answer.strip()}"


def text_field(record: dict[str, Any], field: str, *, file: Path, where: str) -> str:
    """A field that must hold a non-empty string; DataError naming file, line and field otherwise."""
    value = require(record, field, file=file, record_id=where)
    if not isinstance(value, str) or not value.strip():
        raise DataError("not a non-empty string", file=file, record=where, field=field)
    return value


def adapt_halueval_qa(raw: RawFiles) -> Built:
    rows: list[dict[str, Any]] = []
    first: dict[tuple[str, str], dict[str, Any]] = {}  # (source, output) -> the row kept
    counts = {"read": 0, "read_right": 0, "read_hallucinated": 0, "dropped_duplicate": 0}
    for variant in VARIANTS:
        path = raw.path(DATASET, f"generation/qa/qa_{variant}_data.json")
        for line_no, record in iter_jsonl(path):
            where = f"line {line_no}"
            knowledge = text_field(record, "knowledge", file=path, where=where)
            question = text_field(record, "question", file=path, where=where)
            for kind, field, nli_label in ANSWERS:
                answer = text_field(record, field, file=path, where=where)
                counts["read"] += 1
                counts[f"read_{kind}"] += 1
                output = qa_statement(question, answer)
                repeat = is_repeat(
                    first,
                    (knowledge, output),
                    kind,
                    "knowledge and answer",
                    file=path,
                    record=where,
                    field=field,
                    label_column="answer_kind",
                )
                if repeat:
                    counts["dropped_duplicate"] += 1
                    continue
                example_id = f"halueval_qa-{variant}-{line_no:03d}-{kind}"
                row = nli_row(example_id, DATASET, "train", knowledge, output, nli_label, file=path, record=where)
                row |= {"question": question, "answer": answer, "answer_kind": kind, "variant": variant}
                first[(knowledge, output)] = row
                rows.append(row)
    counts["kept_right"] = sum(row["answer_kind"] == "right" for row in rows)
    counts["kept_hallucinated"] = len(rows) - counts["kept_right"]
    return Built(pd.DataFrame(rows), counts)


SPECS = [
    nli_spec(
        "halueval_qa",
        (DATASET,),
        adapt_halueval_qa,
        "HaluEval QA: HotpotQA knowledge vs question + right or hallucinated answer",
    )
]
