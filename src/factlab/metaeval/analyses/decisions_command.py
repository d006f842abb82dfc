"""`factlab metaeval decisions`: how often the checker cries wolf, on every labelled benchmark it was not tuned on.

The checker's decisions are read, not recomputed with its model: its scores are AlignScore's score tables
(`results/score/<benchmark>/alignscore.parquet`, the same numbers `factlab check` gives the same pairs), its
verdicts come from those scores at the threshold and uncertain band recorded in the checker folder
(factlab.checker.calibration.verdicts), and its spans from the tables' token support read as `factlab check`
reads it (factlab.checker.explain.span_records, with the folder's token threshold and token localiser). An
unscored output gets no verdict and no span, as from `factlab check`. Whether a consistent output offered a correction
is rewritten takes the model: the checker folder's own correction (factlab.checker.api.Checker.corrections, fed the
table's sentence detail and spans) scores its candidate edits as `factlab check` scores them.

Each benchmark is measured on its test split where it has one, else on all its labelled rows (`split`: test or
all). The `--validation` benchmarks chose the threshold, band and correction bar on their validation splits: such a
benchmark is measured on its test split, and not at all without one. decisions.csv: one
row per benchmark, the statistics of factlab.metaeval.decisions (consistent outputs flagged, inconsistent ones
caught, coverage, consistent outputs given a span, offered a correction and rewritten, each with its Wilson
interval) and
`n_unscored`. metrics.json: the recorded decision settings and each benchmark's shares.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import confidence_level
from factlab.errors import DataError, FactlabError
from factlab.io import write_json, write_text
from factlab.metaeval.arguments import headline_number

if TYPE_CHECKING:
    import pandas as pd

    from factlab.checker.api import Checker
    from factlab.checker.folder import CheckerSettings

LOG = logging.getLogger(__name__)
CHECKER_SCORER = "alignscore"  # the score tables whose numbers are the checker's
EVALUATED_SPLIT = "test"
ALL_ROWS = "all"
NO_SCORE = -2  # the verdict code of an unscored output (calibration.verdicts: 1, 0, -1 uncertain)
SCORE_COLUMNS = ("example_id", "score", "sentences", "tokens")
DATA_COLUMNS = ("example_id", "source", "output", "label")


def register(commands: Any) -> None:
    parser = commands.add_parser("decisions", help="how often the checker flags consistent outputs, per benchmark")
    parser.add_argument("--checker", required=True, help="the checker folder (results/checker/model: checker.json)")
    parser.add_argument("--scores", nargs="+", required=True, help="results/score/<benchmark>/alignscore.parquet")
    parser.add_argument("--data", nargs="+", required=True, help="results/data/<benchmark>.parquet of the same benchmarks")
    parser.add_argument(
        "--validation", nargs="*", default=[], help="benchmarks whose validation splits tuned the decisions: test split only"
    )
    parser.add_argument("--confidence", type=confidence_level, required=True, help="of the Wilson intervals, e.g. 0.95")
    parser.add_argument("--out", required=True, help="decisions.csv: one row per benchmark")
    parser.add_argument("--out-metrics", required=True, help="metrics.json (dvc metrics)")
    parser.set_defaults(func=run_decisions)


def evaluated_rows(data: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The labelled rows a benchmark is measured on, and which: its test split where it has one, else all."""
    labelled = data[data["label"].notna()]
    if "split" in data.columns and (data["split"] == EVALUATED_SPLIT).any():
        return labelled[labelled["split"] == EVALUATED_SPLIT], EVALUATED_SPLIT
    return labelled, ALL_ROWS


def scored_rows(data: pd.DataFrame, rows: pd.DataFrame, scores: pd.DataFrame, where: str) -> pd.DataFrame:
    """Those of `rows` (of benchmark `data`) that the score table `where` scored, with their score, sentence detail
    and token support; every scored example must be in the benchmark."""
    missing = [column for column in SCORE_COLUMNS if column not in scores.columns]
    if missing:
        raise DataError(f"missing column(s) {missing} (AlignScore scored with localise)", file=where, field=missing[0])
    stray = ~scores["example_id"].isin(data["example_id"])
    if stray.any():
        example_id = scores.loc[stray, "example_id"].iloc[0]
        raise DataError("a scored example is not in the benchmark", file=where, record=str(example_id))
    return rows.merge(scores[list(SCORE_COLUMNS)], on="example_id", how="inner", validate="one_to_one")


def example_decisions(rows: pd.DataFrame, settings: CheckerSettings, checker: Checker | None = None) -> pd.DataFrame:
    """Per scored output (`scored_rows`): its label, the checker's verdict code (calibration.verdicts; `NO_SCORE`
    without a score), how many spans `factlab check` marks in it and, for a consistent output offered a correction,
    whether the correction rewrites it (`checker`, the folder's model, scores the edits; without it none is)."""
    import numpy as np
    import pandas as pd

    from factlab.checker.calibration import verdicts
    from factlab.checker.explain import span_records
    from factlab.metaeval.decisions import INCONSISTENT_VERDICT
    from factlab.models.token_localiser import TokenLocaliser

    localiser = TokenLocaliser.from_dict(settings.token_localiser) if settings.token_localiser else None
    band = None if settings.uncertain_band is None else (settings.uncertain_band[0], settings.uncertain_band[1])
    scores = rows["score"].to_numpy(dtype=np.float64)
    scored = ~np.isnan(scores)
    codes = np.full(len(rows), NO_SCORE, dtype=np.int64)
    codes[scored] = verdicts(scores[scored], settings.threshold, band)
    spans = [
        []
        if row.sentences is None
        else span_records(
            {"tokens": row.tokens, "sentences": list(row.sentences)},
            str(row.output),
            settings.token_threshold,
            str(row.source),
            localiser,
        )
        for row in rows.itertuples(index=False)
    ]
    labels = rows["label"].astype(int).to_numpy()
    counts = np.asarray([len(found) for found in spans], dtype=np.int64)
    offered = (labels == 1) & (codes == INCONSISTENT_VERDICT) & (counts > 0)
    rewritten = np.zeros(len(rows), dtype=bool)
    if checker is not None and offered.any():
        rewritten[offered] = corrections_change(rows[offered], checker)
    return pd.DataFrame(
        {"example_id": rows["example_id"].to_numpy(), "label": labels, "verdict": codes, "spans": counts, "rewritten": rewritten}
    )


def corrections_change(rows: pd.DataFrame, checker: Checker) -> list[bool]:
    """Whether the checker's correction changes each of `rows` (`scored_rows`), as `factlab check` corrects the same
    outputs (Checker.corrections on what Checker.table_rows reads off the score table)."""
    found, details, outputs, sources = checker.table_rows(rows, rows)
    corrected = checker.corrections(found, details, outputs, sources)
    return [bool((corrected.get(str(example_id)) or {}).get("edits")) for example_id in rows["example_id"]]


def benchmark_decisions(
    data: pd.DataFrame,
    scores: pd.DataFrame,
    settings: CheckerSettings,
    confidence: float,
    where: str,
    checker: Checker | None = None,
) -> dict[str, Any] | None:
    """One benchmark's row of decisions.csv but its name; None where its evaluated rows hold no scored output."""
    from factlab.metaeval.decisions import decision_row

    rows, split = evaluated_rows(data)
    decided = example_decisions(scored_rows(data, rows[list(DATA_COLUMNS)], scores, where), settings, checker)
    if decided.empty:
        return None
    return {
        "split": split,
        "n_unscored": int((decided["verdict"] == NO_SCORE).sum()),
        **decision_row(decided["label"], decided["verdict"], decided["spans"], decided["rewritten"], confidence),
    }


def decisions_metrics(table: pd.DataFrame, settings: CheckerSettings) -> dict[str, Any]:
    """metrics.json (`dvc metrics show`): the decision settings recorded in the checker folder, and per benchmark
    its split, counts and shares."""
    from factlab.metaeval.decisions import SHARES

    return {
        "checker": {
            "threshold": settings.threshold,
            "uncertain_band": settings.uncertain_band,
            "token_threshold": settings.token_threshold,
            "toy": settings.toy,
        },
        "benchmarks": {
            str(row["benchmark"]): {
                "split": row["split"],
                "n_consistent": int(row["n_consistent"]),
                "n_inconsistent": int(row["n_inconsistent"]),
                **{name: headline_number(row[name]) for name in SHARES},
            }
            for row in table.to_dict("records")
        },
    }


def checker_score_tables(scores: list[str], data: list[str]) -> Iterator[tuple[str, str, str]]:
    """(benchmark, its score table, its data file) for each of `scores`, which must be the checker's (AlignScore's)
    tables, each with its benchmark's file among `data`."""
    data_paths = {Path(path).stem: path for path in data}
    for path in scores:
        scorer, benchmark = Path(path).stem, Path(path).parent.name
        if scorer != CHECKER_SCORER:
            raise FactlabError(f"{path}: a {scorer} score table; the checker's scores are {CHECKER_SCORER}'s")
        if benchmark not in data_paths:
            raise FactlabError(f"{path}: no --data file for benchmark {benchmark!r}")
        yield benchmark, path, data_paths[benchmark]


def run_decisions(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.checker.api import Checker
    from factlab.checker.folder import CARD_FILE, CheckerSettings
    from factlab.metaeval.decisions import DECISION_COLUMNS

    settings = CheckerSettings.from_json(Path(args.checker) / CARD_FILE)
    checker = Checker(model=args.checker)  # scores the corrections' candidate edits
    rows = []
    for benchmark, path, data_path in checker_score_tables(args.scores, args.data):
        data = pd.read_parquet(data_path)
        missing = [column for column in DATA_COLUMNS if column not in data.columns]
        if missing:
            raise DataError(f"missing column(s) {missing}", file=data_path, field=missing[0])
        if benchmark in args.validation and evaluated_rows(data)[1] != EVALUATED_SPLIT:
            LOG.info("%s: tuned the checker's decisions and has no test split, not measured", benchmark)
            continue
        row = benchmark_decisions(data, pd.read_parquet(path), settings, args.confidence, path, checker)
        if row is None:
            LOG.warning("%s: no scored output with a label in its evaluated rows: not measured", benchmark)
            continue
        rows.append({"benchmark": benchmark, **row})
    columns = ["benchmark", "split", "n_unscored", *DECISION_COLUMNS]
    table = pd.DataFrame(rows, columns=columns).sort_values("benchmark", kind="stable")
    write_text(table.to_csv(index=False, float_format="%.6g"), args.out)
    write_json(decisions_metrics(table, settings), args.out_metrics)
