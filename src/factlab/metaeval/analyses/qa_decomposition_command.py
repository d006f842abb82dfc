"""`factlab metaeval qa-decomposition`: what QASemConsistency's decomposition into QAs buys, and what an
automatic one costs.

QASemConsistency's claim is that a QA localises an error more finely than the sentence holding it.
The score stage scores the gold-QA benchmark (`qasem_consistency`) three ways with the same model,
aggregation and threshold (rule `score_qa_decomposition`): `gold_qas` (the annotated QAs),
`parser_qas` (factlab's QASem parser's QAs) and `sentences` (each output sentence a hypothesis).

QA level (`qa_detection.csv`), per gold QA of `qasem_consistency_qas` (label = majority of the 3
votes, 1 = supported: the adapter turns upstream's 0 = supported around,
factlab.data.adapters.qasem_consistency), two scores are compared against the label:

- `qa_score`: the QA's own score (the `gold_qas` scoring's `units` detail, unit `qa`, keyed by the
  gold QA id);
- `sentence_score`: the score of the output sentence the QA belongs to (the `sentences` scoring,
  unit `sentence`, joined on example and sentence index): every QA of a sentence gets the same
  score, which is what a sentence-level scorer can say about it.

Per task and over all QAs: ROC AUC of each (positive class 1 = supported, as in
factlab.metaeval.detection), balanced accuracy with a QA predicted supported iff score >= 0.5
(the paper's protocol, untuned), and the AUC difference with a paired bootstrap interval that
resamples responses (the QAs of one response are dependent).

Response level (`response_detection.csv`): each decomposition's response score (the aggregation of
`score.qasem_consistency`) against the response label, per task and over all responses: ROC AUC with a
response-bootstrap interval and balanced accuracy at 0.5 (`factlab.metaeval.analyses.detection_command.detection_row`).
Parser QAs against gold QAs is the cost of the automatic decomposition; QAs against sentences its value.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments
from factlab.errors import DataError
from factlab.io import write_text
from factlab.metaeval.analyses.detection_command import detection_row as response_detection_row
from factlab.metaeval.analyses.score_tables import labelled_scores
from factlab.metaeval.errors import StatisticsError

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

ALL = "all"
QA_COLUMNS = ["qa_id", "example_id", "task", "label", "sentence_index", "qa_score", "sentence_score"]
DETECTION_COLUMNS = [
    "task",
    "qas",
    "supported",
    "unsupported",
    "roc_auc_qa",
    "roc_auc_sentence",
    "roc_auc_difference",
    "difference_low",
    "difference_high",
    "balanced_accuracy_qa",
    "balanced_accuracy_sentence",
]


def unit_rows(scores: pd.DataFrame, unit: str, what: str) -> pd.DataFrame:
    """The `units` detail of a qasem_consistency score table as rows (example_id + the unit's fields) of kind `unit`."""
    import pandas as pd

    if "units" not in scores.columns:
        raise DataError("not a qasem_consistency score table (no 'units' detail column)", file=what, field="units")
    rows = [
        {"example_id": example_id, **item}
        for example_id, items in zip(scores["example_id"], scores["units"], strict=True)
        for item in items
        if item["unit"] == unit
    ]
    columns = ["example_id", "unit", "qa_id", "sentence_index", "score"]
    return pd.DataFrame(rows, columns=None if rows else columns)


def qa_table(qa_scores: pd.DataFrame, sentence_scores: pd.DataFrame, gold_qas: pd.DataFrame) -> pd.DataFrame:
    """One row per gold QA of the scored responses: its label and both scores (QA_COLUMNS).

    `qa_scores`: decomposition qas, qa_source gold; `sentence_scores`: decomposition sentences;
    `gold_qas`: the `qasem_consistency_qas` benchmark (example_id = QA id, doc_id = response).
    Every gold QA of a scored response needs a QA score and a sentence score.
    """
    for column in ("example_id", "doc_id", "label", "task"):
        if column not in gold_qas.columns:
            raise DataError(f"the gold QA table lacks {column!r}", file="qasem_consistency_qas", field=column)
    qas = unit_rows(qa_scores, "qa", "QA scores")
    sentences = unit_rows(sentence_scores, "sentence", "sentence scores")
    gold = gold_qas[gold_qas["doc_id"].isin(set(qa_scores["example_id"]))]
    joined = gold[["example_id", "doc_id", "task", "label"]].merge(
        qas[["qa_id", "sentence_index", "score"]], left_on="example_id", right_on="qa_id", how="left"
    )
    missing = joined["score"].isna()
    if missing.any():
        raise DataError("gold QA without a QA score", file="QA scores", record=str(joined.loc[missing, "example_id"].iloc[0]))
    joined = joined.rename(columns={"score": "qa_score"}).merge(
        sentences[["example_id", "sentence_index", "score"]].rename(columns={"example_id": "doc_id", "score": "sentence_score"}),
        on=["doc_id", "sentence_index"],
        how="left",
    )
    missing = joined["sentence_score"].isna()
    if missing.any():
        row = joined.loc[missing].iloc[0]
        message = f"no sentence score for sentence {row['sentence_index']} of this QA's response"
        raise DataError(message, file="sentence scores", record=str(row["example_id"]), field="sentence_index")
    table = joined.drop(columns="example_id").rename(columns={"doc_id": "example_id"})
    table["label"] = table["label"].astype(int)
    return table[QA_COLUMNS].reset_index(drop=True)


def auc_difference(labels: ArrayLike, first: ArrayLike, second: ArrayLike) -> float:
    from factlab.metaeval.detection import roc_auc

    return roc_auc(labels, first) - roc_auc(labels, second)


def detection_row(table: pd.DataFrame, task: str, n_resamples: int, confidence: float, seed: int) -> dict[str, Any]:
    import numpy as np

    from factlab.metaeval.bootstrap import bootstrap_ci
    from factlab.metaeval.detection import FIXED_THRESHOLD, evaluate_at_threshold, roc_auc

    labels = table["label"].to_numpy()
    qa, sentence = table["qa_score"].to_numpy(dtype=float), table["sentence_score"].to_numpy(dtype=float)
    row: dict[str, Any] = {
        "task": task,
        "qas": len(table),
        "supported": int(labels.sum()),
        "unsupported": int(len(labels) - labels.sum()),
    }
    try:
        row["roc_auc_qa"], row["roc_auc_sentence"] = roc_auc(labels, qa), roc_auc(labels, sentence)
    except StatisticsError:  # one class only (a small task): no AUC, no balanced accuracy
        return {**{column: float("nan") for column in DETECTION_COLUMNS}, **row}
    row["roc_auc_difference"] = row["roc_auc_qa"] - row["roc_auc_sentence"]
    row["balanced_accuracy_qa"] = evaluate_at_threshold(labels, qa, FIXED_THRESHOLD, "fixed05").balanced_accuracy
    row["balanced_accuracy_sentence"] = evaluate_at_threshold(labels, sentence, FIXED_THRESHOLD, "fixed05").balanced_accuracy
    try:
        ci = bootstrap_ci(
            auc_difference,
            labels,
            qa,
            sentence,
            groups=table["example_id"].to_numpy(),
            n_resamples=n_resamples,
            confidence=confidence,
            rng=np.random.default_rng(seed),
        )
        row["difference_low"], row["difference_high"] = ci.low, ci.high
    except StatisticsError:  # fewer than 2 responses, or too many one-class resamples
        row["difference_low"] = row["difference_high"] = float("nan")
    return row


def qa_detection(
    table: pd.DataFrame,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 2022,
    tasks: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per task (and `all`): ROC AUC of the QA score and of its sentence's score against the QA label (DETECTION_COLUMNS)."""
    import pandas as pd

    names = sorted(set(table["task"])) if tasks is None else list(tasks)
    rows = [detection_row(table[table["task"] == task], task, n_resamples, confidence, seed) for task in names]
    rows.append(detection_row(table, ALL, n_resamples, confidence, seed))
    return pd.DataFrame(rows, columns=DETECTION_COLUMNS)


DECOMPOSITIONS = ("gold_qas", "parser_qas", "sentences")
RESPONSE_COLUMNS = ["decomposition", "task", "n", "n_unscored", "roc_auc", "roc_auc_ci_low", "roc_auc_ci_high", "bacc_fixed05"]


def response_detection(
    data: pd.DataFrame,
    scores: dict[str, pd.DataFrame],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
    ece_bins: int,
) -> pd.DataFrame:
    """Per decomposition, per task and `all`: the response score as a detector of the response label (RESPONSE_COLUMNS)."""
    import pandas as pd

    rows = []
    for decomposition, table in scores.items():
        labelled = labelled_scores(data, table).merge(data[["example_id", "task"]], on="example_id")
        for task in [*sorted(set(labelled["task"])), ALL]:
            part = labelled if task == ALL else labelled[labelled["task"] == task]
            row = response_detection_row(
                decomposition,
                task,
                part,
                None,
                set(),
                resamples=n_resamples,
                confidence=confidence,
                seed=seed,
                ece_bins=ece_bins,
            )
            rows.append({**row, "decomposition": decomposition, "task": task})
    return pd.DataFrame(rows)[RESPONSE_COLUMNS]


def named_paths(items: Sequence[str]) -> dict[str, str]:
    """`DECOMPOSITION=PATH` arguments as a mapping; an unknown decomposition or a missing `=` is an error."""
    named: dict[str, str] = {}
    for item in items:
        name, separator, path = item.partition("=")
        if not separator or name not in DECOMPOSITIONS:
            raise DataError(f"expected DECOMPOSITION=PATH with a decomposition of {list(DECOMPOSITIONS)}", field=item)
        named[name] = path
    return named


def run_qa_decomposition(args: argparse.Namespace) -> None:
    import pandas as pd

    scores = {name: pd.read_parquet(path) for name, path in named_paths(args.scores).items()}
    missing = [name for name in DECOMPOSITIONS if name not in scores]
    if missing:
        raise DataError(f"no score table of the decompositions {missing}", file=" ".join(args.scores), field="decomposition")
    data, gold = pd.read_parquet(args.data), pd.read_parquet(args.gold_qas)
    settings = {"n_resamples": args.resamples, "confidence": args.confidence, "seed": args.seed}
    qas = qa_detection(qa_table(scores["gold_qas"], scores["sentences"], gold), **settings)
    responses = response_detection(data, scores, **settings, ece_bins=args.ece_bins)
    write_text(qas.to_csv(index=False, float_format="%.6g"), args.out_qas)
    write_text(responses.to_csv(index=False, float_format="%.6g"), args.out_responses)


def register(commands: Any) -> None:
    command = commands.add_parser(
        "qa-decomposition", help="QASemConsistency: gold QAs vs parser QAs vs sentences, per QA and per response"
    )
    command.add_argument("--data", required=True, help="results/data/qasem_consistency.parquet (response labels)")
    command.add_argument("--gold-qas", required=True, help="results/data/qasem_consistency_qas.parquet (QA labels)")
    command.add_argument(
        "--scores",
        nargs="+",
        required=True,
        help="DECOMPOSITION=PATH: each decomposition's score table (results/score/<benchmark>/qa_decomposition.<name>.parquet, "
        "or the scorer's own table where its settings are that decomposition's)",
    )
    add_bootstrap_arguments(command)
    command.add_argument("--ece-bins", type=int, required=True)
    command.add_argument("--out-qas", required=True, help="CSV: QA-level detection, QA vs sentence score")
    command.add_argument("--out-responses", required=True, help="CSV: response-level detection per decomposition")
    command.set_defaults(func=run_qa_decomposition)
