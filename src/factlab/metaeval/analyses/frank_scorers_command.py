"""`factlab metaeval frank-scorers`: factlab's scorers against FRANK's human Factuality, FRANK's protocol.

Each factlab score table of the `frank` benchmark becomes a metric column (`factlab <scorer>`)
beside the released baselines it is compared with (FRANK's best simple metric, BERTScore-P against
the article, and FactCC by default). On the summaries every factlab scorer of `--scores` scored (a scorer of
`--sampled-scores`, given a seeded sample of the summaries by `score.sampled_benchmarks`, on its sample: each row and
Williams test says its `n`):
- partial Pearson and Spearman with Factuality, the system as confounder, per subset (all data,
  CNN/DM, XSum; a subset with no scored summary is left out and logged), with document-bootstrap
  CIs on all data — `factlab.metaeval.analyses.published.frank_command`'s functions, unchanged;
- Williams tests between every pair of them: each factlab scorer against each compared metric and against each
  other, and the compared metrics against each other on the same summaries (the figures' full matrix);
- FRANK's error-category ablation (`category_ablation`: correlation with Factuality minus with the
  score that leaves one category's errors out), per subset, for every scorer and compared metric; a cell whose
  flipped rating is constant within each system of a sampled scorer's summaries is NaN and named in `metrics.json`
  (`ablation_cells_undefined`).
`metrics.json` names the best factlab scorer of `--scores` on all data, its partial Pearson, that of
BERTScore-P-Art, and the Williams p of their difference.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments
from factlab.errors import FactlabError
from factlab.io import write_json
from factlab.metaeval.analyses.published.frank_command import (
    BASELINE_METRICS,
    HUMAN,
    SUBSET_LABELS,
    BootstrapSettings,
    category_ablation,
    complete_with_systems,
    load_joined,
    metric_human_correlations,
    pearson_bootstrap_cis,
    select_subset,
    undefined_ablation_cells,
    williams_comparisons,
    with_bootstrap_cis,
    write_csv,
)
from factlab.metaeval.variants import PARTIAL_VARIANTS, WILLIAMS_VARIANTS

if TYPE_CHECKING:
    import pandas as pd

LOG = logging.getLogger(__name__)
PREFIX = "factlab "
REFERENCE = "BertScore P Art"  # FRANK's best simple metric (partial Pearson 0.27 on all data)


def with_scorer_columns(
    frame: pd.DataFrame, scores: Mapping[str, pd.DataFrame], benchmark: str, sampled: Mapping[str, pd.DataFrame] | None = None
) -> tuple[pd.DataFrame, list[str], list[str]]:
    """`frame` restricted to the summaries every scorer of `scores` holds (a summary it left unscored keeps NaN), with a
    `factlab <scorer>` column each; then a column for each scorer of `sampled`, which scored a seeded sample of those
    summaries (`score.sampled_benchmarks`): NaN on the others, so each statistic of it is on its sample (the tables'
    `n`). Returns the frame, the full scorers' columns and the sampled ones'. `benchmark` names the summaries in the
    errors. Shared by the FRANK and SummEval commands."""
    columns = []
    for scorer, table in sorted(scores.items()):
        column = f"{PREFIX}{scorer}"
        unknown = set(table["example_id"]) - set(frame["example_id"])
        if unknown:
            raise FactlabError(f"{scorer}: {len(unknown)} scored examples are not in the benchmark, e.g. {sorted(unknown)[0]!r}")
        scored = table[["example_id", "score"]].rename(columns={"score": column})
        frame = frame.merge(scored, on="example_id", how="inner", validate="one_to_one")
        columns.append(column)
    if frame.empty:
        raise FactlabError(f"no {benchmark} summary is scored by every factlab scorer")
    sampled_columns = []
    for scorer, table in sorted((sampled or {}).items()):
        column = f"{PREFIX}{scorer}"
        if column in columns:
            raise FactlabError(f"{scorer} is given both as a full and as a sampled {benchmark} scorer")
        unknown = set(table["example_id"]) - set(frame["example_id"])
        if unknown:
            raise FactlabError(
                f"{scorer} (sampled): {len(unknown)} scored examples are not among the {benchmark} summaries the full "
                f"scorers scored, e.g. {sorted(unknown)[0]!r}"
            )
        scored = table[["example_id", "score"]].rename(columns={"score": column})
        frame = frame.merge(scored, on="example_id", how="left", validate="one_to_one")
        sampled_columns.append(column)
    return frame, columns, sampled_columns


# residual dimensions a part must leave (`residual_dimensions`): a partial correlation needs 2, a Williams test 3
MIN_DIMENSIONS_PARTIAL, MIN_DIMENSIONS_WILLIAMS = 2, 3


@dataclass(frozen=True)
class KeptScorers:
    """The scorers `varying_scorers` keeps (full and sampled), and those it leaves out, by reason (metrics.json keys)."""

    full: list[str]
    sampled: list[str]
    left_out: dict[str, list[str]]


def varying_scorers(
    parts: Mapping[str, pd.DataFrame],
    full: Sequence[str],
    sampled: Sequence[str],
    benchmark: str,
    williams_parts: Collection[str],
) -> KeptScorers:
    """The `full` and `sampled` scorers whose partial correlations are defined in every part, and their Williams tests
    in `williams_parts`. The partial correlation, the system as confounder, correlates what is left of a score and of
    a rating after their system's means. A scorer is left out of every part (which then compare the same scorers) and
    named when in some part, among the summaries it scored (with a rating and a system):
    - too few summaries for their systems (a small seeded sample: a handful of summaries over several systems): fewer
      than 2 residual dimensions left, where every correlation is ±1, or than 3 in a part with Williams tests, whose
      correlation matrix is then singular: `scorers_left_out_too_few_summaries`;
    - its score is constant within every system (every summary scored 0, or one score per system):
      `constant_scorers_left_out`;
    - the rating is (a small sample of a subset whose ratings are mostly 0): `scorers_left_out_unvarying_rating`.
    An error when every full scorer is left out. The variation test is the partial correlation's own
    (`varies_within_confounders`)."""
    from factlab.metaeval.partial import residual_dimensions, varies_within_confounders

    scorers = [*full, *sampled]
    reasons = {
        "scorers_left_out_too_few_summaries": "leave too few residual dimensions",
        "constant_scorers_left_out": "have one score per system",
        "scorers_left_out_unvarying_rating": "have one rating per system",
    }
    left_out: dict[str, set[str]] = {key: set() for key in reasons}
    for name, part in parts.items():
        needed = MIN_DIMENSIONS_WILLIAMS if name in williams_parts else MIN_DIMENSIONS_PARTIAL
        for scorer in scorers:
            if any(scorer in names for names in left_out.values()):
                continue
            kept, systems = complete_with_systems(part, [scorer, HUMAN])
            if residual_dimensions(systems, len(kept)) < needed:
                reason = "scorers_left_out_too_few_summaries"
            elif not varies_within_confounders(kept[scorer], systems):
                reason = "constant_scorers_left_out"
            elif not varies_within_confounders(kept[HUMAN], systems):
                reason = "scorers_left_out_unvarying_rating"
            else:
                continue
            left_out[reason].add(scorer)
            LOG.warning("%s: its %d %s summaries (subset %s) %s: left out", scorer, len(kept), benchmark, name, reasons[reason])
    dropped = set().union(*left_out.values())
    varying_full = [scorer for scorer in full if scorer not in dropped]
    if not varying_full:
        raise FactlabError(
            f"every {benchmark} scorer that scored every summary is left out (constant within each system of some "
            f"subset, one rating per system there, or too few summaries): {sorted(dropped)}"
        )
    return KeptScorers(
        full=varying_full,
        sampled=[scorer for scorer in sampled if scorer not in dropped],
        left_out={key: [scorer for scorer in scorers if scorer in names] for key, names in left_out.items()},
    )


def headline(
    correlations: pd.DataFrame, comparisons: pd.DataFrame, scorers: Sequence[str], sampled: Sequence[str] = ()
) -> dict[str, Any]:
    """The best of `scorers` (those that scored every summary) on all data against BERTScore-P-Art; every metric's
    partial Pearson, and the `sampled` scorers' sample sizes (their correlations are on those summaries only)."""
    on_all = correlations[correlations["subset"] == "all"].set_index("metric")
    best = on_all.loc[list(scorers), "pearson"].idxmax()
    summary: dict[str, Any] = {
        "n": int(on_all.loc[best, "n"]),
        "best_scorer": best.removeprefix(PREFIX),
        "best_partial_pearson": float(on_all.loc[best, "pearson"]),
        "partial_pearson": {metric: float(value) for metric, value in on_all["pearson"].items()},
        "sampled_scorers_n": {metric.removeprefix(PREFIX): int(on_all.loc[metric, "n"]) for metric in sampled},
    }
    if REFERENCE in on_all.index:
        summary["bertscore_p_art_partial_pearson"] = float(on_all.loc[REFERENCE, "pearson"])
        pair = comparisons[
            ((comparisons["metric_a"] == best) & (comparisons["metric_b"] == REFERENCE))
            | ((comparisons["metric_a"] == REFERENCE) & (comparisons["metric_b"] == best))
        ]
        summary["williams_p_best_vs_bertscore_p_art"] = float(pair["p"].iloc[0])
    return summary


def run_frank_scorers(args: argparse.Namespace) -> None:
    import pandas as pd

    frame = load_joined(args.benchmark, args.released)
    scores = {Path(path).stem: pd.read_parquet(path) for path in args.scores}
    sampled = {Path(path).stem: pd.read_parquet(path) for path in args.sampled_scores}
    frame, full, sampled_columns = with_scorer_columns(frame, scores, "FRANK", sampled)
    subsets = [subset for subset in args.subsets if subset == "all" or (frame["subset"] == subset).any()]
    for subset in sorted(set(args.subsets) - set(subsets)):
        LOG.warning("no scored FRANK summary in subset %s: left out", subset)
    parts = {subset: select_subset(frame, subset) for subset in subsets}
    kept = varying_scorers(parts, full, sampled_columns, "FRANK", williams_parts={"all"})  # Williams: all data only
    full, sampled_kept = kept.full, kept.sampled
    scorers = [*full, *sampled_kept]
    metrics = [*scorers, *args.compare]
    correlations = metric_human_correlations(frame, subsets, args.variant, metrics)
    settings = BootstrapSettings(args.resamples, args.confidence, args.seed)
    correlations = with_bootstrap_cis(correlations, pearson_bootstrap_cis(frame, settings, metrics))
    correlations["sampled"] = correlations["metric"].isin(sampled_kept)  # on a seeded sample of the summaries
    comparisons = williams_comparisons(frame, args.williams_variant, metrics)
    write_csv(correlations, args.out_correlations)
    write_csv(comparisons, args.out_williams)
    ablation = category_ablation(frame, subsets, args.variant, metrics)
    write_csv(ablation, args.out_ablation)
    summary = headline(correlations, comparisons, full, sampled_kept)
    undefined = {"ablation_cells_undefined": undefined_ablation_cells(ablation)}
    write_json({**summary, **kept.left_out, **undefined}, args.out_metrics)


def register(commands: Any) -> None:
    command = commands.add_parser(
        "frank-scorers", help="FRANK: factlab's scorers against Factuality (partial correlations, Williams)"
    )
    command.add_argument("--benchmark", required=True, help="results/data/frank.parquet")
    command.add_argument("--released", required=True, help="results/data/frank_baseline_scores.parquet")
    command.add_argument("--scores", nargs="+", required=True, help="results/score/frank/<scorer>.parquet")
    command.add_argument(
        "--sampled-scores", nargs="*", default=[], help="score tables of a seeded sample of the summaries (score.sample)"
    )
    command.add_argument("--compare", nargs="+", required=True, choices=BASELINE_METRICS, help="released metrics shown beside")
    command.add_argument("--subsets", nargs="+", required=True, choices=list(SUBSET_LABELS))
    command.add_argument("--variant", required=True, choices=PARTIAL_VARIANTS)
    command.add_argument("--williams-variant", required=True, choices=WILLIAMS_VARIANTS)
    add_bootstrap_arguments(command)
    command.add_argument("--out-correlations", required=True)
    command.add_argument("--out-williams", required=True)
    command.add_argument("--out-metrics", required=True)
    command.add_argument("--out-ablation", required=True, help="error-category ablation (FRANK's Flip_ columns)")
    command.set_defaults(func=run_frank_scorers)
