"""QASemConsistency (Cattan et al., 2024) corpus statistics and annotator agreement, per task.

Inputs: `qasem_consistency` (one row per response, or per sentence for Verifiability, with its
sentences and annotated spans) and `qasem_consistency_qas` (one row per QA with its 3 votes,
1 = supported). See factlab.data.adapters.qasem_consistency. One row per task, columns:

* responses — rows of `qasem_consistency`; sentences — their sentences; qas — QA pairs;
  qas_per_sentence = qas / sentences.
* unsupported_share — share of QAs whose majority label is "not supported" (label 0).
* mixed_predicate_share — among predicates with at least two QAs, the share whose QAs (by
  majority label) are partly supported and partly not. A predicate is one token of one response
  (`doc_id`, `predicate_idx`: the token offset in the response); predicates with a single QA
  cannot be mixed and are left out of the denominator. It measures how often a sentence-level
  or predicate-level label would hide a localised error.
* fleiss_kappa — Fleiss' κ of the 3 votes per QA (rating slots, not fixed people).
* fleiss_kappa_spans — Fleiss' κ of the 3 votes per annotated span (1 = covered); NaN when a
  task has no spans.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.errors import DataError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

STATISTICS_COLUMNS = [
    "task",
    "responses",
    "sentences",
    "qas",
    "qas_per_sentence",
    "unsupported_share",
    "mixed_predicate_share",
    "fleiss_kappa",
    "fleiss_kappa_spans",
]
PREDICATE_KEY = ["doc_id", "predicate_idx"]
VOTES_PER_ITEM = 3


def vote_matrix(votes: pd.Series, what: str) -> np.ndarray:
    """(items × 3) vote array; raises naming the first item without exactly 3 votes."""
    import numpy as np

    lengths = votes.map(len)
    wrong = lengths != VOTES_PER_ITEM
    if wrong.any():
        raise DataError(
            f"{int(wrong.sum())} {what} do not have {VOTES_PER_ITEM} votes (first: {votes.index[wrong.to_numpy()][0]})",
            field="votes",
        )
    return np.stack([np.asarray(v, dtype=np.int64) for v in votes])


def span_votes(responses: pd.DataFrame) -> pd.Series:
    """One entry (a vote array) per annotated span of the given responses."""
    import pandas as pd

    return pd.Series([votes for spans in responses["span_votes"] for votes in spans], dtype=object)


def predicate_mixes(qas: pd.DataFrame) -> pd.Series:
    """Per predicate with >= 2 QAs: True iff its QAs' majority labels include both 0 and 1."""
    labels = qas.groupby(PREDICATE_KEY)["label"].agg(["size", "nunique"])
    return labels.loc[labels["size"] >= 2, "nunique"] > 1


def task_statistics(responses: pd.DataFrame, qas: pd.DataFrame, task: str) -> dict[str, Any]:
    from factlab.metaeval import fleiss_kappa

    spans = span_votes(responses)
    n_sentences = int(responses["sentences"].map(len).sum())
    if int(responses["n_qas"].sum()) != len(qas):
        listed = int(responses["n_qas"].sum())
        raise DataError(f"task {task}: responses list {listed} QAs, the QA table has {len(qas)}", field="n_qas")
    return {
        "task": task,
        "responses": len(responses),
        "sentences": n_sentences,
        "qas": len(qas),
        "qas_per_sentence": len(qas) / n_sentences,
        "unsupported_share": float((qas["label"] == 0).mean()),
        "mixed_predicate_share": float(predicate_mixes(qas).mean()),
        "fleiss_kappa": fleiss_kappa(vote_matrix(qas["votes"], "QAs")),
        "fleiss_kappa_spans": fleiss_kappa(vote_matrix(spans, "spans")) if len(spans) else float("nan"),
    }


def statistics_table(responses: pd.DataFrame, qas: pd.DataFrame) -> pd.DataFrame:
    """One row per task with the columns of STATISTICS_COLUMNS (see the module docstring)."""
    import pandas as pd

    tasks = sorted(set(responses["task"]) | set(qas["task"]))
    rows = [task_statistics(responses[responses["task"] == t], qas[qas["task"] == t], t) for t in tasks]
    return pd.DataFrame(rows, columns=STATISTICS_COLUMNS)


def headline_metrics(responses: pd.DataFrame, qas: pd.DataFrame, statistics: pd.DataFrame) -> dict[str, Any]:
    """metrics.json: κ per task and over all tasks, and the counts behind the shares."""
    from factlab.metaeval import fleiss_kappa

    all_spans = span_votes(responses)
    mixes = predicate_mixes(qas)
    return {
        "fleiss_kappa": statistics.set_index("task")["fleiss_kappa"].round(6).to_dict(),
        "fleiss_kappa_spans": statistics.set_index("task")["fleiss_kappa_spans"].round(6).to_dict(),
        "fleiss_kappa_all_tasks": round(fleiss_kappa(vote_matrix(qas["votes"], "QAs")), 6),
        "fleiss_kappa_spans_all_tasks": round(fleiss_kappa(vote_matrix(all_spans, "spans")), 6),
        "qas": len(qas),
        "spans": len(all_spans),
        "predicates_with_2plus_qas": int(len(mixes)),
        "mixed_predicates": int(mixes.sum()),
    }


# --- command line -------------------------------------------------------------------------


def register(commands: Any) -> None:
    command = commands.add_parser("qasem-consistency", help="QASemConsistency statistics and agreement per task")
    command.add_argument("--responses", required=True, help="results/data/qasem_consistency.parquet")
    command.add_argument("--qas", required=True, help="results/data/qasem_consistency_qas.parquet")
    command.add_argument("--out-dir", required=True, help="writes statistics.csv and metrics.json")
    command.set_defaults(func=run_qasem_consistency)


def run_qasem_consistency(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.io import write_json, write_text

    responses, qas = pd.read_parquet(args.responses), pd.read_parquet(args.qas)
    statistics = statistics_table(responses, qas)
    out = Path(args.out_dir)
    write_text(statistics.to_csv(index=False), out / "statistics.csv")
    write_json(headline_metrics(responses, qas, statistics), out / "metrics.json")
