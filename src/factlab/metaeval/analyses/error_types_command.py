"""`factlab metaeval error-types`: the aligner's error-type head against FRANK's annotated error categories.

Inputs: FRANK (`results/data/frank.parquet`: per summary, the share of its sentences free of each category, and
FRANK's validation/test split) and AlignScore's FRANK scores with the type head's detail
(`results/score/frank/alignscore.parquet`: per sentence `support` and `error_types`). Statistics:
factlab.metaeval.error_types.

categories.csv: per category (EntE, CircE, RelE, OutE, CorefE) and method — `type_head` (an unsupported
sentence of that type), `unsupported` (1 - the AlignScore score, the same for every category: what the type
adds), `rule` (novel words of the category's kind), `majority` (a constant), and `perfect_detector`, a reference
rather than a method: the annotations' own "has any of the five errors", the same for every category, so the
AUC a detector that is always right but never types would reach — the test split's ROC AUC and its
document-bootstrap CI, the ROC AUC among the test summaries with at least one of the five errors (how well a
method tells the types apart once there is an error), the F1 of presence at the threshold that maximises F1 on
the validation split, and the counts. confusion.csv: the predicted top type against the annotated one, on the
test summaries with exactly one evaluated category. report.json: the macro AUCs over the five, overall and among
errors. metrics.json: the AUC per category and method and the macro AUC over the five, methods only (not the
perfect detector, which reads the annotations).
"""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments, write_report
from factlab.errors import DataError
from factlab.io import write_json, write_text
from factlab.metaeval.arguments import headline_number
from factlab.metaeval.errors import StatisticsError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from factlab.metaeval.error_types import Word

LOG = logging.getLogger(__name__)
METHODS = ("type_head", "unsupported", "rule", "majority")
REFERENCES = ("perfect_detector",)  # read the annotations: shown beside the methods, never reported as one
VALIDATION, EVALUATED = "validation", "test"


def register(commands: Any) -> None:
    parser = commands.add_parser("error-types", help="the error-type head against FRANK's error categories")
    parser.add_argument("--data", required=True, help="results/data/frank.parquet")
    parser.add_argument("--scores", required=True, help="results/score/frank/alignscore.parquet (with error_types)")
    add_bootstrap_arguments(parser)
    parser.add_argument("--out", required=True, help="categories.csv")
    parser.add_argument("--confusion", required=True, help="confusion.csv")
    parser.add_argument("--report", required=True, help="report.json")
    parser.add_argument("--out-metrics", required=True, help="metrics.json")
    parser.set_defaults(func=run_error_types)


def parsed_words(texts: list[str]) -> dict[str, list[Word]]:
    """Each distinct text's words (lower-cased text, lemma, part of speech), parsed once."""
    from factlab.metaeval.error_types import Word
    from factlab.runtime import load_spacy

    nlp = load_spacy(disable=("ner", "parser"))
    distinct = sorted(set(texts))
    return {
        text: [Word(t.lower_, t.lemma_.lower(), t.pos_) for t in doc if not t.is_punct and not t.is_space]
        for text, doc in zip(distinct, nlp.pipe(distinct, batch_size=16), strict=True)
    }


def summary_table(data: pd.DataFrame, scores: pd.DataFrame, *, scores_path: str) -> tuple[pd.DataFrame, dict[str, int]]:
    """One row per scored FRANK summary: split, doc_id, presence and every method's score per category."""
    import numpy as np
    import pandas as pd

    from factlab.metaeval.error_types import EVALUATED_TYPES, category_present, rule_scores, summary_type_scores

    if "sentences" not in scores.columns:
        raise DataError("no per-sentence detail", file=scores_path, field="sentences")
    joined = data.merge(scores[["example_id", "score", "sentences"]], on="example_id", how="inner", validate="one_to_one")
    counts = {"summaries": len(data), "scored": int(joined["score"].notna().sum())}
    joined = joined[joined["score"].notna()].reset_index(drop=True)
    typed = [summary_type_scores(list(sentences)) for sentences in joined["sentences"]]
    if all(np.isnan(row[name]) for row in typed for name in EVALUATED_TYPES):
        raise DataError("no sentence has error_types: score with an aligner trained with the type head", file=scores_path)
    words = parsed_words(joined["output"].astype(str).tolist() + joined["source"].astype(str).tolist())
    rules = [rule_scores(words[o], words[s]) for o, s in zip(joined["output"], joined["source"], strict=True)]
    columns: dict[str, Any] = {"example_id": joined["example_id"], "doc_id": joined["doc_id"], "split": joined["split"]}
    any_present = np.zeros(len(joined), dtype=bool)
    for name in EVALUATED_TYPES:
        columns[f"{name}_present"] = category_present(joined[name])
        any_present |= np.asarray(columns[f"{name}_present"], dtype=bool)
    columns["any_present"] = any_present
    for name in EVALUATED_TYPES:
        columns[f"{name}_type_head"] = [row[name] for row in typed]
        columns[f"{name}_unsupported"] = 1.0 - joined["score"].to_numpy(dtype=float)
        columns[f"{name}_rule"] = [row[name] for row in rules]
        columns[f"{name}_majority"] = 0.0
        columns[f"{name}_perfect_detector"] = any_present.astype(float)
    table = pd.DataFrame(columns)
    counts["without_type_scores"] = int(table[[f"{name}_type_head" for name in EVALUATED_TYPES]].isna().any(axis=1).sum())
    return table.dropna().reset_index(drop=True), counts


def auc_among_errors(present: np.ndarray, score: np.ndarray) -> float:
    """ROC AUC of `score` for one category among summaries that have some error (ties count half, so a constant
    gets 0.5); NaN where there are none, or the category is always or never present among them."""
    import numpy as np

    from factlab.metaeval.error_types import presence_auc

    if len(present) == 0:
        return np.nan
    try:
        return presence_auc(present, score)
    except StatisticsError:
        return np.nan


def category_rows(table: pd.DataFrame, settings: argparse.Namespace) -> list[dict[str, Any]]:
    import numpy as np

    from factlab.metaeval.bootstrap import bootstrap_ci
    from factlab.metaeval.error_types import EVALUATED_TYPES, best_f1_threshold, presence_auc
    from factlab.metaeval.localisation import token_f1

    validation, evaluated = table[table["split"] == VALIDATION], table[table["split"] == EVALUATED]
    with_errors = evaluated["any_present"].to_numpy(dtype=bool)
    rows = []
    for name in EVALUATED_TYPES:
        gold = evaluated[f"{name}_present"].to_numpy()
        for method in (*METHODS, *REFERENCES):
            score = evaluated[f"{name}_{method}"].to_numpy(dtype=float)
            threshold = best_f1_threshold(validation[f"{name}_present"].to_numpy(), validation[f"{name}_{method}"].to_numpy())
            auc = low = high = np.nan
            if method != "majority":
                try:
                    auc = presence_auc(gold, score)
                    interval = bootstrap_ci(
                        presence_auc,
                        gold,
                        score,
                        groups=evaluated["doc_id"].astype(str).to_numpy(),
                        n_resamples=settings.resamples,
                        confidence=settings.confidence,
                        rng=np.random.default_rng(settings.seed),
                    )
                    low, high = interval.low, interval.high
                except StatisticsError as error:
                    LOG.warning("%s %s: no AUC (%s)", name, method, error)
            else:
                auc = 0.5  # a constant ranks nothing
            rows.append(
                {
                    "category": name,
                    "method": method,
                    "n": len(gold),
                    "n_present": int(gold.sum()),
                    "roc_auc": auc,
                    "roc_auc_ci_low": low,
                    "roc_auc_ci_high": high,
                    "roc_auc_among_errors": auc_among_errors(gold[with_errors], score[with_errors]),
                    "threshold": threshold,
                    "f1": token_f1(gold, (score >= threshold).astype(np.int64)),
                }
            )
    return rows


def confusion_frame(table: pd.DataFrame) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    from factlab.metaeval.error_types import EVALUATED_TYPES, confusion

    evaluated = table[table["split"] == EVALUATED]
    present = evaluated[[f"{name}_present" for name in EVALUATED_TYPES]].to_numpy()
    single = present.sum(axis=1) == 1
    annotated = [EVALUATED_TYPES[int(np.argmax(row))] for row in present[single]]
    scores = evaluated[[f"{name}_type_head" for name in EVALUATED_TYPES]].to_numpy()[single]
    predicted = [EVALUATED_TYPES[int(np.argmax(row))] for row in scores]
    matrix = confusion(predicted, annotated)
    return pd.DataFrame(matrix, index=pd.Index(EVALUATED_TYPES, name="annotated"), columns=list(EVALUATED_TYPES))


def run_error_types(args: argparse.Namespace) -> None:
    import numpy as np
    import pandas as pd

    from factlab.metaeval.error_types import EVALUATED_TYPES

    data = pd.read_parquet(args.data)
    missing = [name for name in (*EVALUATED_TYPES, "split", "doc_id", "source", "output") if name not in data.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}", file=args.data, field=missing[0])
    table, counts = summary_table(data, pd.read_parquet(args.scores), scores_path=args.scores)
    rows = pd.DataFrame(category_rows(table, args))
    write_text(rows.to_csv(index=False, float_format="%.6g"), args.out)
    matrix = confusion_frame(table)
    write_text(matrix.to_csv(), args.confusion)
    shown = (*METHODS, *REFERENCES)
    macro = {method: float(rows.loc[rows["method"] == method, "roc_auc"].mean()) for method in shown}
    macro_among_errors = {method: float(rows.loc[rows["method"] == method, "roc_auc_among_errors"].mean()) for method in shown}
    write_report(
        {
            "counts": counts,
            "validation_summaries": int((table["split"] == VALIDATION).sum()),
            "test_summaries": int((table["split"] == EVALUATED).sum()),
            "single_type_test_summaries": int(matrix.to_numpy().sum()),
            "test_summaries_with_errors": int(table.loc[table["split"] == EVALUATED, "any_present"].sum()),
            "macro_roc_auc": macro,
            "macro_roc_auc_among_errors": macro_among_errors,
            "confusion_accuracy": float(np.trace(matrix.to_numpy()) / max(matrix.to_numpy().sum(), 1)),
        },
        args.report,
    )
    metrics: dict[str, Any] = {"macro_roc_auc": {method: headline_number(macro[method]) for method in METHODS}}
    for row in rows[rows["method"].isin(METHODS)].itertuples(index=False):
        metrics.setdefault(row.category, {})[row.method] = headline_number(row.roc_auc)
    write_json(metrics, args.out_metrics)
