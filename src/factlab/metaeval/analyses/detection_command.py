"""`factlab metaeval detection`: factlab's scorers as binary detectors of inconsistent outputs.

Per (scorer, benchmark): ROC AUC with a percentile bootstrap CI (examples resampled by source
document, so summaries of one article move together); ECE with equal-width and equal-mass bins, and
after isotonic calibration fitted on the validation data (`ece_isotonic`); balanced accuracy at 0.5
(`fixed05`), at a threshold tuned on validation data (`val_tuned`: the SummaC validation cuts, or
whichever `--validation` benchmarks were scored, pooled) and at the best threshold of the evaluated
data itself (`oracle`, optimistic, labelled as such), thresholds recorded in the table; and the
paired document-bootstrap difference in AUC to the benchmark's best scorer, with its p-value
(`factlab.metaeval.paired`). A benchmark's group columns (`--groups`, e.g. WiCE's 3-way `wice_label`) add breakdown
rows named `B[column=value]`: the examples with that value, or, where those hold one label only, those against every
example of the other label (`wice_claims[wice_label=partially_supported vs all consistent]`: partially supported
against supported claims). Reliability diagrams per scorer (`reliability.csv`): equal-width bins of the
scores pooled over the table's reported benchmarks, raw (where scores lie in [0, 1]) and after the
isotonic calibration fitted on validation data. `metrics.json` holds each scorer's headline numbers (AUC and
balanced accuracy at 0.5 per benchmark, and their means) for `dvc metrics show`. `tuning_overlap` is the share of a
benchmark's scored examples whose source or output shares a run of 8 words with a tuning example's (the aligner
mixture's leakage rule, `factlab.data.leakage`): SummaC's XSum and SummEval cuts reach XSumFaith, FRANK and TRUE's
SummEval in another tokenisation, which an exact comparison of source strings missed; a share, because one stock
phrase shared by a few dialogue or Wikipedia examples is chance, not overlap. The tuning data are every validation
benchmark given, for every scorer: besides its own `val_tuned` threshold, AlignScore's head and chunk size were
chosen on all the cuts (and QASemConsistency reads its chunk size), and the ensemble inherits its member
AlignScore's tuning (its own fit examples share no run with the scored benchmark, by construction).
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments, write_report
from factlab.errors import DataError, FactlabError
from factlab.io import write_json, write_text
from factlab.metaeval.analyses.score_tables import add_score_table_arguments, read_score_tables
from factlab.metaeval.arguments import benchmark_arguments, headline_number
from factlab.metaeval.errors import StatisticsError
from factlab.metaeval.variants import PAIRED_TEST

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from factlab.data.leakage import EvaluationIndex

LOG = logging.getLogger(__name__)
COLUMNS = (
    "scorer",
    "benchmark",
    "n",
    "n_unscored",
    "sampled",
    "roc_auc",
    "roc_auc_ci_low",
    "roc_auc_ci_high",
    "ece",
    "ece_equal_mass",
    "ece_isotonic",
    "bacc_val_tuned",
    "bacc_fixed05",
    "bacc_oracle",
    "threshold_val_tuned",
    "threshold_oracle",
    "best_scorer",
    "auc_diff_to_best",
    "auc_diff_ci_low",
    "auc_diff_ci_high",
    "p_vs_best",
    "tuning_overlap",
)


def register(commands: Any) -> None:
    detection = commands.add_parser("detection", help="AUC, ECE and balanced accuracy of factlab's scorers")
    add_score_table_arguments(detection)
    detection.add_argument("--validation", nargs="*", default=[], help="benchmarks whose scores tune the val_tuned threshold")
    detection.add_argument(
        "--groups",
        nargs="*",
        default=[],
        help="<benchmark>=<column>[,<column>...]: breakdown rows by a benchmark's group columns (e.g. wice_claims=wice_label)",
    )
    add_bootstrap_arguments(detection)
    detection.add_argument("--ece-bins", type=int, required=True)
    detection.add_argument("--reliability-bins", type=int, required=True, help="equal-width bins of the reliability diagrams")
    detection.add_argument("--out", required=True, help="CSV")
    detection.add_argument("--out-reliability", required=True, help="CSV: reliability-diagram bins per scorer")
    detection.add_argument("--report", required=True, help="JSON: thresholds and what was left out")
    detection.add_argument("--out-metrics", required=True, help="metrics.json: the headline numbers per scorer (dvc metrics)")
    detection.set_defaults(func=run_detection)


def group_arguments(values: list[str], data: Mapping[str, pd.DataFrame], paths: Mapping[str, str]) -> dict[str, list[str]]:
    """`--groups` -> {benchmark: [columns]}; each benchmark must have a --data file holding each column."""
    groups = {}
    for benchmark, named in benchmark_arguments(values, "--groups", "column[,column...]").items():
        if benchmark not in data:
            raise FactlabError(f"--groups names benchmark {benchmark!r}, which has no --data file")
        columns = named.split(",")
        for column in columns:
            if column not in data[benchmark].columns:
                raise DataError("no such column (named by --groups)", file=paths[benchmark], record="header", field=column)
        groups[benchmark] = columns
    return groups


def breakdown_name(benchmark: str, column: str, value: Any, against: int | None = None) -> str:
    """`B[column=value]`, or `B[column=value vs all consistent]` for a one-label group set against the other label."""
    versus = "" if against is None else f" vs all {'consistent' if against == 1 else 'inconsistent'}"
    return f"{benchmark}[{column}={value}{versus}]"


def is_breakdown(name: str) -> bool:
    return name.endswith("]") and "[" in name


def breakdowns(benchmark: str, frame: pd.DataFrame, columns: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Breakdown rows of one benchmark's labelled scores by its group columns: per value, the examples holding it
    where they have both labels; where they have one label only (WiCE's partially supported claims are all
    unsupported), those examples against every example of the other label (partially supported vs supported), unless
    that is the whole benchmark again. Examples without a value are in no breakdown."""
    import pandas as pd

    subsets = {}
    for column in columns:
        for value, part in frame.groupby(column, sort=True):
            labels = set(part["label"].astype(int))
            if len(labels) == 2:
                subsets[breakdown_name(benchmark, column, value)] = part
                continue
            other = 1 - labels.pop()
            contrast = pd.concat([part, frame[frame["label"].astype(int) == other]])
            if len(contrast) < len(frame):
                subsets[breakdown_name(benchmark, column, value, other)] = contrast
    return subsets


def detection_row(
    scorer: str,
    benchmark: str,
    frame: pd.DataFrame,
    threshold: float | None,
    tuning_overlap: float,
    *,
    calibrate: Callable[[Any], np.ndarray] | None = None,
    resamples: int,
    confidence: float,
    seed: int,
    ece_bins: int,
) -> dict[str, Any]:
    import numpy as np

    from factlab.metaeval.calibration import as_probabilities, expected_calibration_error

    scored = frame.dropna(subset=["score"])
    labels = scored["label"].astype(int).to_numpy()
    values = scored["score"].to_numpy(dtype=float)
    row: dict[str, Any] = dict.fromkeys(COLUMNS, np.nan)
    row.update(scorer=scorer, benchmark=benchmark, n=len(scored), n_unscored=len(frame) - len(scored))
    row["tuning_overlap"] = tuning_overlap
    if len(set(labels)) < 2:
        LOG.warning("%s on %s: one class only (%d examples): no AUC", scorer, benchmark, len(labels))
        return row
    row.update(
        discrimination(scored, threshold, resamples=resamples, confidence=confidence, seed=seed, name=f"{scorer} on {benchmark}")
    )
    probabilities = as_probabilities(values)
    if probabilities is not None:
        row["ece"] = expected_calibration_error(labels, probabilities, n_bins=ece_bins).ece
        if len(values) >= ece_bins:
            row["ece_equal_mass"] = expected_calibration_error(labels, probabilities, n_bins=ece_bins, binning="equal_mass").ece
    if calibrate is not None:
        row["ece_isotonic"] = expected_calibration_error(labels, calibrate(values), n_bins=ece_bins).ece
    return row


def grouped_interval(
    statistic: Callable[[np.ndarray, np.ndarray], float],
    labels: np.ndarray,
    values: np.ndarray,
    groups: np.ndarray,
    *,
    resamples: int,
    confidence: float,
    seed: int,
    what: str,
) -> tuple[float, float]:
    """The percentile bootstrap interval of `statistic(labels, values)` resampling `groups`; (NaN, NaN), with a
    warning naming `what`, when the bootstrap cannot give one."""
    import numpy as np

    from factlab.metaeval.bootstrap import bootstrap_ci

    try:
        ci = bootstrap_ci(
            statistic,
            labels,
            values,
            groups=groups,
            n_resamples=resamples,
            confidence=confidence,
            rng=np.random.default_rng(seed),
        )
    except StatisticsError as error:
        LOG.warning("%s: no interval (%s)", what, error)
        return np.nan, np.nan
    return ci.low, ci.high


def discrimination(
    scored: pd.DataFrame,
    threshold: float | None,
    *,
    resamples: int,
    confidence: float,
    seed: int,
    name: str,
    groups: str = "doc_id",
) -> dict[str, float]:
    """Of scored rows (`label`, `score`, `groups`) holding both labels: ROC AUC with a percentile bootstrap CI that
    resamples the `groups` column's groups (left out, with a warning naming `name`, when the bootstrap cannot give one), and
    balanced accuracy at 0.5, at the rows' own best threshold (oracle) and at `threshold` when one is given."""
    import numpy as np

    from factlab.metaeval.detection import evaluate_at_threshold, fixed05, oracle, roc_auc

    labels = scored["label"].astype(int).to_numpy()
    values = scored["score"].to_numpy(dtype=float)
    result = {"roc_auc": roc_auc(labels, values)}
    low, high = grouped_interval(
        roc_auc,
        labels,
        values,
        scored[groups].astype(str).to_numpy(),
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        what=f"{name} AUC",
    )
    if not np.isnan(low):
        result["roc_auc_ci_low"], result["roc_auc_ci_high"] = low, high
    result["bacc_fixed05"] = fixed05(labels, values).balanced_accuracy
    best = oracle(labels, values)
    result["threshold_oracle"], result["bacc_oracle"] = best.threshold, best.balanced_accuracy
    if threshold is not None:
        result["threshold_val_tuned"] = threshold
        result["bacc_val_tuned"] = evaluate_at_threshold(labels, values, threshold, "val_tuned").balanced_accuracy
    return result


class TuningOverlap:
    """The share of a reported benchmark's scored examples whose source or output shares a word run with the
    validation benchmarks' texts (by text, not doc_id: ids are benchmark-prefixed), on which every scorer's threshold
    and calibration, and some scorers' settings, were chosen. One index, built on first use; one share per
    (benchmark, scored examples), which scorers scoring the same examples share."""

    def __init__(self, data: Mapping[str, pd.DataFrame], validation: Sequence[str]) -> None:
        missing = sorted(set(validation) - set(data))
        if missing:
            raise FactlabError(f"no --data file for validation benchmark(s) {missing}")
        self.data = data
        self.validation = sorted(validation)
        self.index: EvaluationIndex | None = None
        self.shares: dict[tuple[str, frozenset[str]], float] = {}

    def __call__(self, benchmark: str, frame: pd.DataFrame) -> float:
        from factlab.data.leakage import EvaluationIndex, evaluation_texts, leaking_rows

        scored = frozenset(frame.dropna(subset=["score"])["example_id"])
        if not self.validation or not scored:
            return 0.0
        key = (benchmark, scored)
        if key not in self.shares:
            if self.index is None:
                self.index = EvaluationIndex.build(evaluation_texts({name: self.data[name] for name in self.validation}))
            examples = self.data[benchmark][self.data[benchmark]["example_id"].isin(scored)]
            pairs = examples[["source", "output"]].astype(str).set_axis(["text_a", "text_b"], axis=1)
            self.shares[key] = float(leaking_rows(pairs, self.index, progress=False).notna().mean())
        return self.shares[key]


def run_detection(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.metaeval.calibration import isotonic_calibrator
    from factlab.metaeval.detection import pooled_validation, validation_threshold

    data_paths = {Path(path).stem: path for path in args.data}
    data = {name: pd.read_parquet(path) for name, path in data_paths.items()}
    groups = group_arguments(args.groups, data, data_paths)
    by_scorer, sampled = read_score_tables(args.scores, args.sampled_scores, data, groups)
    rows, report = [], {"validation": sorted(args.validation), "thresholds": {}, "paired_test": PAIRED_TEST}
    report["thresholds_tuned_on_sample"] = {}  # scorer -> its validation benchmarks scored on a seeded sample
    report["groups"] = groups
    overlaps = TuningOverlap(data, args.validation)
    reliability: list[dict[str, Any]] = []
    for scorer, frames in sorted(by_scorer.items()):
        tuning = {name: frame for name, frame in frames.items() if name in args.validation}
        threshold = validation_threshold(tuning)
        report["thresholds"][scorer] = threshold
        if on_sample := sorted(name for name in tuning if (scorer, name) in sampled):
            report["thresholds_tuned_on_sample"][scorer] = on_sample
        pooled = pooled_validation(tuning)
        calibrate = None if pooled is None else isotonic_calibrator(pooled["label"].astype(int), pooled["score"])
        reported = {benchmark: frame for benchmark, frame in sorted(frames.items()) if benchmark not in tuning}
        reliability += reliability_rows(scorer, list(reported.values()), calibrate, args.reliability_bins)
        evaluated = []
        for benchmark, frame in reported.items():
            evaluated.append((benchmark, benchmark, frame))
            for name, subset in breakdowns(benchmark, frame, groups.get(benchmark, ())).items():
                evaluated.append((name, benchmark, subset))
                frames[name] = subset  # the paired test against the breakdown's best scorer reads it
        for name, benchmark, frame in evaluated:
            row = detection_row(
                scorer,
                name,
                frame,
                threshold,
                overlaps(benchmark, frame),
                calibrate=calibrate,
                resamples=args.resamples,
                confidence=args.confidence,
                seed=args.seed,
                ece_bins=args.ece_bins,
            )
            rows.append({**row, "sampled": (scorer, benchmark) in sampled})
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table = compare_with_best(table, by_scorer, resamples=args.resamples, confidence=args.confidence, seed=args.seed)
    write_text(table.to_csv(index=False, float_format="%.6g"), args.out)
    reliability_table = pd.DataFrame(reliability, columns=list(RELIABILITY_COLUMNS))
    write_text(reliability_table.to_csv(index=False, float_format="%.6g"), args.out_reliability)
    write_report(report, args.report)
    write_json(headline_metrics(table), args.out_metrics)


def headline_metrics(table: pd.DataFrame) -> dict[str, Any]:
    """metrics.json (`dvc metrics show`): per scorer, ROC AUC and balanced accuracy at 0.5 on each reported benchmark
    where both are defined (both labels present), and their unweighted means over those benchmarks (TRUE's summary:
    the mean AUC over its sets). A mean is comparable between scorers only over the same benchmarks: `benchmarks`
    counts them, `sampled_benchmarks` names those scored on a seeded sample (score.sample). Breakdown rows
    (`B[column=value]`) are listed but are not in the means: their examples are B's."""

    import numpy as np

    metrics: dict[str, Any] = {}
    for scorer, rows in table.groupby("scorer", sort=True):
        rows = rows.dropna(subset=["roc_auc"]).sort_values("benchmark")
        bacc = rows.dropna(subset=["bacc_fixed05"])
        whole = np.array([not is_breakdown(str(name)) for name in rows["benchmark"]], dtype=bool)
        whole_bacc = bacc[[not is_breakdown(str(name)) for name in bacc["benchmark"]]]
        metrics[str(scorer)] = {
            "benchmarks": int(whole.sum()),
            "sampled_benchmarks": sorted(str(name) for name in rows.loc[whole & rows["sampled"].astype(bool), "benchmark"]),
            "mean_roc_auc": headline_number(rows.loc[whole, "roc_auc"].mean()) if whole.any() else None,
            "mean_bacc_fixed05": headline_number(whole_bacc["bacc_fixed05"].mean()) if len(whole_bacc) else None,
            "roc_auc": {
                str(name): headline_number(value) for name, value in zip(rows["benchmark"], rows["roc_auc"], strict=True)
            },
            "bacc_fixed05": {
                str(name): headline_number(value) for name, value in zip(bacc["benchmark"], bacc["bacc_fixed05"], strict=True)
            },
        }
    return metrics


RAW, ISOTONIC = "raw", "isotonic"
RELIABILITY_COLUMNS = ("metric", "scorer", "variant", "n", "bin", "lower", "upper", "count", "mean_score", "consistent_share")


def reliability_rows(
    scorer: str, frames: list[pd.DataFrame], calibrate: Callable[[Any], np.ndarray] | None, n_bins: int
) -> list[dict[str, Any]]:
    """Equal-width reliability bins of one scorer's scores pooled over `frames` (RELIABILITY_COLUMNS).

    `metric` names the panel: the scorer (raw scores, only where they lie in [0, 1]) and
    `<scorer>, isotonic` (after the validation-fitted isotonic map, when one was fitted).
    """
    import pandas as pd

    from factlab.metaeval.calibration import as_probabilities, reliability_records

    scored = [frame.dropna(subset=["score"]) for frame in frames]
    pooled = pd.concat(scored, ignore_index=True) if scored else pd.DataFrame(columns=["label", "score"])
    labels = pooled["label"].astype(int).to_numpy()
    values = pooled["score"].to_numpy(dtype=float)
    if len(set(labels)) < 2:
        LOG.warning("%s: one class only in the reported benchmarks (%d examples): no reliability diagram", scorer, len(labels))
        return []
    variants = []
    probabilities = as_probabilities(values)
    if probabilities is not None:
        variants.append((scorer, RAW, probabilities))
    else:
        LOG.info("%s: scores outside [0, 1]: no raw reliability diagram", scorer)
    if calibrate is not None:
        variants.append((f"{scorer}, {ISOTONIC}", ISOTONIC, calibrate(values)))
    return [
        {"metric": metric, "scorer": scorer, "variant": variant, "n": len(labels), **record}
        for metric, variant, scores in variants
        for record in reliability_records(labels, scores, n_bins=n_bins)
    ]


def best_candidates(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows a best scorer is chosen from: those of scorers of the whole benchmark (`sampled` false), or every row
    where all scored a seeded sample. Shared by detection's paired test and QA detection's headline."""
    whole = rows[~rows["sampled"].astype(bool)]
    return whole if len(whole) else rows


def compare_with_best(
    table: pd.DataFrame,
    frames: Mapping[str, Mapping[str, pd.DataFrame]],
    *,
    resamples: int,
    confidence: float,
    seed: int,
) -> pd.DataFrame:
    """Per benchmark, each scorer's AUC minus the best scorer's, on the examples both scored. The best is the highest
    AUC of the scorers that scored the whole benchmark (of every scorer where all scored a sample): an AUC on a seeded
    sample is noisier, and the others would be compared on its sample only."""
    import numpy as np

    from factlab.metaeval.paired import paired_auc_on_shared_examples

    table = table.copy()
    table["best_scorer"] = table["best_scorer"].astype(object)
    for benchmark, rows in table.groupby("benchmark"):
        ranked = rows.dropna(subset=["roc_auc"])
        if ranked.empty:
            continue
        candidates = best_candidates(ranked)
        best = str(candidates.loc[candidates["roc_auc"].idxmax(), "scorer"])
        for index, scorer in ranked["scorer"].items():
            table.loc[index, "best_scorer"] = best
            try:
                difference = paired_auc_on_shared_examples(
                    frames[scorer][benchmark],
                    frames[best][benchmark],
                    n_resamples=resamples,
                    confidence=confidence,
                    rng=np.random.default_rng(seed),
                )
            except StatisticsError as error:
                LOG.warning("%s vs %s on %s: no paired test (%s)", scorer, best, benchmark, error)
                continue
            table.loc[index, ["auc_diff_to_best", "auc_diff_ci_low", "auc_diff_ci_high", "p_vs_best"]] = [
                difference.difference,
                difference.low,
                difference.high,
                difference.p_value,
            ]
    return table
