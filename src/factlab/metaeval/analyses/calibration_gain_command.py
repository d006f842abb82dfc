"""`factlab metaeval calibration-gain`: what calibrating the checker on 100 of your own labelled examples gains.

For every benchmark with a validation split (`validation`, or upstream `dev`) and a test split, both with outputs of
each label that AlignScore scored: the test split's balanced accuracy at the threshold recorded in the checker
folder (the global threshold, tuned on the pooled validation cuts) against that at the threshold `factlab calibrate`
would choose on `--sample` of the benchmark's validation examples (factlab.metaeval.decisions.calibration_gain:
`--draws` stratified draws, the mean, its percentile interval and the share of draws that beat the global
threshold), and at the threshold tuned on its whole validation split. The checker's scores are AlignScore's score
tables, as for `factlab metaeval decisions`; a verdict here is the threshold's alone (no uncertain band), since
balanced accuracy needs one for every output. Each benchmark draws from its own seeded generator (`--seed` and its
name), so its numbers do not depend on the other benchmarks measured.

calibration_gain.csv: one row per measured benchmark (factlab.metaeval.decisions.CALIBRATION_GAIN_COLUMNS, with
`tuned_global_threshold`: whether its validation split was among those that chose the global threshold, and
`n_unscored`: its validation and test outputs AlignScore could not score, left out). metrics.json: the settings, each
benchmark's headline numbers, the range of the benchmarks' own validation thresholds, and each benchmark not measured
with the reason.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import confidence_level
from factlab.errors import DataError, FactlabError
from factlab.io import write_json, write_text
from factlab.metaeval.analyses.decisions_command import EVALUATED_SPLIT, checker_score_tables
from factlab.metaeval.arguments import headline_number

if TYPE_CHECKING:
    import pandas as pd

LOG = logging.getLogger(__name__)
VALIDATION_SPLITS = ("validation", "dev")  # factlab's name of a validation split, and the upstream one it keeps
HEADLINE = ("balanced_accuracy_global", "balanced_accuracy_calibrated", "gain", "balanced_accuracy_validation")


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "calibration-gain", help="balanced accuracy: the global threshold vs one calibrated on 100 validation examples"
    )
    parser.add_argument("--checker", required=True, help="the checker folder (results/checker/model: checker.json)")
    parser.add_argument("--scores", nargs="+", required=True, help="results/score/<benchmark>/alignscore.parquet")
    parser.add_argument("--data", nargs="+", required=True, help="results/data/<benchmark>.parquet of the same benchmarks")
    parser.add_argument(
        "--validation", nargs="*", default=[], help="benchmarks whose validation split chose the global threshold"
    )
    parser.add_argument("--sample", type=int, required=True, help="labelled validation examples a user calibrates on")
    parser.add_argument("--draws", type=int, required=True, help="seeded draws of that many examples")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--confidence", type=confidence_level, required=True, help="of the percentile intervals, e.g. 0.95")
    parser.add_argument("--out", required=True, help="calibration_gain.csv: one row per measured benchmark")
    parser.add_argument("--out-metrics", required=True, help="metrics.json (dvc metrics)")
    parser.set_defaults(func=run_calibration_gain)


def split_scores(data: pd.DataFrame, scores: pd.DataFrame, where: str) -> tuple[pd.DataFrame, int]:
    """The labelled validation and test outputs of benchmark `data` in the score table `where` with their score
    (split, label, score), and how many of them it holds without a score; every example of the table must be in the
    benchmark (a run that scores a subset of a benchmark measures that subset)."""
    for frame, name, columns in ((data, "benchmark", ("example_id", "label")), (scores, where, ("example_id", "score"))):
        missing = [column for column in columns if column not in frame.columns]
        if missing:
            raise DataError(f"missing column(s) {missing}", file=name, field=missing[0])
    stray = ~scores["example_id"].isin(data["example_id"])
    if stray.any():
        raise DataError(
            "a scored example is not in the benchmark", file=where, record=str(scores.loc[stray, "example_id"].iloc[0])
        )
    if "split" not in data.columns:  # one labelled set: nothing to calibrate on apart from what is judged
        import pandas as pd

        return pd.DataFrame(columns=["example_id", "split", "label", "score"]), 0
    wanted = data["label"].notna() & data["split"].isin((*VALIDATION_SPLITS, EVALUATED_SPLIT))
    rows = data.loc[wanted, ["example_id", "split", "label"]].merge(
        scores[["example_id", "score"]], on="example_id", how="inner", validate="one_to_one"
    )
    unscored = rows["score"].isna()
    return rows[~unscored], int(unscored.sum())


def not_measured_reason(rows: pd.DataFrame) -> str | None:
    """Why a benchmark's scored rows (`split_scores`) cannot be measured, or None."""
    for part, splits in (("validation", VALIDATION_SPLITS), ("test", (EVALUATED_SPLIT,))):
        labels = set(rows.loc[rows["split"].isin(splits), "label"].astype(int))
        if labels != {0, 1}:
            return f"its {part} split has no scored output labelled " + (
                "either way" if not labels else ("inconsistent" if labels == {1} else "consistent")
            )
    return None


def benchmark_gain(rows: pd.DataFrame, threshold: float, args: argparse.Namespace, benchmark: str) -> dict[str, Any]:
    """One benchmark's `calibration_gain` from its scored rows, drawn with the benchmark's own generator."""
    import numpy as np

    from factlab.metaeval.decisions import calibration_gain
    from factlab.sampling import sample_key

    validation = rows[rows["split"].isin(VALIDATION_SPLITS)]
    test = rows[rows["split"] == EVALUATED_SPLIT]
    rng = np.random.default_rng(int(sample_key(benchmark, args.seed)[:16], 16))
    return calibration_gain(
        validation["label"].astype(int),
        validation["score"],
        test["label"].astype(int),
        test["score"],
        threshold,
        sample=args.sample,
        draws=args.draws,
        rng=rng,
        confidence=args.confidence,
    )


def threshold_range(table: pd.DataFrame) -> dict[str, Any] | None:
    """How far the right threshold moves between kinds of text: the lowest and highest whole-validation optimum of
    the measured benchmarks, and whose they are (None where none was measured)."""
    if table.empty:
        return None
    low, high = table.loc[table["threshold_validation"].idxmin()], table.loc[table["threshold_validation"].idxmax()]
    return {
        "low": headline_number(low["threshold_validation"]),
        "low_benchmark": str(low["benchmark"]),
        "high": headline_number(high["threshold_validation"]),
        "high_benchmark": str(high["benchmark"]),
    }


def run_calibration_gain(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.checker.folder import CARD_FILE, CheckerSettings
    from factlab.metaeval.decisions import CALIBRATION_GAIN_COLUMNS

    if args.sample < 2 or args.draws < 1:
        raise FactlabError(f"--sample must be at least 2 and --draws at least 1, got {args.sample} and {args.draws}")
    settings = CheckerSettings.from_json(Path(args.checker) / CARD_FILE)
    rows, skipped = [], {}
    for benchmark, path, data_path in checker_score_tables(args.scores, args.data):
        scored, unscored = split_scores(pd.read_parquet(data_path), pd.read_parquet(path), path)
        reason = not_measured_reason(scored)
        if reason is not None:
            LOG.info("%s: not measured, %s", benchmark, reason)
            skipped[benchmark] = reason
            continue
        gain = benchmark_gain(scored, settings.threshold, args, benchmark)
        rows.append(
            {"benchmark": benchmark, "tuned_global_threshold": benchmark in args.validation, "n_unscored": unscored, **gain}
        )
    columns = ["benchmark", "tuned_global_threshold", "n_unscored", *CALIBRATION_GAIN_COLUMNS]
    table = pd.DataFrame(rows, columns=columns).sort_values("benchmark", kind="stable")
    write_text(table.to_csv(index=False, float_format="%.6g"), args.out)
    write_json(
        {
            "settings": {"sample": args.sample, "draws": args.draws, "seed": args.seed, "confidence": args.confidence},
            "threshold_global": settings.threshold,
            "toy": settings.toy,
            "benchmarks": {
                str(row["benchmark"]): {name: headline_number(row[name]) for name in HEADLINE} for row in table.to_dict("records")
            },
            "threshold_validation_range": threshold_range(table),
            "not_measured": skipped,
        },
        args.out_metrics,
    )
