"""`factlab report localise`: one static HTML page per (benchmark, scorer) showing where a scorer localises support.

Each output is shown with its sentences coloured by their support score (the scorer's per-sentence
detail column, `sentences`), the source with the evidence each sentence was matched to highlighted
(AlignScore: the best source sentence inside its best chunk, or the best chunk in a table without
evidence sentences; embedding cosine, ROUGE: the best source sentence; OpenIE triples: each triple's
best source sentence), the unsupported phrases the aligner's token head marks (a table with `tokens`,
at the token threshold), gold spans where a `--gold` table gives them (character spans, or a token
table's runs of unsupported tokens), and the gold label. With `--checker`, the thresholds are the ones
recorded with the checker (chosen on validation data), and the page says where they come from.
QASemConsistency's table (`units`) shows its QAs instead: each QA's predicate and answer coloured in the
output by the lowest support of the QAs covering them, the QAs listed with their support, and each QA's best
chunk as evidence; an output it scored by its sentences (no QA) shows those sentences.

The page is self-contained (no server, no network, no external file): the examples are embedded
once as JSON in a `<script type="application/json">` element and the inline script renders one page
of them at a time, so 5,000 examples stay usable. Every text from the data reaches the document as
text (JSON escaped for a script element; the script builds nodes with `textContent`), never as markup.

Payload (`build_payload`), the contract between this module and the page's script:
  benchmark, scorer, threshold, page_size, evidence_kind, support_range [lo, hi],
  summary {n_examples, n_data, n_unscored, n_labelled, n_inconsistent, n_disagree, mean_score, ...},
  metrics [[name, value], ...], sources [text, ...] (each distinct source once),
  examples [{id, system, score, label, source (index), output,
             sentences [{start, end, support, evidence [[start, end], ...], cut}],
             qas [{question, answer, support, spans [[start, end], ...], evidence [[start, end], ...], cut}],
             gold [{side, start, end, note}], spans [{start, end, probability}]}]
  token_threshold, threshold_source
Offsets are character offsets, end exclusive: sentences, QA spans and `side: output` spans into `output`,
evidence and `side: source` spans into the source.
"""

from __future__ import annotations

import argparse
import html
import json
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import positive_int
from factlab.errors import DataError, FactlabError

if TYPE_CHECKING:
    import pandas as pd

    from factlab.models.token_localiser import TokenLocaliser

LOGGER = logging.getLogger(__name__)

DETAIL_COLUMN = "sentences"
UNITS_COLUMN = "units"  # QASemConsistency: its QAs (`unit: qa`), or its sentences where an output has no QA
# Detail keys of a sentence's evidence span in the source, per scorer family, and what the page calls it.
EVIDENCE_KEYS: tuple[tuple[str, str, str], ...] = (
    ("chunk_start", "chunk_end", "best chunk"),
    ("source_start", "source_end", "best source sentence"),
)
TRIPLES_KEY = "triples"  # OpenIE triples: each triple carries its own source_start/source_end
GOLD_SIDES = ("output", "source")
GOLD_COLUMNS = ("example_id", "start", "end")
METRIC_KEYS = ("benchmark", "scorer")  # columns that select the row of a metrics table


@dataclass(frozen=True)
class LocaliseSettings:
    """params.yaml `report.localise`: threshold (score >= threshold reads as consistent) and examples per page; the
    token threshold (a word is marked unsupported when its P(unsupported) is above it) and where both come from."""

    threshold: float
    page_size: int
    token_threshold: float = 0.5
    threshold_source: str = "report.localise.threshold"
    token_localiser: dict[str, Any] | None = None  # the checker's token localiser (factlab.models.token_localiser)


def register(commands: Any) -> None:
    localise = commands.add_parser("localise", help="HTML page: per-sentence support and evidence of one scorer on one benchmark")
    localise.add_argument("--benchmark", required=True)
    localise.add_argument("--scorer", required=True)
    localise.add_argument("--data", help="the benchmark table (default results/data/<benchmark>.parquet)")
    localise.add_argument("--scores", help="the scorer's table (default results/score/<benchmark>/<scorer>.parquet)")
    localise.add_argument("--out", help="the page (default results/report/<benchmark>/<scorer>.html)")
    localise.add_argument("--threshold", type=float, required=True, help="score >= threshold reads as consistent")
    localise.add_argument("--page-size", type=positive_int, required=True, help="examples rendered per page")
    localise.add_argument("--gold", help="gold spans: a table (parquet, csv, tsv, jsonl) of example_id, start, end[, side, note]")
    localise.add_argument("--metrics", help="the benchmark's metrics: a CSV (or JSON) row, e.g. results/metaeval/true/auc.csv")
    localise.add_argument(
        "--checker", help="a checker folder (results/checker/model): its recorded thresholds replace --threshold"
    )
    localise.add_argument(
        "--corrections", help="the checker's corrections (results/checker/correction/corrections.parquet), shown per output"
    )
    localise.set_defaults(func=run_localise)


def run_localise(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.io import write_text

    data_path = args.data or f"results/data/{args.benchmark}.parquet"
    scores_path = args.scores or f"results/score/{args.benchmark}/{args.scorer}.parquet"
    out = args.out or f"results/report/{args.benchmark}/{args.scorer}.html"
    settings = LocaliseSettings(threshold=args.threshold, page_size=args.page_size)
    if args.checker:
        settings = checker_thresholds(settings, args.checker)
    gold = read_gold(args.gold) if args.gold else None
    metrics = read_metrics(args.metrics, args.benchmark, args.scorer) if args.metrics else []
    payload = build_payload(
        pd.read_parquet(data_path),
        pd.read_parquet(scores_path),
        benchmark=args.benchmark,
        scorer=args.scorer,
        settings=settings,
        gold=gold,
        metrics=metrics,
        corrections=read_corrections(args.corrections) if args.corrections else None,
    )
    write_text(render_html(payload), out)
    LOGGER.info("%s: %s", out, json.dumps(payload["summary"], sort_keys=True))


def checker_thresholds(settings: LocaliseSettings, checker: str) -> LocaliseSettings:
    """The thresholds recorded in a checker folder's checker.json (factlab.checker.folder), with their sources."""
    from factlab.checker.folder import CARD_FILE, CheckerSettings

    recorded = CheckerSettings.from_json(Path(checker) / CARD_FILE)
    source = f"checker: score {recorded.threshold_source}; tokens {recorded.token_threshold_source}"
    return LocaliseSettings(recorded.threshold, settings.page_size, recorded.token_threshold, source, recorded.token_localiser)


# --- reading ---------------------------------------------------------------------------------------------------


def read_table(path: str | Path) -> pd.DataFrame:
    """A table by its suffix: .parquet, .csv, .tsv, .jsonl or .json (records)."""
    import pandas as pd

    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return pd.read_parquet(path)
    if suffix in (".csv", ".tsv"):  # ids stay text ("007"), whatever they look like
        return pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype={"example_id": str})
    if suffix in (".jsonl", ".json"):
        return pd.read_json(path, lines=suffix == ".jsonl", orient="records", dtype={"example_id": str})
    raise FactlabError(f"{path}: unknown table format {suffix!r}; use .parquet, .csv, .tsv, .jsonl or .json")


TOKEN_GOLD_COLUMNS = ("example_id", "token_offsets", "token_labels")


def token_gold_spans(frame: pd.DataFrame) -> pd.DataFrame:
    """A token gold table (the localisation analysis's: JSON `token_offsets`, `token_labels` with 0 = unsupported)
    as character spans: each run of unsupported tokens (factlab.metaeval.localisation.token_runs), from its first
    token's start to its last one's end."""
    import numpy as np
    import pandas as pd

    from factlab.metaeval.localisation import token_runs

    rows = []
    for record in frame.itertuples(index=False):
        offsets, labels = json.loads(record.token_offsets), json.loads(record.token_labels)
        unsupported = np.asarray([int(label) == 0 for label in labels], dtype=np.int64)
        for first, stop in token_runs(unsupported, np.zeros(len(unsupported))):
            rows.append((str(record.example_id), int(offsets[first][0]), int(offsets[stop - 1][1])))
    spans = pd.DataFrame(rows, columns=["example_id", "start", "end"])
    return spans.assign(side="output", note="unsupported (annotated)")


def read_gold(path: str | Path) -> pd.DataFrame:
    """Gold spans: example_id, start, end (character offsets, end exclusive), optional side (output | source,
    default output) and note; or a token gold table (`TOKEN_GOLD_COLUMNS`), read as its unsupported runs. A token
    table covers a whole dataset: its examples outside the benchmark are left out (counted in the page's summary).
    Offsets are checked against the texts in `build_payload`."""
    frame = read_table(path)
    if all(column in frame.columns for column in TOKEN_GOLD_COLUMNS) and "start" not in frame.columns:
        frame = token_gold_spans(frame)
        frame.attrs["whole_dataset"] = True
    missing = [column for column in GOLD_COLUMNS if column not in frame.columns]
    if missing:
        raise DataError(f"gold spans lack columns {missing}", file=path)
    frame = frame.copy()
    frame["side"] = frame["side"].fillna("output") if "side" in frame.columns else "output"
    frame["note"] = frame["note"].fillna("").astype(str) if "note" in frame.columns else ""
    for row, record in enumerate(frame.itertuples(index=False)):
        if record.side not in GOLD_SIDES:
            raise DataError(f"side {record.side!r} is not one of {list(GOLD_SIDES)}", file=path, record=row, field="side")
        if not (_is_int(record.start) and _is_int(record.end) and 0 <= record.start < record.end):
            raise DataError(f"span [{record.start}, {record.end}) is not 0 <= start < end", file=path, record=row, field="start")
    whole = frame.attrs.get("whole_dataset", False)
    frame = frame.astype({"example_id": str, "start": "int64", "end": "int64"})
    frame.attrs.update(path=str(path), whole_dataset=whole)
    return frame


def _is_int(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and float(value).is_integer()


def read_metrics(path: str | Path, benchmark: str, scorer: str) -> list[tuple[str, Any]]:
    """The metrics of (benchmark, scorer): a JSON object (nested keys dotted), or the one row of a CSV / JSON list
    whose `benchmark` and `scorer` columns (where it has them) name this benchmark and scorer."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            return flatten_metrics(loaded)
        rows = loaded
    else:
        rows = read_table(path).to_dict("records")
    return metrics_row(rows, benchmark, scorer, str(path))


def metrics_row(rows: Sequence[Mapping[str, Any]], benchmark: str, scorer: str, where: str) -> list[tuple[str, Any]]:
    """The one row of `rows` matching benchmark and scorer, as (name, value) pairs less the selecting columns."""
    wanted = {"benchmark": benchmark, "scorer": scorer}
    found = [row for row in rows if all(str(row.get(key, wanted[key])) == wanted[key] for key in METRIC_KEYS)]
    if len(found) != 1:
        raise FactlabError(
            f"{where}: {len(found)} metric rows match benchmark {benchmark!r} and scorer {scorer!r}; need exactly 1"
        )
    return [(str(name), scalar(value)) for name, value in found[0].items() if name not in METRIC_KEYS]


def flatten_metrics(values: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A nested JSON object as (dotted name, scalar) pairs; lists are kept as their JSON text."""
    pairs: list[tuple[str, Any]] = []
    for name, value in values.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping):
            pairs.extend(flatten_metrics(value, f"{key}."))
        else:
            pairs.append((key, json.dumps(value) if isinstance(value, list) else scalar(value)))
    return pairs


def scalar(value: Any) -> Any:
    """A JSON-safe scalar: NaN and pandas' missing values become None, numpy numbers Python ones."""
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# --- payload ---------------------------------------------------------------------------------------------------


def sentence_evidence(detail: Mapping[str, Any]) -> tuple[list[list[int]], str | None]:
    """A sentence's evidence spans in the source and their kind (None: the scorer records none)."""
    sentences = detail.get("evidence")
    if sentences is not None and len(sentences):  # AlignScore's best sentences of the best chunk, best first
        return [[int(sentences[0]["start"]), int(sentences[0]["end"])]], "best source sentence of the best chunk"
    for start_key, end_key, kind in EVIDENCE_KEYS:
        if start_key in detail and end_key in detail:
            return [[int(detail[start_key]), int(detail[end_key])]], kind
    triples = detail.get(TRIPLES_KEY)
    if triples is not None and len(triples):
        # A triple has no source span when its source yielded no triple at all (openie_triples writes None).
        spans = sorted({(int(t["source_start"]), int(t["source_end"])) for t in triples if t.get("source_start") is not None})
        return [list(span) for span in spans], "best source sentence of each triple"
    return [], None


def sentence_entry(detail: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A sentence of the payload from one element of the detail column, and the kind of its evidence."""
    evidence, kind = sentence_evidence(detail)
    cut = any(key.endswith("pieces_cut") and (scalar(value) or 0) > 0 for key, value in detail.items())
    support = scalar(detail.get("support"))
    entry = {
        "start": int(detail["start"]),
        "end": int(detail["end"]),
        "support": None if support is None else float(support),
        "evidence": evidence,
        "cut": bool(cut),
    }
    return entry, kind


def unit_entries(units: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str]]:
    """(sentences, QAs, evidence kinds) of a units column (QASemConsistency's, or a user scorer's spans): a sentence or
    span unit becomes a region of the page's output (its span), a QA unit a QA with its predicate and answer spans;
    each takes the unit's score as support."""
    sentences, qas, kinds = [], [], set()
    for unit in units:
        spans = [[int(start), int(end)] for start, end in unit["output_spans"]]
        entry, kind = sentence_entry({**unit, "start": 0, "end": 0, "support": unit["score"]})
        kinds.update([kind] if kind else [])
        if unit["unit"] in ("sentence", "span"):
            sentences.append(entry | {"start": spans[0][0], "end": spans[0][1]})
        else:
            qas.append(
                {
                    "question": str(unit["question"]),
                    "answer": str(unit["answer"]),
                    "support": entry["support"],
                    "spans": spans,
                    "evidence": entry["evidence"],
                    "cut": entry["cut"],
                }
            )
    return sentences, qas, kinds


def check_spans(spans: Iterable[Sequence[int]], length: int, what: str, example_id: str) -> None:
    """Every span lies within a text of `length` characters, else a DataError naming the example."""
    for start, end in spans:
        if not 0 <= start <= end <= length:
            raise DataError(f"{what} span [{start}, {end}) lies outside its text of {length} characters", record=example_id)


def disagrees(score: float | None, label: int | None, threshold: float) -> bool | None:
    """Whether the thresholded score contradicts the gold label (label 1 = consistent); None when either is missing."""
    if score is None or label is None:
        return None
    return (score >= threshold) != (label == 1)


def gold_by_example(gold: pd.DataFrame | None, known: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Gold spans grouped by example; an example_id the benchmark lacks is an error (the wrong table)."""
    if gold is None:
        return {}
    unknown = sorted(set(gold["example_id"]) - known)
    if unknown and gold.attrs.get("whole_dataset"):
        gold = gold[gold["example_id"].isin(known)]
    elif unknown:
        raise DataError(
            f"gold spans name {len(unknown)} example_ids the benchmark lacks, e.g. {unknown[:3]}", file=gold.attrs.get("path")
        )
    grouped: dict[str, list[dict[str, Any]]] = {}
    for record in gold.sort_values(["example_id", "side", "start", "end"]).itertuples(index=False):
        span = {"side": record.side, "start": int(record.start), "end": int(record.end), "note": str(record.note)}
        grouped.setdefault(record.example_id, []).append(span)
    return grouped


def predicted_spans(
    row: Mapping[str, Any], output: str, token_threshold: float, localiser: TokenLocaliser | None = None
) -> list[dict[str, Any]]:
    """The unsupported phrases of a scored output with token support (`tokens`: word pieces, their support), as
    `factlab check` gives them (factlab.checker.explain.span_records): read through the checker's token localiser
    when it has one, each with its explanation and error type."""
    from factlab.checker.explain import span_records

    details = row.get(DETAIL_COLUMN)
    result = {"tokens": row.get("tokens"), "sentences": [] if details is None else list(details)}
    keys = ("start", "end", "probability", "explanation", "error_type", "error_type_probability", "fava_type")
    return [
        {key: span[key] for key in keys}
        for span in span_records(result, output, token_threshold, str(row.get("source", "")), localiser)
    ]


def example_entry(
    row: Mapping[str, Any],
    source_index: int,
    gold: list[dict[str, Any]],
    kinds: set[str],
    token_threshold: float = 0.5,
    localiser: TokenLocaliser | None = None,
) -> dict[str, Any]:
    """One example of the payload from a joined (data, scores) row; adds the evidence kinds it meets to `kinds`."""
    example_id, output, source = str(row["example_id"]), str(row["output"]), str(row["source"])
    details, units = row.get(DETAIL_COLUMN), row.get(UNITS_COLUMN)
    sentences: list[dict[str, Any]] = []
    qas: list[dict[str, Any]] = []
    for detail in () if details is None else details:
        entry, kind = sentence_entry(detail)
        sentences.append(entry)
        kinds.update([kind] if kind else [])
    if units is not None:
        sentences, qas, unit_kinds = unit_entries(units)
        kinds.update(unit_kinds)
    for entry in sentences:
        check_spans([(entry["start"], entry["end"])], len(output), "sentence", example_id)
        check_spans(entry["evidence"], len(source), "evidence", example_id)
    for qa in qas:
        check_spans(qa["spans"], len(output), "QA", example_id)
        check_spans(qa["evidence"], len(source), "evidence", example_id)
    for span in gold:
        check_spans([(span["start"], span["end"])], len(output if span["side"] == "output" else source), "gold", example_id)
    label = scalar(row.get("label"))
    return {
        "id": example_id,
        "system": scalar(row.get("system")),
        "score": scalar(row["score"]),
        "label": None if label is None else int(label),
        "source": source_index,
        "output": output,
        "sentences": sorted(sentences, key=lambda entry: entry["start"]),
        "qas": qas,
        "gold": gold,
        "spans": predicted_spans(row, output, token_threshold, localiser),
    }


def support_range(examples: Sequence[Mapping[str, Any]], threshold: float) -> list[float]:
    """The colour scale's domain: the lowest and highest example score, sentence or QA support, and the threshold."""
    values = [threshold]
    for example in examples:
        values += [example["score"]] if example["score"] is not None else []
        values += [s["support"] for s in [*example["sentences"], *example["qas"]] if s["support"] is not None]
    return [min(values), max(values)]


def summarise(examples: Sequence[Mapping[str, Any]], n_data: int, threshold: float) -> dict[str, Any]:
    """Counts shown in the page's header, at the configured threshold."""
    scores = [example["score"] for example in examples if example["score"] is not None]
    labels = [example["label"] for example in examples if example["label"] is not None]
    disagreeing = [disagrees(example["score"], example["label"], threshold) for example in examples]
    return {
        "n_examples": len(examples),
        "n_data": n_data,
        "n_unscored": len(examples) - len(scores),
        "n_labelled": len(labels),
        "n_inconsistent": sum(label == 0 for label in labels),
        "n_below_threshold": sum(score < threshold for score in scores),
        "n_disagree": sum(flag is True for flag in disagreeing),
        "mean_score": sum(scores) / len(scores) if scores else None,
        "n_sentences": sum(len(example["sentences"]) for example in examples),
        "n_qas": sum(len(example["qas"]) for example in examples),
        "n_gold_spans": sum(len(example["gold"]) for example in examples),
        "n_with_gold": sum(bool(example["gold"]) for example in examples),
        "n_predicted_spans": sum(len(example["spans"]) for example in examples),
    }


def read_corrections(path: str) -> dict[str, dict[str, Any]]:
    """example_id -> the checker's suggested fix (`text`, `edits`) of each changed output of a corrections table
    (factlab.checker.pipeline.correction_command: example_id, changed, corrected, edits as JSON)."""
    frame = read_table(path)
    missing = [column for column in ("example_id", "changed", "corrected", "edits") if column not in frame.columns]
    if missing:
        raise DataError(f"the corrections table lacks columns {missing}", file=path)
    return {
        str(row.example_id): {"text": str(row.corrected), "edits": json.loads(row.edits)}
        for row in frame.itertuples(index=False)
        if bool(row.changed)
    }


def build_payload(
    data: pd.DataFrame,
    scores: pd.DataFrame,
    *,
    benchmark: str,
    scorer: str,
    settings: LocaliseSettings,
    gold: pd.DataFrame | None = None,
    metrics: Sequence[tuple[str, Any]] = (),
    corrections: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The page's data: every scored example joined to the benchmark (a scored example the benchmark lacks is an
    error; benchmark rows never scored are counted in `n_data`), ordered by example_id, sources stored once."""
    from factlab.models.token_localiser import TokenLocaliser

    data = data.assign(example_id=data["example_id"].astype(str))
    scores = scores.assign(example_id=scores["example_id"].astype(str))
    for name, frame in (("scores", scores), ("benchmark", data)):
        repeated = sorted(set(frame.loc[frame["example_id"].duplicated(), "example_id"]))
        if repeated:
            raise DataError(f"the {name} table repeats {len(repeated)} example_ids, e.g. {repeated[:3]}")
    missing = sorted(set(scores["example_id"]) - set(data["example_id"]))
    if missing:
        raise DataError(f"{len(missing)} scored example_ids are not in the benchmark, e.g. {missing[:3]}")
    columns = [column for column in ("example_id", "system", "source", "output", "label") if column in data.columns]
    joined = scores.merge(data[columns], on="example_id", how="left", validate="one_to_one").sort_values("example_id")
    spans = gold_by_example(gold, set(data["example_id"]))
    sources: dict[str, int] = {}
    kinds: set[str] = set()
    examples = []
    localiser = TokenLocaliser.from_dict(settings.token_localiser) if settings.token_localiser else None
    for row in joined.to_dict("records"):
        index = sources.setdefault(str(row["source"]), len(sources))
        gold_spans = spans.get(str(row["example_id"]), [])
        entry = example_entry(row, index, gold_spans, kinds, settings.token_threshold, localiser)
        examples.append(entry | {"correction": (corrections or {}).get(entry["id"])})
    return {
        "benchmark": benchmark,
        "scorer": scorer,
        "threshold": settings.threshold,
        "token_threshold": settings.token_threshold,
        "threshold_source": settings.threshold_source,
        "page_size": settings.page_size,
        "evidence_kind": " / ".join(sorted(kinds)) or None,
        "support_range": support_range(examples, settings.threshold),
        "summary": summarise(examples, len(data), settings.threshold),
        "metrics": [[name, value] for name, value in metrics],
        "sources": list(sources),
        "examples": examples,
    }


# --- HTML ------------------------------------------------------------------------------------------------------


def script_json(payload: Mapping[str, Any]) -> str:
    """JSON safe inside a `<script>` element: `<`, `>` and `&` written as \\u escapes (no `</script>`, no `<!--`)."""
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def format_value(value: Any) -> str:
    """A metric as shown: floats to 4 significant digits, missing values as an em dash."""
    if value is None:
        return "\u2014"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def summary_items(payload: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The header's (label, value) pairs from the payload's summary."""
    summary = payload["summary"]
    return [
        ("examples scored", f"{summary['n_examples']} of {summary['n_data']}"),
        ("unscored", str(summary["n_unscored"])),
        ("labelled inconsistent", f"{summary['n_inconsistent']} of {summary['n_labelled']}"),
        ("mean score", format_value(summary["mean_score"])),
        (f"score < {format_value(payload['threshold'])}", str(summary["n_below_threshold"])),
        ("disagree with gold label", str(summary["n_disagree"])),
        ("output sentences", str(summary["n_sentences"])),
        *([("QAs", str(summary["n_qas"]))] if summary["n_qas"] else []),
        ("gold spans", f"{summary['n_gold_spans']} in {summary['n_with_gold']} examples"),
        *(
            [
                (
                    "unsupported phrases",
                    f"{summary['n_predicted_spans']} at P(unsupported) > {format_value(payload['token_threshold'])}",
                )
            ]
            if summary["n_predicted_spans"]
            else []
        ),
        ("evidence", payload["evidence_kind"] or "none recorded"),
        ("thresholds", payload["threshold_source"]),
    ]


def definition_list(items: Iterable[tuple[str, str]], element_id: str) -> str:
    rows = "".join(f"<div><dt>{html.escape(name)}</dt><dd>{html.escape(value)}</dd></div>" for name, value in items)
    return f'<dl id="{element_id}">{rows}</dl>'


def render_html(payload: Mapping[str, Any]) -> str:
    """The self-contained page: header (summary, metrics) rendered here, examples rendered by the inline script."""
    from factlab.report.assets import PAGE_CSS, PAGE_JS

    title = f"{payload['benchmark']} \u00b7 {payload['scorer']}: where support is localised"
    metrics = [(str(name), format_value(value)) for name, value in payload["metrics"]]
    metrics_block = (
        f"<section><h2>Metrics</h2>{definition_list(metrics, 'metrics')}</section>" if metrics else '<dl id="metrics"></dl>'
    )
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n",
            f"<title>{html.escape(title)}</title>\n<style>{PAGE_CSS}</style>\n</head>\n<body>\n",
            f"<header><h1>{html.escape(title)}</h1>",
            definition_list(summary_items(payload), "summary"),
            metrics_block,
            "</header>\n<noscript><p>This page renders its examples with JavaScript.</p></noscript>\n",
            '<main id="app"></main>\n',
            f'<script type="application/json" id="report-data">{script_json(payload)}</script>\n',
            f"<script>{PAGE_JS}</script>\n</body>\n</html>\n",
        ]
    )
