"""SummEval (Fabbri et al., 2021): 100 CNN/DM documents x 16 systems, expert-rated on a 1-5 scale.

Read from the copy in CTC's repository (`train/data/Explainaboard/_summeval_out.json`), the one
that keys each document by its CNN/DM id; its sibling `summeval.jsonl` holds the same documents,
summaries and expert scores in the same order but without ids (the tests check they agree).

One row per (document, system). human_score = consistency, the mean of 3 experts' 1-5 ratings;
label = int(consistency == 5), the usual convention (all three experts found no inconsistency).
Coherence, fluency and relevance are kept as columns; `reference` is the original CNN/DM
highlights (the first of the 11 references) and `references` all 11. Every row is test data.
"""

from __future__ import annotations

import pandas as pd

from factlab.data.readers import read_json, require
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

SUMMEVAL_FILE = "train/data/Explainaboard/_summeval_out.json"
DIMENSIONS = ("consistency", "coherence", "fluency", "relevance")
SCALE = (1.0, 5.0)


def expert_score(scores: dict, dimension: str, *, file: str, record_id: str) -> float:
    """A 1-5 expert mean; the file stores scores as strings."""
    raw_value = require(scores, dimension, file=file, record_id=record_id)
    try:
        value = float(raw_value)
    except (TypeError, ValueError) as error:
        raise DataError(f"score {raw_value!r} is not a number", file=file, record=record_id, field=dimension) from error
    if not SCALE[0] <= value <= SCALE[1]:
        raise DataError(f"score {value} is outside {SCALE}", file=file, record=record_id, field=dimension)
    return value


def adapt_summeval(raw: RawFiles) -> Built:
    path = raw.path("summeval", SUMMEVAL_FILE)
    documents = read_json(path)
    if not isinstance(documents, dict):
        raise DataError("expected a JSON object keyed by document id", file=path)
    rows = []
    for doc_id, document in documents.items():
        source = require(document, "src", file=path, record_id=doc_id)
        references = require(document, "refs", file=path, record_id=doc_id)
        hypotheses = require(document, "hypos", file=path, record_id=doc_id)
        if not references:
            raise DataError("document has no reference", file=path, record=doc_id, field="refs")
        for system, hypothesis in hypotheses.items():
            record_id = f"{doc_id} {system}"
            output = require(hypothesis, "hypo", file=path, record_id=record_id)
            scores = require(hypothesis, "scores", file=path, record_id=record_id)
            expert = {dim: expert_score(scores, dim, file=str(path), record_id=record_id) for dim in DIMENSIONS}
            rows.append(
                {
                    "example_id": f"summeval-{doc_id}-{system}",
                    "doc_id": doc_id,
                    "system": system,
                    "split": "test",
                    "source": source,
                    "output": output,
                    "label": int(expert["consistency"] == SCALE[1]),
                    "human_score": expert["consistency"],
                    "coherence": expert["coherence"],
                    "fluency": expert["fluency"],
                    "relevance": expert["relevance"],
                    "reference": references[0],
                    "references": list(references),
                }
            )
    return Built(pd.DataFrame(rows), {"documents": len(documents), "read": len(rows)})


SPECS = [
    BenchmarkSpec(
        name="summeval",
        datasets=("summeval",),
        build=adapt_summeval,
        description="SummEval CNN/DM summaries of 16 systems, expert consistency 1-5",
    )
]
