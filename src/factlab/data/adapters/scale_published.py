"""SCALE's published per-example scores (Lattimer et al., 2023): reference outputs to compare with.

Two long tables, scores and labels only (no text):

- `screeneval_published`: `experiments/{accuracy,chunk_size}/results/<metric>_results.json` =
  [scores, labels, runtime_seconds] on ScreenEval. One row per (experiment, metric, example).
  `metric` is the file stem without `_results` (chunk-size files keep their size:
  `scale_large_1000`). Labels are already 1 = consistent: 458 of 614 are 1, and every strong
  metric ranks them higher (scale_xl AUC 0.80, qa_fact 0.74 with label 1 as positive); an
  inverted convention would give AUC below 0.5. All 614-example files list the same labels in
  the same order, so `example_index` pairs metrics. Three accuracy files (rouge, rouge_1_f,
  scale_small) hold 226 examples with another label sequence: an earlier, different example set
  that cannot be paired with the 614, so they get experiment `accuracy_226`. `rouge_results`
  scores are {rouge-1/2/l: {p, r, f}} and become metrics `rouge_1_f` etc.; its `rouge_1_f`
  duplicates `rouge_1_f_results.json` and is kept once after checking the two are equal
  (`duplicate_rows_merged`).
- `true_published`: `experiments/true/results/<metric>_true_results.json` =
  {upstream set: [scores, labels]} for the 11 TRUE sets. `dataset` is the TRUE set name
  (`begin_dev` becomes `begin`, see TRUE_SETS); `example_id` is the matching `true_<set>` row
  (labels agree row by row with the mirrored CSVs).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.data.adapters.true import true_example_id
from factlab.data.readers import read_json
from factlab.data.spec import BenchmarkSpec, Built
from factlab.download.manifest import RawFiles
from factlab.errors import DataError

DATASET = "scale_score_reference_outputs"
SCREENEVAL_EXAMPLES = 614
EXPERIMENTS = ("accuracy", "chunk_size")
# Upstream key in the TRUE result files -> TRUE set name (as in `true_<set>`).
TRUE_SETS = {
    "begin_dev": "begin",
    "dialfact_valid": "dialfact",
    "fever_dev": "fever",
    "frank_valid": "frank",
    "mnbm": "mnbm",
    "paws": "paws",
    "q2": "q2",
    "qags_cnndm": "qags_cnndm",
    "qags_xsum": "qags_xsum",
    "summeval": "summeval",
    "vitc_dev": "vitc",
}


def strip_suffix(stem: str, suffix: str, path: Path) -> str:
    if not stem.endswith(suffix):
        raise DataError(f"file name does not end in {suffix!r}", file=path)
    return stem[: -len(suffix)]


def check_labels(labels: Any, n: int, *, file: Path, record: str) -> list[int]:
    if not isinstance(labels, list) or len(labels) != n:
        raise DataError(f"expected {n} labels", file=file, record=record, field="labels")
    for index, label in enumerate(labels):
        if isinstance(label, bool) or label not in (0, 1):
            raise DataError(f"label {label!r} is not 0 or 1", file=file, record=f"{record} example {index}", field="labels")
    return [int(label) for label in labels]


def check_score(value: Any, *, file: Path, record: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise DataError(f"score {value!r} is not a number", file=file, record=record, field="scores")
    return float(value)


def score_columns(metric: str, scores: list[Any], *, file: Path) -> dict[str, list[float]]:
    """Metric name -> scores; dict scores ({rouge-1: {f: ...}}) give one metric per leaf."""
    if scores and all(isinstance(s, dict) for s in scores):
        columns: dict[str, list[float]] = {}
        for index, entry in enumerate(scores):
            for variant, stats in entry.items():
                for stat, value in stats.items():
                    name = f"{metric}_{variant.split('-')[-1]}_{stat}"
                    columns.setdefault(name, []).append(check_score(value, file=file, record=f"example {index}"))
        if any(len(v) != len(scores) for v in columns.values()):
            raise DataError("score dictionaries differ in keys", file=file, field="scores")
        return columns
    return {metric: [check_score(s, file=file, record=f"example {i}") for i, s in enumerate(scores)]}


def screeneval_rows(path: Path, experiment: str) -> pd.DataFrame:
    content = read_json(path)
    if not (isinstance(content, list) and len(content) == 3 and isinstance(content[0], list)):
        raise DataError("expected [scores, labels, runtime_seconds]", file=path)
    scores, labels, runtime = content
    labels = check_labels(labels, len(scores), file=path, record="file")
    runtime_s = check_score(runtime, file=path, record="runtime")
    if len(scores) != SCREENEVAL_EXAMPLES:
        experiment = f"{experiment}_{len(scores)}"  # another example set: never paired with the 614
    metric = strip_suffix(path.stem, "_results", path)
    frames = [
        pd.DataFrame(
            {
                "experiment": experiment,
                "metric": name,
                "example_index": range(len(values)),
                "score": values,
                "label": labels,
                "runtime_s": runtime_s,
                "n_examples": len(values),
                "file": path.name,
            }
        )
        for name, values in score_columns(metric, scores, file=path).items()
    ]
    return pd.concat(frames, ignore_index=True)


def merge_duplicates(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Keep one copy of a metric given by two files, after checking they agree."""
    key = ["experiment", "metric", "example_index"]
    repeated = frame[frame.duplicated(key, keep=False)]
    for _, group in repeated.groupby(key):
        if group["score"].nunique() > 1 or group["label"].nunique() > 1:
            first = group.iloc[0]
            raise DataError(
                f"files {sorted(group['file'])} disagree on {first['metric']} example {first['example_index']}",
                file=first["file"],
                field="scores",
            )
    # Prefer the metric's own file (named after it) over the combined one.
    own_file = frame["file"] == frame["metric"] + "_results.json"
    ordered = frame.assign(_own=own_file).sort_values("_own", ascending=False, kind="stable")
    kept = ordered.drop_duplicates(key).drop(columns="_own").sort_index()
    return kept.reset_index(drop=True), len(frame) - len(kept)


def adapt_screeneval(raw: RawFiles) -> Built:
    frames = [
        screeneval_rows(path, experiment)
        for experiment in EXPERIMENTS
        for path in raw.glob(DATASET, f"experiments/{experiment}/results/")
    ]
    if not frames:
        raise DataError("no ScreenEval result files in the manifest", record=DATASET)
    frame, merged = merge_duplicates(pd.concat(frames, ignore_index=True))
    read = int(sum(len(f) for f in frames))
    return Built(frame, {"read_files": len(frames), "read": read, "duplicate_rows_merged": merged})


def true_rows(path: Path) -> pd.DataFrame:
    metric = strip_suffix(path.stem, "_true_results", path)
    content = read_json(path)
    if not isinstance(content, dict):
        raise DataError("expected {dataset: [scores, labels]}", file=path)
    frames = []
    for key, pair in content.items():
        if key not in TRUE_SETS:
            raise DataError(f"unknown TRUE set {key!r}", file=path, record=key)
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], list)):
            raise DataError("expected [scores, labels]", file=path, record=key)
        scores = [check_score(s, file=path, record=f"{key} example {i}") for i, s in enumerate(pair[0])]
        true_set = TRUE_SETS[key]
        frames.append(
            pd.DataFrame(
                {
                    "metric": metric,
                    "dataset": true_set,
                    "upstream_dataset": key,
                    "example_index": range(len(scores)),
                    "example_id": [true_example_id(true_set, i) for i in range(len(scores))],
                    "score": scores,
                    "label": check_labels(pair[1], len(scores), file=path, record=key),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def adapt_true_published(raw: RawFiles) -> Built:
    paths = raw.glob(DATASET, "experiments/true/results/")
    if not paths:
        raise DataError("no TRUE result files in the manifest", record=DATASET)
    frame = pd.concat([true_rows(path) for path in paths], ignore_index=True)
    return Built(frame, {"read_files": len(paths), "read": len(frame)})


SPECS = [
    BenchmarkSpec(
        name="screeneval_published",
        datasets=(DATASET,),
        build=adapt_screeneval,
        kind="table",
        role="published",
        required=("experiment", "metric", "example_index", "score", "label", "runtime_s"),
        unique=("experiment", "metric", "example_index"),
        description="SCALE's published ScreenEval scores per metric and example (1 = consistent)",
    ),
    BenchmarkSpec(
        name="true_published",
        datasets=(DATASET,),
        build=adapt_true_published,
        kind="table",
        role="published",
        required=("metric", "dataset", "example_index", "score", "label"),
        unique=("metric", "dataset", "example_index"),
        description="SCALE's published scores of 4 baselines on the 11 TRUE sets (1 = consistent)",
    ),
]
