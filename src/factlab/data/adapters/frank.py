"""FRANK (Pagnoni et al., 2021): 2,246 CNN/DM and XSum summaries with typed factual-error annotations.

Two specs:

- `frank` (benchmark): one row per (article, system) summary. Labels come from the latest
  `data/human_annotations.json`; human_score = `Factuality` (share of error-free summary
  sentences, in [0, 1]); label = int(Factuality == 1), i.e. consistent only when no sentence has
  an error. Every error-category column (RelE, EntE, ..., the grouped scores) and every `Flip_*`
  ablation column is kept under FRANK's own name. `split` comes from FRANK's
  `data/{validation,test}_split.txt` (by article).
- `frank_baseline_scores` (table, published): FRANK's own scores for its baseline metrics, one
  row per summary, one column per metric named exactly as in FRANK's file.

Texts: FRANK's `benchmark_data.json` is not mirrored, so the article, the system summary and the
reference are joined from the first release's per-article JSONs
(`data/articles-wmetrics-reference-json/<hash>.json`), where each system's summary is stored
under the system's name (e.g. `bart`, `BERTS2S`). Those summaries are **lower-cased and
tokenised** (and XSum ones carry literal `\\'` escapes); they are kept exactly as stored — they
are the strings FRANK scored its metrics on and the strings TRUE's copy of FRANK uses. Articles are
kept as stored too (some BBC ones start with page boilerplate such as "Share this with...").

For XSum (`bbc`) rows the article hash is the BBC id, so `doc_id` matches XSumFaith's `doc_id`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from factlab.data.frank_metrics import BASELINE_METRICS
from factlab.data.readers import read_json, require
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

ANNOTATIONS_FILE = "data/human_annotations.json"
BASELINES_FILE = "data/baseline_factuality_metrics_outputs.json"
ARTICLES_FOLDER = "articles-wmetrics-reference-json/"
SPLIT_FILES = {"validation": "data/validation_split.txt", "test": "data/test_split.txt"}
# FRANK's own split names in the annotation records, checked against the split files.
UPSTREAM_SPLITS = {"valid": "validation", "test": "test"}
# FRANK calls its XSum subset "bbc"; `subset` gives the name used elsewhere in the project.
SUBSETS = {"cnndm": "cnndm", "bbc": "xsum"}
KEY_FIELDS = ("hash", "model_name", "dataset", "split")
SCORE_FIELD = "Factuality"


def frank_example_id(doc_hash: str, model_name: str) -> str:
    return f"frank-{doc_hash}-{model_name}"


def read_splits(raw: RawFiles) -> dict[str, str]:
    """Article hash -> "validation" | "test"."""
    split_of: dict[str, str] = {}
    for split, suffix in SPLIT_FILES.items():
        path = raw.path("frank", suffix)
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            doc_hash = line.strip()
            if not doc_hash:
                continue
            if doc_hash in split_of:
                message = f"article is in both {split_of[doc_hash]} and {split}"
                raise DataError(message, file=path, record=f"line {line_no}")
            split_of[doc_hash] = split
    return split_of


def read_articles(raw: RawFiles) -> dict[str, dict[str, Any]]:
    """Article hash -> FRANK's per-article record (article, references, every system's summary)."""
    articles: dict[str, dict[str, Any]] = {}
    for path in raw.glob("frank", ARTICLES_FOLDER):
        record = read_json(path)
        doc_hash = str(require(record, "hash", file=path, record_id=Path(path).name))
        # The file name is the key the labels use; a record disagreeing with it would join wrongly.
        if Path(path).stem != doc_hash:
            raise DataError(f"record hash {doc_hash!r} differs from its file name", file=path, field="hash")
        articles[doc_hash] = record
    if not articles:
        raise DataError(f"no per-article JSONs ({ARTICLES_FOLDER}) in the manifest", record="frank")
    return articles


def reference_for(article: dict[str, Any], model_name: str) -> str | None:
    """CNN/DM records keep one (differently cased) reference per system; XSum ones keep `Gold`."""
    for key in (f"{model_name}_reference", "Gold", "reference"):
        if isinstance(article.get(key), str):
            return article[key]
    return None


def adapt_frank(raw: RawFiles) -> Built:
    path = raw.path("frank", ANNOTATIONS_FILE)
    records = read_json(path)
    if not isinstance(records, list):
        raise DataError("expected a JSON list of annotation records", file=path)
    split_of = read_splits(raw)
    articles = read_articles(raw)
    rows = []
    counts = {"read": len(records), "dropped_no_text": 0, "missing_reference": 0}
    for index, record in enumerate(records):
        record_id = f"item {index}"
        doc_hash, model_name, dataset, upstream_split = (
            str(require(record, field, file=path, record_id=record_id)) for field in KEY_FIELDS
        )
        if dataset not in SUBSETS:
            raise DataError(f"unknown dataset {dataset!r}", file=path, record=record_id, field="dataset")
        if doc_hash not in split_of:
            raise DataError("article is in neither split file", file=path, record=record_id, field="hash")
        split = split_of[doc_hash]
        if UPSTREAM_SPLITS.get(upstream_split) != split:
            message = f"split {upstream_split!r} disagrees with the split files ({split})"
            raise DataError(message, file=path, record=record_id, field="split")
        article = articles.get(doc_hash)
        summary = None if article is None else article.get(model_name)
        if not isinstance(summary, str) or not isinstance(article.get("article"), str):
            counts["dropped_no_text"] += 1
            continue
        reference = reference_for(article, model_name)
        counts["missing_reference"] += reference is None
        factuality = float(require(record, SCORE_FIELD, file=path, record_id=record_id))
        annotations = {field: float(value) for field, value in record.items() if field not in KEY_FIELDS and field != SCORE_FIELD}
        rows.append(
            {
                "example_id": frank_example_id(doc_hash, model_name),
                "doc_id": doc_hash,
                "system": model_name,
                "split": split,
                "source": article["article"],
                "output": summary,
                "label": int(factuality == 1.0),
                "human_score": factuality,
                "dataset": dataset,
                "subset": SUBSETS[dataset],
                "reference": reference,
                **annotations,
            }
        )
    counts["rows"] = len(rows)
    return Built(pd.DataFrame(rows), counts)


def adapt_frank_baselines(raw: RawFiles) -> Built:
    """FRANK's published baseline scores, wide: one row per summary, one column per metric."""
    path = raw.path("frank", BASELINES_FILE)
    records = read_json(path)
    if not isinstance(records, list):
        raise DataError("expected a JSON list of score records", file=path)
    rows = []
    for index, record in enumerate(records):
        record_id = f"item {index}"
        doc_hash, model_name, dataset, _ = (str(require(record, field, file=path, record_id=record_id)) for field in KEY_FIELDS)
        metrics = [field for field in record if field not in KEY_FIELDS]
        if tuple(metrics) != BASELINE_METRICS:
            message = f"metric columns {metrics} differ from {list(BASELINE_METRICS)}"
            raise DataError(message, file=path, record=record_id)
        rows.append(
            {
                "example_id": frank_example_id(doc_hash, model_name),
                "doc_id": doc_hash,
                "system": model_name,
                "dataset": dataset,
                # null in FRANK's file = the metric produced no score; kept as NaN, never imputed.
                **{m: float("nan") if record[m] is None else float(record[m]) for m in BASELINE_METRICS},
            }
        )
    frame = pd.DataFrame(rows)
    counts = {"read": len(records)}
    counts.update({f"missing_{metric}": int(frame[metric].isna().sum()) for metric in BASELINE_METRICS})
    return Built(frame, counts)


SPECS = [
    BenchmarkSpec(
        name="frank",
        datasets=("frank",),
        build=adapt_frank,
        description="FRANK CNN/DM + XSum summaries, Factuality score and typed error annotations",
    ),
    BenchmarkSpec(
        name="frank_baseline_scores",
        datasets=("frank",),
        build=adapt_frank_baselines,
        kind="table",
        required=("example_id", "doc_id", "system", "dataset", *BASELINE_METRICS),
        unique=("example_id",),
        role="published",
        description="FRANK's released baseline metric scores, one column per metric",
    ),
]
