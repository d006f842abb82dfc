"""`factlab metaeval token-reading`: how a scorer's token detail is read as unsupported words, tuned on validation
tokens alone.

It makes, for one scorer's score tables (the aligner's: `results/score/<benchmark>/alignscore.parquet` with per-token
support in `tokens`), the two readings the localisation analysis (`factlab metaeval localisation`) tunes for it,
with the same functions and the same validation tokens, so the numbers are the analysis's: the token localiser
(factlab.models.token_localiser) fit on the validation tokens of every gold table with sources, and, per gold table,
the `val_tuned` support threshold (the one maximising token F1 on its validation tokens) of the head alone
(`<scorer>_tokens`) and of the localiser (`<scorer>_localiser`). It reads no other scorer and scores no evaluated
token, so the checker folder (`factlab checker package --localisation-report`) waits for the aligner's own scores
only, not for the whole localisation analysis.

Inputs are the analysis's: `--gold <benchmark>=<gold token table>` (WiCE's `dev` split is its validation part; a
one-split table such as XSumFaith's is split by document with `--val-fraction` and `--seed`), `--sources
<benchmark>=<data table>` for the localiser, `--scores`. The JSON written has the shape of the analysis's report.json,
cut to these readings: `localisers` (per scorer, the fitted weights and `fitted_on`) and `datasets.<gold>` with its
`split` and, per reading, `thresholds.val_tuned` (null where its validation tokens cannot tune one) with the
validation examples and tokens it was tuned on.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from factlab.metaeval.analyses.localisation_command import GoldTable, WordCache

LOG = logging.getLogger(__name__)
POLICY = "val_tuned"


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "token-reading", help="a scorer's token localiser and validation-tuned token thresholds (the checker's reading)"
    )
    parser.add_argument("--scores", nargs="+", required=True, help="results/score/<benchmark>/<scorer>.parquet with token detail")
    parser.add_argument(
        "--gold",
        nargs="+",
        required=True,
        help="<benchmark>=<gold token table>, e.g. wice_tokens=results/data/wice_tokens.parquet",
    )
    parser.add_argument(
        "--sources",
        nargs="*",
        default=[],
        help="<benchmark>=<table with example_id, source>: the sources the token localiser reads (its benchmark's data table)",
    )
    parser.add_argument("--val-fraction", type=float, required=True, help="share of documents tuning thresholds (one-split gold)")
    parser.add_argument("--seed", type=int, required=True, help="the seed of the one-split gold's document split")
    parser.add_argument("--out", required=True, help="JSON (the localisation report's shape, cut to these readings)")
    parser.set_defaults(func=run_token_reading)


def validation_threshold(tokens: pd.DataFrame, what: str) -> float | None:
    """The `val_tuned` threshold of a reading's validation tokens; None (logged) where they cannot tune one."""
    from factlab.metaeval.errors import StatisticsError
    from factlab.metaeval.localisation import policy_threshold

    if tokens.empty:
        LOG.warning("%s: no scored validation tokens", what)
        return None
    validation = (tokens["y_unsupported"].to_numpy(dtype="int64"), tokens["support"].to_numpy(dtype=float))
    try:
        return policy_threshold(POLICY, evaluated=validation, validation=validation)
    except StatisticsError as error:
        LOG.warning("%s: no %s threshold (%s)", what, POLICY, error)
        return None


def table_readings(
    table: GoldTable, path: str, scores: pd.DataFrame, localisers: dict[str, dict[str, Any]], cache: WordCache
) -> dict[str, dict[str, Any]]:
    """The readings of one score table on one gold table, each tuned on the gold's validation outputs."""
    from factlab.errors import DataError
    from factlab.metaeval.analyses.localisation_command import TOKEN_DETAIL, VALIDATION, localised_scores, scored_tokens
    from factlab.metaeval.variants import LOCALISER_SUFFIX, TOKEN_SUFFIX
    from factlab.models.token_localiser import TokenLocaliser

    unknown = sorted(set(scores["example_id"].astype(str)) - set(table.gold))
    if unknown:
        raise DataError("scored example is not in the gold table", file=path, record=unknown[0], field="example_id")
    if TOKEN_DETAIL not in scores.columns:
        LOG.warning("%s: no token detail (%s column): no token reading", path, TOKEN_DETAIL)
        return {}
    validation_gold = {eid: example for eid, example in table.gold.items() if table.parts[eid] == VALIDATION}
    scores = scores[scores["example_id"].astype(str).isin(validation_gold)]
    stem = Path(path).stem
    readings = [(stem + TOKEN_SUFFIX, scores)]
    if stem in localisers and table.sources is not None:
        localiser = TokenLocaliser.from_dict(localisers[stem])
        readings.append((stem + LOCALISER_SUFFIX, localised_scores(table, scores, localiser, file=path, cache=cache)))
    found = {}
    for scorer, read in readings:
        tokens, counts = scored_tokens(path, validation_gold, table.parts, scores=read, detail=TOKEN_DETAIL)
        threshold = validation_threshold(tokens, f"{scorer} on {Path(table.path).stem}")
        found[scorer] = {
            "scores": path,
            "thresholds": {POLICY: threshold},
            "validation_examples": counts["scored"],
            "validation_tokens": len(tokens),
        }
    return found


def run_token_reading(args: argparse.Namespace) -> None:
    from factlab.io import write_json
    from factlab.metaeval.analyses.localisation_command import read_localisation_inputs

    inputs = read_localisation_inputs(args)
    report: dict[str, Any] = {"policies": [POLICY], "datasets": {}, "localisers": inputs.localisers}
    for table in inputs.tables:
        entry: dict[str, Any] = {"gold": table.path, "scored_benchmark": table.benchmark, "split": table.split, "scorers": {}}
        for path in sorted(inputs.by_benchmark.get(table.benchmark, [])):
            scores = inputs.score_tables[path]
            entry["scorers"].update(table_readings(table, path, scores, inputs.localisers, inputs.cache))
        report["datasets"][Path(table.path).stem] = entry
    write_json(report, args.out)
