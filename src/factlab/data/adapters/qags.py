"""QAGS (Wang et al., 2020): summary sentences with 3 yes/no consistency votes each.

One row per summary sentence. label = majority "yes" (1 = consistent); human_score = share of
"yes" votes; `votes` keeps the 3 raw votes in canonical form (1 = yes = consistent).
"""

from __future__ import annotations

from functools import partial

import pandas as pd

from factlab.data.readers import iter_jsonl, require
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

# Systems as described in the QAGS paper (section 5): one summariser per subset.
SYSTEMS = {"cnndm": "bottom_up", "xsum": "bart"}
VOTE_VALUES = {"yes": 1, "no": 0}


def adapt_qags(raw: RawFiles, subset: str) -> Built:
    path = raw.path("qags", f"data/mturk_{subset}.jsonl")
    rows = []
    for line_no, record in iter_jsonl(path):
        article = require(record, "article", file=path, record_id=f"line {line_no}")
        sentences = require(record, "summary_sentences", file=path, record_id=f"line {line_no}")
        doc_id = f"qags_{subset}-d{line_no:04d}"
        for index, sentence in enumerate(sentences):
            record_id = f"line {line_no} sentence {index}"
            text = require(sentence, "sentence", file=path, record_id=record_id)
            responses = require(sentence, "responses", file=path, record_id=record_id)
            votes = []
            for response in responses:
                value = str(require(response, "response", file=path, record_id=record_id)).strip().lower()
                if value not in VOTE_VALUES:
                    raise DataError(f"vote {value!r} is not yes/no", file=path, record=record_id, field="response")
                votes.append(VOTE_VALUES[value])
            if not votes:
                raise DataError("sentence has no votes", file=path, record=record_id, field="responses")
            rows.append(
                {
                    "example_id": f"{doc_id}-s{index}",
                    "doc_id": doc_id,
                    "system": SYSTEMS[subset],
                    "split": "test",
                    "source": article,
                    "output": text,
                    "label": int(2 * sum(votes) > len(votes)),
                    "human_score": sum(votes) / len(votes),
                    "votes": votes,
                    "worker_ids": [int(r["worker_id"]) for r in responses],
                }
            )
    return Built(pd.DataFrame(rows), {"read": len(rows)})


SPECS = [
    BenchmarkSpec(
        name=f"qags_{subset}",
        datasets=("qags",),
        build=partial(adapt_qags, subset=subset),
        description=f"QAGS {subset} summary sentences, 3 votes each",
    )
    for subset in ("cnndm", "xsum")
]
