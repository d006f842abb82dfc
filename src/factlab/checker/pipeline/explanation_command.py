"""`factlab checker explanations`: whether the checker's explanations point at the QAs annotators found unsupported.

Inputs: QASemConsistency's gold QAs (`results/data/qasem_consistency_qas.parquet`: per QA its response, source,
predicate token, answer tokens and majority label, 1 = supported) and the checker folder (`results/checker/model`).
The checker reads every response against its source as `factlab check` does (its token localiser and validation
threshold, chosen on WiCE dev: nothing here is tuned on these responses). factlab.metaeval.explanations measures,
per split and task, the share of unsupported gold QAs whose predicate or answer an explanation's span overlaps
(coverage), the share of explanations that overlap an unsupported QA (precision) and that share for the same spans
placed anywhere in their response (chance).

Outputs: explanations.csv (the summary), qas.parquet (per gold QA: whether an explanation points at it, and which),
report.json, metrics.json (the test split's shares over all tasks).
"""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments, write_report
from factlab.errors import DataError
from factlab.io import write_json, write_parquet, write_text
from factlab.metaeval.arguments import headline_number
from factlab.metaeval.errors import StatisticsError

if TYPE_CHECKING:
    import pandas as pd

LOG = logging.getLogger(__name__)
QA_COLUMNS = ("example_id", "doc_id", "split", "task", "source", "response", "predicate_idx", "answer_idx", "label")
HEADLINE_SPLIT = "test"


def register(commands: Any) -> None:
    parser = commands.add_parser("explanations", help="the checker's explanations against QASemConsistency's gold QAs")
    parser.add_argument("--qas", required=True, help="results/data/qasem_consistency_qas.parquet")
    parser.add_argument("--checker", required=True, help="results/checker/model")
    parser.add_argument("--responses-per-split", type=int, default=None, help="the first N responses of each split (by id)")
    add_bootstrap_arguments(parser)
    parser.add_argument("--out", required=True, help="explanations.csv")
    parser.add_argument("--qa-out", required=True, help="qas.parquet")
    parser.add_argument("--report", required=True, help="report.json")
    parser.add_argument("--out-metrics", required=True, help="metrics.json")
    parser.set_defaults(func=run_explanations)


def read_qas(path: str) -> pd.DataFrame:
    import pandas as pd

    qas = pd.read_parquet(path)
    missing = [column for column in QA_COLUMNS if column not in qas.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}", file=path, field=missing[0])
    return qas


def chosen_responses(qas: pd.DataFrame, per_split: int | None) -> pd.DataFrame:
    """One row per response (doc_id): split, task, source, response; the first `per_split` of each split by id."""
    responses = qas.drop_duplicates("doc_id").sort_values(["split", "doc_id"])[["doc_id", "split", "task", "source", "response"]]
    if per_split is not None:
        responses = responses.groupby("split", sort=True).head(per_split)
    return responses.reset_index(drop=True)


def pointing_frames(
    responses: pd.DataFrame, qas: pd.DataFrame, spans: dict[str, list[dict[str, Any]]], path: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per gold QA of a scored response and per explanation: factlab.metaeval.explanations' rows, with ids."""
    import pandas as pd

    from factlab.metaeval.explanations import qa_elements, response_rows, token_offsets

    qa_records, span_records = [], []
    bad: list[str] = []
    gold_of = dict(tuple(qas.groupby("doc_id", sort=False)))
    for response in responses.itertuples(index=False):
        if response.doc_id not in spans:
            continue
        found = spans[response.doc_id]
        gold = gold_of[response.doc_id]
        n_tokens = len(token_offsets(response.response))
        elements = []
        for qa in gold.itertuples(index=False):
            try:
                elements.append((qa_elements(qa.predicate_idx, qa.answer_idx, n_tokens), int(qa.label) == 1))
            except StatisticsError as error:
                bad.append(f"{qa.example_id}: {error}")
        if bad:
            continue
        qa_rows, span_rows = response_rows(response.response, [(int(s["start"]), int(s["end"])) for s in found], elements)
        where = {"split": response.split, "task": response.task, "response": response.doc_id}
        for qa, row in zip(gold.itertuples(index=False), qa_rows, strict=True):
            span = found[int(row["span"])] if int(row["span"]) >= 0 else None
            qa_records.append(
                where
                | {"example_id": qa.example_id, "question": qa.question, "answer": qa.answer, "predicate": qa.predicate}
                | row
                | {"span_text": span["text"] if span else None, "explanation": span["explanation"] if span else None}
            )
        span_records.extend(where | {"text": span["text"]} | row for span, row in zip(found, span_rows, strict=True))
    if bad:
        raise DataError(
            f"{len(bad)} QA(s) with tokens outside their response: " + "; ".join(bad[:20]), file=path, field="answer_idx"
        )
    span_columns = ["split", "task", "response", "text", "on_unsupported", "chance"]
    return pd.DataFrame(qa_records), pd.DataFrame(span_records, columns=span_columns)


def run_explanations(args: argparse.Namespace) -> None:
    from factlab.checker.api import Checker
    from factlab.metaeval.explanations import summary_rows

    qas = read_qas(args.qas)
    responses = chosen_responses(qas, args.responses_per_split)
    checker = Checker(args.checker, progress=True)
    checked = checker.check(responses["source"].tolist(), responses["response"].tolist(), ids=responses["doc_id"].tolist())
    scored = checked[checked["score"].notna()]
    spans = dict(zip(scored["id"].astype(str), scored["spans"], strict=True))
    LOG.info("checked %d responses, %d scored", len(checked), len(scored))
    qa_frame, span_frame = pointing_frames(responses, qas, spans, args.qas)
    scored_responses = responses[responses["doc_id"].isin(spans)].rename(columns={"doc_id": "response"})
    summary = summary_rows(
        scored_responses, qa_frame, span_frame, resamples=args.resamples, confidence=args.confidence, seed=args.seed
    )
    write_text(summary.to_csv(index=False, float_format="%.6g"), args.out)
    write_parquet(qa_frame, args.qa_out)
    write_report(
        {
            "qas": args.qas,
            "checker": {
                "folder": args.checker,
                "token_threshold": checker.settings.token_threshold,
                "localiser": checker.localiser is not None,
            },
            "responses": {"chosen": len(responses), "scored": len(scored), "per_split": args.responses_per_split},
            "unscored": sorted(set(responses["doc_id"]) - set(spans)),
            "bootstrap": {"seed": args.seed, "resamples": args.resamples, "confidence": args.confidence, "groups": "responses"},
        },
        args.report,
    )
    headline = summary[(summary["split"] == HEADLINE_SPLIT) & (summary["task"] == "all")]
    row = headline.iloc[0] if len(headline) else None
    write_json(
        {
            name: headline_number(row[name]) if row is not None else None
            for name in ("coverage", "coverage_ci_low", "coverage_ci_high", "precision", "chance_precision")
        },
        args.out_metrics,
    )
