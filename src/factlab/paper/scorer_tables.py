"""Tables of factlab's scorers from the metaeval and score outputs (nothing is recomputed here).

- `detection-table`: results/metaeval/detection/auc.csv, every scorer on every scored benchmark;
- `frank-scorers-table`: results/metaeval/frank_scorers/correlations.csv (FRANK's protocol);
- `localisation-table`: results/metaeval/localisation/tokens.csv;
- `retrieval-table`: results/score/wice_claims/scale_retrieval.json (SCALE's evidence retrieval);
- `qa-decomposition-table`: results/metaeval/qa_decomposition/{response,qa}_detection.csv (QASemConsistency's QAs
  against sentences and against the parser's QAs);
- `qa-detection-table`: results/metaeval/qasem_consistency/qa_detection{,_published}.csv (QASemConsistency's QA-level
  detection on the test split, beside the published balanced accuracies).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.paper import captions
from factlab.paper.tables import write_tables


def register(commands: Any) -> None:
    for name, help_text, sources, run in (
        ("detection-table", "factlab's scorers as detectors on every scored benchmark", ("--auc",), run_table),
        ("frank-scorers-table", "factlab's scorers under FRANK's protocol", ("--correlations",), run_table),
        ("localisation-table", "token-level localisation of factlab's scorers", ("--tokens",), run_table),
        ("retrieval-table", "SCALE's evidence retrieval on WiCE", ("--report",), run_table),
        (
            "qa-decomposition-table",
            "QASemConsistency: gold QAs vs parser QAs vs sentences",
            ("--responses", "--qas"),  # response_detection.csv, qa_detection.csv
            run_qa_decomposition_table,
        ),
        (
            "qa-detection-table",
            "QASemConsistency: QA-level detection of every scorer",
            ("--detection", "--published"),  # qa_detection.csv, qa_detection_published.csv
            run_qa_detection_table,
        ),
    ):
        parser = commands.add_parser(name, help=help_text)
        for source in sources:
            parser.add_argument(source, required=True)
        parser.add_argument("--out-md", required=True)
        parser.add_argument("--out-tex", required=True)
        parser.set_defaults(func=run, table=name)


def interval(low: float, high: float, scale: float = 1.0, decimals: int = 1) -> str:
    """`[low, high]` at the precision of the estimate beside it (AUC x 100: 1 decimal; a correlation: 3)."""
    return "" if pd.isna(low) or pd.isna(high) else f"[{scale * low:.{decimals}f}, {scale * high:.{decimals}f}]"


def detection_frame(auc: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "benchmark": auc["benchmark"],
            "scorer": auc["scorer"],
            "n": auc["n"],
            "AUC": 100 * auc["roc_auc"],
            "95% CI": [interval(lo, hi, 100) for lo, hi in zip(auc["roc_auc_ci_low"], auc["roc_auc_ci_high"], strict=True)],
            "vs best": 100 * auc["auc_diff_to_best"],
            "p": auc["p_vs_best"],
            "ECE": auc["ece"],
            "ECE eq-mass": auc["ece_equal_mass"],
            "ECE isotonic": auc["ece_isotonic"],
            "BAcc 0.5": auc["bacc_fixed05"],
            "BAcc val": auc["bacc_val_tuned"],
            "BAcc oracle": auc["bacc_oracle"],
        }
    ).sort_values(["benchmark", "AUC"], ascending=[True, False], kind="stable")


def frank_scorers_frame(correlations: pd.DataFrame) -> pd.DataFrame:
    table = correlations.pivot_table(index="metric", columns="subset", values="pearson", sort=False)
    table.columns = [f"Pearson {subset}" for subset in table.columns]
    on_all = correlations[correlations["subset"] == "all"].set_index("metric")
    table["95% CI (all)"] = [
        interval(on_all.at[m, "pearson_ci_low"], on_all.at[m, "pearson_ci_high"], decimals=3) for m in table.index
    ]
    table["n (all)"] = on_all["n"].reindex(table.index).astype("Int64")
    return table.reset_index().sort_values("Pearson all", ascending=False, kind="stable")


def localisation_frame(tokens: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "gold": tokens["dataset"],
            "scorer": tokens["scorer"],
            "policy": tokens["policy"],
            "tokens": tokens["n_tokens"],
            "unsupported": tokens["n_unsupported"],
            "precision": tokens["precision"],
            "recall": tokens["recall"],
            "F1": tokens["f1"],
            "F1 95% CI": [interval(lo, hi, decimals=3) for lo, hi in zip(tokens["f1_ci_low"], tokens["f1_ci_high"], strict=True)],
            "token AUC": tokens["roc_auc"],
            "AUC 95% CI": [  # on the token AUC's own 0-1 scale
                interval(lo, hi, decimals=3) for lo, hi in zip(tokens["roc_auc_ci_low"], tokens["roc_auc_ci_high"], strict=True)
            ],
        }
    )


def retrieval_frame(report: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "method": row["method"],
                "k": row["k"],
                "claims": row["claims"],
                "recall@k": row["recall"],
                "hit@k": row["hit"],
                "model calls / claim": row["mean_calls"],
                "sentences / claim": row["mean_sentences"],
            }
            for row in report["summary"]
        ]
    )


DECOMPOSITION_LABELS = {"gold_qas": "gold QAs", "parser_qas": "parser QAs", "sentences": "sentences"}


def qa_decomposition_frame(responses: pd.DataFrame, qas: pd.DataFrame) -> pd.DataFrame:
    """One row per task (and all): response AUC x 100 per decomposition; QA-level AUC x 100 of the QA's own score
    and of its sentence's, and their difference with its 95% CI."""
    auc = responses.pivot_table(index="task", columns="decomposition", values="roc_auc", sort=False, dropna=False)
    table = pd.DataFrame({"responses": responses.groupby("task", sort=False)["n"].max()})
    for decomposition, label in DECOMPOSITION_LABELS.items():
        table[f"AUC {label}"] = 100 * auc[decomposition]
    qa = qas.set_index("task").reindex(table.index)
    table["QAs"] = qa["qas"].astype("Int64")
    table["QA AUC own"] = 100 * qa["roc_auc_qa"]
    table["QA AUC sentence's"] = 100 * qa["roc_auc_sentence"]
    table["difference"] = 100 * qa["roc_auc_difference"]
    table["95% CI"] = [interval(lo, hi, 100) for lo, hi in zip(qa["difference_low"], qa["difference_high"], strict=True)]
    return table.reset_index()


def run_qa_decomposition_table(args: argparse.Namespace) -> None:
    frame = qa_decomposition_frame(pd.read_csv(args.responses), pd.read_csv(args.qas))
    write_tables(frame, args.out_md, args.out_tex, captions.QA_DECOMPOSITION, "tab:qa-decomposition")


QA_DETECTION_SPLIT = "test"  # the split the paper reports and the published numbers are on
QA_DETECTION_COLUMNS = {"BAcc": "bacc_fixed05", "AUC": "roc_auc", "BAcc dev-tuned": "bacc_dev_tuned"}  # label: column


def qa_detection_frame(detection: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """One row per scorer on the test split, then the published systems: per task, BAcc x 100 at 0.5 (the
    protocol) and ROC AUC x 100, each with its source-bootstrap CI, and BAcc x 100 at the dev-tuned threshold;
    published rows carry BAcc at 0.5 only."""
    test = detection[detection["split"] == QA_DETECTION_SPLIT]
    tasks = [task for task in dict.fromkeys(test["task"]) if task != "all"]
    rows = []
    for scorer, part in test.groupby("scorer", sort=False):
        by_task = part.set_index("task")
        row: dict[str, Any] = {"scorer": f"factlab: {scorer}"}
        for label, column in QA_DETECTION_COLUMNS.items():
            row.update({f"{task} {label}": 100 * by_task.loc[task, column] for task in tasks})
            if column in ("bacc_fixed05", "roc_auc"):
                bounds = by_task[[f"{column}_ci_low", f"{column}_ci_high"]]
                row.update({f"{task} {label} 95% CI": interval(*bounds.loc[task], 100) for task in tasks})
        rows.append(row)
    for system, part in published[published["split"] == QA_DETECTION_SPLIT].groupby("system", sort=False):
        by_task = part.set_index("task")["bacc_fixed05_x100"]
        rows.append({"scorer": f"{system} (published)", **{f"{task} BAcc": by_task.get(task) for task in tasks}})
    return pd.DataFrame(rows)


def run_qa_detection_table(args: argparse.Namespace) -> None:
    frame = qa_detection_frame(pd.read_csv(args.detection), pd.read_csv(args.published))
    write_tables(frame, args.out_md, args.out_tex, captions.QA_DETECTION, "tab:qa-detection")


def run_table(args: argparse.Namespace) -> None:
    if args.table == "detection-table":
        frame, caption, label = detection_frame(pd.read_csv(args.auc)), captions.DETECTION, "tab:detection"
    elif args.table == "frank-scorers-table":
        frame = frank_scorers_frame(pd.read_csv(args.correlations))
        caption, label = captions.FRANK_SCORERS, "tab:frank-scorers"
    elif args.table == "localisation-table":
        frame, caption, label = localisation_frame(pd.read_csv(args.tokens)), captions.LOCALISATION, "tab:localisation"
    else:
        report = json.loads(Path(args.report).read_text())
        frame, caption, label = retrieval_frame(report), captions.retrieval(report["settings"]["retrieval"]), "tab:retrieval"
    write_tables(frame, args.out_md, args.out_tex, caption, label)
