"""FRANK's meta-evaluation of its baseline metrics, rebuilt from FRANK's released scores and labels.

Pagnoni et al. (2021) evaluate 15 metrics (their `baseline_factuality_metrics_outputs.json`,
our `frank_baseline_scores` table; metric names kept exactly as FRANK spells them) against the
human `Factuality` score (`human_score` in the `frank` benchmark) with FRANK's `evaluate.py`.
This module redoes each of its modes on those inputs, as DataFrame-in, DataFrame-out functions:

* `metric_human_correlations` (hm-correlation, the paper's correlation table): partial Pearson
  and Spearman of each metric with Factuality, the summarisation system as confounder, per
  subset (all data, CNN/DM, XSum). The partial-correlation variant is named (`frank` =
  evaluate.py's recipe, `ranked` = the textbook test; see factlab.metaeval.partial). A summary
  whose metric score is missing is dropped for that metric only (FRANK's per-metric mask, not
  listwise deletion) and counted in `n_dropped_nan`.
* `pearson_bootstrap_cis`: percentile CIs of the partial Pearson, resampling documents (all
  summaries of one article together). Scores are residualised once on the full data and the
  Pearson of the residuals is bootstrapped; re-fitting the nine system means on every resample
  would move them by ~1/sqrt(250) of a standard deviation only, and cost far more.
* `williams_comparisons` (mm-correlation): for every pair of metrics, on the summaries where both
  have a score, metric A, metric B and Factuality are residualised on the system and compared
  with the Williams test; both p-value variants are kept (two-sided, FRANK's one-sided).
* `category_ablation` (ablations): partial correlation with Factuality minus partial correlation
  with `Flip_<category>` (Factuality with that category's errors not counted). A positive
  influence means the metric's agreement with humans relies on detecting that error category.

`register` adds the `factlab metaeval frank-*` commands, which read the parquet files, call these
functions and write the results (CSV, metrics.json) atomically; the paper stage (factlab.paper) renders
the table and figures from them.
"""

from __future__ import annotations

import argparse
import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments
from factlab.data.frank_metrics import BASELINE_METRICS
from factlab.errors import DataError
from factlab.io import write_json, write_text
from factlab.metaeval.variants import PARTIAL_VARIANTS, WILLIAMS_VARIANTS, PartialVariant, WilliamsVariant

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from factlab.metaeval import PartialCorrelation

LOG = logging.getLogger(__name__)
HUMAN = "human_score"  # FRANK's `Factuality`
CONFOUNDER = "system"  # FRANK's `model_name`, its partial-correlation variable
DOCUMENT = "doc_id"
FLIP_PREFIX = "Flip_"
SUBSET_LABELS = {"all": "All data", "cnndm": "CNN/DM", "xsum": "XSum"}
SPLITS = ("all", "validation", "test")
SIGNIFICANCE_LEVEL = 0.05
CORRELATION_COLUMNS = [
    "metric",
    "subset",
    "n",
    "pearson",
    "pearson_p",
    "spearman",
    "spearman_p",
    "variant",
    "n_dropped_nan",
]
CI_COLUMNS = ["pearson_ci_low", "pearson_ci_high"]


@dataclass(frozen=True)
class BootstrapSettings:
    """Document-bootstrap settings, from params.yaml metaeval.{bootstrap_resamples, confidence, seed}."""

    n_resamples: int
    confidence: float
    seed: int


# --- inputs ----------------------------------------------------------------------------------


def join_scores(frank: pd.DataFrame, scores: pd.DataFrame, metrics: Sequence[str] = BASELINE_METRICS) -> pd.DataFrame:
    """FRANK's labels (`frank` benchmark) joined one-to-one with its baseline scores, on example_id.

    Every labelled summary must have a score row and vice versa, with the same article and system:
    a partial join would silently change n.
    """
    missing = [metric for metric in metrics if metric not in scores.columns]
    if missing:
        raise DataError(f"the baseline score table lacks metric columns {missing}", record="frank_baseline_scores")
    for name, table in (("frank", frank), ("frank_baseline_scores", scores)):
        duplicated = table["example_id"].duplicated()
        if duplicated.any():
            first = table.loc[duplicated, "example_id"].iloc[0]
            raise DataError(f"{int(duplicated.sum())} duplicated example ids, e.g. {first!r}", record=name, field="example_id")
    joined = frank.merge(
        scores[["example_id", DOCUMENT, CONFOUNDER, *metrics]],
        on="example_id",
        how="outer",
        suffixes=("", "_scores"),
        indicator=True,
    )
    unmatched = joined[joined["_merge"] != "both"]
    if len(unmatched):
        sides = unmatched["_merge"].map({"left_only": "labels only", "right_only": "scores only"})
        examples = ", ".join(f"{i} ({s})" for i, s in zip(unmatched["example_id"].head(3), sides.head(3), strict=True))
        raise DataError(f"{len(unmatched)} summaries are not in both tables, e.g. {examples}", field="example_id")
    for key in (DOCUMENT, CONFOUNDER):
        disagree = joined[key] != joined[f"{key}_scores"]
        if disagree.any():
            first = joined.loc[disagree, "example_id"].iloc[0]
            raise DataError(f"labels and scores disagree on {key} for {int(disagree.sum())} summaries", record=first, field=key)
    return joined.drop(columns=["_merge", f"{DOCUMENT}_scores", f"{CONFOUNDER}_scores"])


def select_split(frame: pd.DataFrame, split: str) -> pd.DataFrame:
    """All rows ("all"), or those of FRANK's "validation" or "test" split (by article)."""
    if split not in SPLITS:
        raise DataError(f"unknown FRANK split {split!r}; choose one of {list(SPLITS)}", field="split")
    part = frame if split == "all" else frame[frame["split"] == split]
    if part.empty:
        raise DataError(f"no FRANK rows in split {split!r}", field="split")
    return part


def select_subset(frame: pd.DataFrame, subset: str) -> pd.DataFrame:
    """All rows ("all"), or the CNN/DM ("cnndm") or XSum ("xsum") summaries."""
    if subset not in SUBSET_LABELS:
        raise DataError(f"unknown FRANK subset {subset!r}; choose one of {list(SUBSET_LABELS)}", field="subset")
    part = frame if subset == "all" else frame[frame["subset"] == subset]
    if part.empty:
        raise DataError(f"no FRANK rows in subset {subset!r}", field="subset")
    return part


def flip_columns(frame: pd.DataFrame) -> list[str]:
    """FRANK's `Flip_<category>` ablation columns, in the benchmark's column order."""
    columns = [column for column in frame.columns if column.startswith(FLIP_PREFIX)]
    if not columns:
        raise DataError(f"no {FLIP_PREFIX}* columns: build the frank benchmark with its ablation columns", record="frank")
    return columns


# --- correlations with Factuality ------------------------------------------------------------


@dataclass(frozen=True)
class PartialPair:
    """Partial Pearson and Spearman of one metric with one target, and the rows dropped for NaN."""

    pearson: PartialCorrelation
    spearman: PartialCorrelation
    n_dropped: int


def partial_pair(frame: pd.DataFrame, metric: str, target: str, variant: PartialVariant) -> PartialPair:
    """Partial Pearson and Spearman of `metric` with `target` given the system, on this metric's non-missing rows."""
    from factlab.metaeval import dropna_pairs, partial_correlation

    kept = dropna_pairs(frame[metric], frame[target], frame[CONFOUNDER])
    scores, human, system = kept.arrays
    return PartialPair(
        pearson=partial_correlation(scores, human, [system], method="pearson", variant=variant),
        spearman=partial_correlation(scores, human, [system], method="spearman", variant=variant),
        n_dropped=kept.n_dropped,
    )


def metric_human_correlations(
    frame: pd.DataFrame,
    subsets: Sequence[str],
    variant: PartialVariant,
    metrics: Sequence[str] = BASELINE_METRICS,
) -> pd.DataFrame:
    """One row per (metric, subset): partial Pearson/Spearman with Factuality (`CORRELATION_COLUMNS`)."""
    import pandas as pd

    rows = []
    for subset in subsets:
        part = select_subset(frame, subset)
        for metric in metrics:
            pair = partial_pair(part, metric, HUMAN, variant)
            rows.append(
                {
                    "metric": metric,
                    "subset": subset,
                    "n": pair.pearson.n,
                    "pearson": pair.pearson.r,
                    "pearson_p": pair.pearson.p,
                    "spearman": pair.spearman.r,
                    "spearman_p": pair.spearman.p,
                    "variant": variant,
                    "n_dropped_nan": pair.n_dropped,
                }
            )
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS)


def pearson_bootstrap_cis(
    frame: pd.DataFrame, settings: BootstrapSettings, metrics: Sequence[str] = BASELINE_METRICS
) -> pd.DataFrame:
    """Per metric: percentile CI of the partial Pearson, residualise first, then resample documents."""
    import numpy as np
    import pandas as pd

    from factlab.metaeval import bootstrap_ci, correlation_coefficient, dropna_pairs, residualize

    pearson_r = correlation_coefficient("pearson")
    rows = []
    for metric in metrics:
        kept = dropna_pairs(frame[metric], frame[HUMAN], frame[CONFOUNDER], frame[DOCUMENT])
        scores, human, system, documents = kept.arrays
        # A fresh generator per metric: each interval is reproducible whatever the metric list.
        ci = bootstrap_ci(
            pearson_r,
            residualize(scores, [system]),
            residualize(human, [system]),
            groups=documents,
            n_resamples=settings.n_resamples,
            confidence=settings.confidence,
            rng=np.random.default_rng(settings.seed),
        )
        rows.append({"metric": metric, "pearson_ci_low": ci.low, "pearson_ci_high": ci.high})
    return pd.DataFrame(rows, columns=["metric", *CI_COLUMNS])


def with_bootstrap_cis(correlations: pd.DataFrame, cis: pd.DataFrame, subset: str = "all") -> pd.DataFrame:
    """`correlations` with the CI columns filled on the rows of `subset` (empty on the others)."""
    import numpy as np

    result = correlations.copy()
    by_metric = cis.set_index("metric")
    on_subset = result["subset"] == subset
    for column in CI_COLUMNS:
        result[column] = np.where(on_subset, result["metric"].map(by_metric[column]), np.nan)
    return result


def metrics_by_correlation(correlations: pd.DataFrame, subset: str = "all", column: str = "pearson") -> list[str]:
    """Metric names from the highest to the lowest `column` on `subset` (the figures' order)."""
    rows = correlations[correlations["subset"] == subset]
    if rows.empty:
        raise DataError(f"no correlations on subset {subset!r} to order the metrics by", field="subset")
    return rows.sort_values(column, ascending=False, kind="stable")["metric"].tolist()


# --- metric-metric comparisons ---------------------------------------------------------------


def williams_comparisons(
    frame: pd.DataFrame, williams_variant: WilliamsVariant, metrics: Sequence[str] = BASELINE_METRICS
) -> pd.DataFrame:
    """One row per unordered pair of metrics: Williams test on partial (system-residualised) correlations.

    r12 = metric_a vs Factuality, r13 = metric_b vs Factuality, r23 = metric_a vs metric_b, all
    on the n summaries where both metrics have a score. `t` keeps the sign of r12 − r13. Both
    p-values are given (`p_frank_one_sided` is FRANK's: half the two-sided one); `p` is the one
    `williams_variant` selects.
    """
    import pandas as pd

    from factlab.metaeval import dropna_pairs, williams_from_scores, williams_test

    if williams_variant not in WILLIAMS_VARIANTS:
        raise DataError(f"unknown Williams variant {williams_variant!r}; choose one of {list(WILLIAMS_VARIANTS)}")
    rows = []
    for metric_a, metric_b in itertools.combinations(metrics, 2):
        kept = dropna_pairs(frame[metric_a], frame[metric_b], frame[HUMAN], frame[CONFOUNDER])
        scores_a, scores_b, human, system = kept.arrays
        two_sided = williams_from_scores(human, scores_a, scores_b, confounders=[system], variant="two_sided")
        # Same correlations, FRANK's p: no need to residualise again (two_sided keeps r12/r13 unswapped).
        one_sided = williams_test(two_sided.r12, two_sided.r13, two_sided.r23, two_sided.n, variant="frank_one_sided")
        results = {"two_sided": two_sided, "frank_one_sided": one_sided}
        rows.append(
            {
                "metric_a": metric_a,
                "metric_b": metric_b,
                "n": two_sided.n,
                "n_dropped_nan": kept.n_dropped,
                "r12": two_sided.r12,
                "r13": two_sided.r13,
                "r23": two_sided.r23,
                "t": two_sided.t,
                "df": two_sided.df,
                "p_two_sided": two_sided.p,
                "p_frank_one_sided": results["frank_one_sided"].p,
                "variant": williams_variant,
                "p": results[williams_variant].p,
            }
        )
    return pd.DataFrame(rows)


def pairwise_matrix(comparisons: pd.DataFrame, column: str, metrics: Sequence[str], diagonal: float) -> pd.DataFrame:
    """Symmetric metric x metric matrix of `column` from `williams_comparisons` rows."""
    import pandas as pd

    values = {
        frozenset(pair): value
        for *pair, value in zip(comparisons["metric_a"], comparisons["metric_b"], comparisons[column], strict=True)
    }
    matrix = pd.DataFrame(diagonal, index=list(metrics), columns=list(metrics), dtype=float)
    for metric_a, metric_b in itertools.combinations(metrics, 2):
        pair = frozenset((metric_a, metric_b))
        if pair not in values:
            raise DataError(f"no comparison of {metric_a!r} with {metric_b!r}", field=column)
        matrix.loc[metric_a, metric_b] = matrix.loc[metric_b, metric_a] = values[pair]
    matrix.index.name = "metric"
    return matrix


def complete_with_systems(part: pd.DataFrame, columns: Sequence[str]) -> tuple[pd.DataFrame, list[np.ndarray]]:
    """The rows of `part` with every one of `columns` and a system, and those systems as the partial correlation's
    confounder, as `varies_within_confounders` takes them."""
    kept = part.dropna(subset=[*columns, CONFOUNDER])
    return kept, [kept[CONFOUNDER].to_numpy()]


# --- error-category ablation -----------------------------------------------------------------


def category_ablation(
    frame: pd.DataFrame,
    subsets: Sequence[str],
    variant: PartialVariant,
    metrics: Sequence[str] = BASELINE_METRICS,
    flips: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per (subset, metric, Flip_ column): correlation with Factuality minus with the flipped score.

    `flips` defaults to every `Flip_*` column of `frame` (FRANK's `--ablations`).
    """
    import numpy as np
    import pandas as pd

    from factlab.metaeval.partial import varies_within_confounders

    available = flip_columns(frame)
    flips = available if flips is None else list(flips)
    unknown = [flip for flip in flips if flip not in available]
    if unknown:
        raise DataError(f"unknown ablation columns {unknown}; FRANK has {available}", record="frank")
    rows = []
    for subset in subsets:
        part = select_subset(frame, subset)
        for metric in metrics:
            human = partial_pair(part, metric, HUMAN, variant)
            for flip in flips:
                kept, systems = complete_with_systems(part, [metric, flip])
                # A scorer's small seeded sample can leave one flipped rating per system (every summary of a system
                # without, or with, that category's errors): the partial correlation is then undefined, so the row is
                # kept with NaN (the command names it) rather than failing the table.
                defined = varies_within_confounders(kept[flip], systems)
                flipped = partial_pair(kept, metric, flip, variant) if defined else None
                if flipped is None:
                    LOG.warning("ablation of %s on %s: %s is one per system among its summaries: NaN", metric, subset, flip)
                pearson_flipped = flipped.pearson.r if flipped is not None else np.nan
                spearman_flipped = flipped.spearman.r if flipped is not None else np.nan
                rows.append(
                    {
                        "metric": metric,
                        "subset": subset,
                        "category": flip.removeprefix(FLIP_PREFIX),
                        "flip_column": flip,
                        "n": len(kept),
                        "pearson": human.pearson.r,
                        "pearson_flipped": pearson_flipped,
                        "pearson_influence": human.pearson.r - pearson_flipped,
                        "spearman": human.spearman.r,
                        "spearman_flipped": spearman_flipped,
                        "spearman_influence": human.spearman.r - spearman_flipped,
                        "variant": variant,
                        "n_dropped_nan": len(part) - len(kept),
                    }
                )
    return pd.DataFrame(rows)


def undefined_ablation_cells(ablation: pd.DataFrame) -> list[str]:
    """`metric / subset / category` of each ablation row whose flipped rating was constant within every system of
    the metric's summaries (`category_ablation`'s NaN rows)."""
    undefined = ablation[ablation["pearson_flipped"].isna()]
    return [f"{row.metric} / {row.subset} / {row.category}" for row in undefined.itertuples()]


# --- headline numbers ------------------------------------------------------------------------


def headline_metrics(correlations: pd.DataFrame, comparisons: pd.DataFrame) -> dict[str, Any]:
    """Small JSON for `dvc metrics show`: best metrics on all data, every metric's coefficients, Williams counts."""
    everything = correlations[correlations["subset"] == "all"].set_index("metric")
    if everything.empty:
        raise DataError("headline numbers need the all-data correlations (subset 'all')", field="subset")
    best_pearson, best_spearman = everything["pearson"].idxmax(), everything["spearman"].idxmax()
    return {
        "partial_variant": str(everything["variant"].iloc[0]),
        "williams_variant": str(comparisons["variant"].iloc[0]),
        "n_summaries": int(everything["n"].max()),
        "best_pearson_metric": best_pearson,
        "best_pearson": float(everything.loc[best_pearson, "pearson"]),
        "best_spearman_metric": best_spearman,
        "best_spearman": float(everything.loc[best_spearman, "spearman"]),
        "pearson_all": {metric: float(r) for metric, r in everything["pearson"].items()},
        "spearman_all": {metric: float(r) for metric, r in everything["spearman"].items()},
        "dropped_nan_all": {metric: int(n) for metric, n in everything["n_dropped_nan"].items() if n},
        "williams_pairs": len(comparisons),
        "williams_significant_pairs": int((comparisons["p"] < SIGNIFICANCE_LEVEL).sum()),
    }


# --- commands --------------------------------------------------------------------------------


def load_joined(benchmark: str | Path, scores: str | Path) -> pd.DataFrame:
    import pandas as pd

    return join_scores(pd.read_parquet(benchmark), pd.read_parquet(scores))


def write_csv(frame: pd.DataFrame, path: str | Path, index: bool = False) -> None:
    write_text(frame.to_csv(index=index), path)


def run_correlations(args: argparse.Namespace) -> None:
    frame = load_joined(args.benchmark, args.scores)
    correlations = metric_human_correlations(frame, args.subsets, args.variant, args.metrics)
    if "all" in args.subsets:
        settings = BootstrapSettings(args.resamples, args.confidence, args.seed)
        correlations = with_bootstrap_cis(correlations, pearson_bootstrap_cis(frame, settings, args.metrics))
    write_csv(correlations, args.out)
    test = metric_human_correlations(select_split(frame, "test"), args.subsets, args.variant, args.metrics)
    write_csv(test, args.out_test)


def run_williams(args: argparse.Namespace) -> None:
    frame = load_joined(args.benchmark, args.scores)
    comparisons = williams_comparisons(frame, args.variant, args.metrics)
    write_csv(comparisons, args.out)
    write_csv(pairwise_matrix(comparisons, "r23", args.metrics, diagonal=1.0), args.out_matrix, index=True)


def run_ablation(args: argparse.Namespace) -> None:
    frame = load_joined(args.benchmark, args.scores)
    write_csv(category_ablation(frame, args.subsets, args.variant, args.metrics, args.flips), args.out)


def run_summary(args: argparse.Namespace) -> None:
    import pandas as pd

    summary = headline_metrics(pd.read_csv(args.correlations), pd.read_csv(args.williams))
    write_json(summary, args.out)


def _add_inputs(command: argparse.ArgumentParser) -> None:
    command.add_argument("--benchmark", required=True, help="results/data/frank.parquet")
    command.add_argument("--scores", required=True, help="results/data/frank_baseline_scores.parquet")
    command.add_argument(
        "--metrics", nargs="+", default=list(BASELINE_METRICS), choices=BASELINE_METRICS, help="default: all 15, FRANK's order"
    )


def register(commands: Any) -> None:
    correlations = commands.add_parser(
        "frank-correlations", help="FRANK: partial correlations of baseline metrics with Factuality"
    )
    _add_inputs(correlations)
    correlations.add_argument("--subsets", nargs="+", required=True, choices=list(SUBSET_LABELS))
    correlations.add_argument("--variant", required=True, choices=PARTIAL_VARIANTS)
    add_bootstrap_arguments(correlations, "document")
    correlations.add_argument("--out", required=True, help="all FRANK data")
    correlations.add_argument("--out-test", required=True, help="FRANK's test split only")
    correlations.set_defaults(func=run_correlations)

    williams = commands.add_parser("frank-williams", help="FRANK: Williams tests between baseline metrics")
    _add_inputs(williams)
    williams.add_argument("--variant", required=True, choices=WILLIAMS_VARIANTS)
    williams.add_argument("--out", required=True)
    williams.add_argument("--out-matrix", required=True, help="metric-metric partial correlation matrix (csv)")
    williams.set_defaults(func=run_williams)

    ablation = commands.add_parser("frank-ablation", help="FRANK: influence of each error category (Flip_ columns)")
    _add_inputs(ablation)
    ablation.add_argument("--subsets", nargs="+", required=True, choices=list(SUBSET_LABELS))
    ablation.add_argument("--variant", required=True, choices=PARTIAL_VARIANTS)
    ablation.add_argument("--flips", nargs="+", default=None, help="Flip_ columns (default: all of FRANK's)")
    ablation.add_argument("--out", required=True)
    ablation.set_defaults(func=run_ablation)

    summary = commands.add_parser("frank-summary", help="FRANK: headline numbers (metrics.json)")
    summary.add_argument("--correlations", required=True)
    summary.add_argument("--williams", required=True)
    summary.add_argument("--out", required=True)
    summary.set_defaults(func=run_summary)
