"""`factlab metaeval summeval-scorers`: factlab's scorers against SummEval's expert consistency, FRANK's protocol.

SummEval (Fabbri et al., 2021): 100 CNN/DM articles x 16 systems, `human_score` = consistency, the mean of 3
experts' 1-5 ratings. Each factlab score table of the `summeval` benchmark becomes a metric column (`factlab
<scorer>`), on the summaries every scorer of `--scores` scored (a scorer of `--sampled-scores`, given a seeded sample
of them by `score.sampled_benchmarks`, on its sample: each row and Williams test says its `n`). FRANK's functions
(factlab.metaeval.analyses.published.frank_command), unchanged, give per subset the partial Pearson and Spearman with consistency,
the system as confounder, with document-bootstrap CIs of the Pearson, and Williams tests between every pair of
scorers. Two subsets:

- `all`: every scored summary;
- `held_out`: the summaries that are not tuning examples (`--tuning`: the validation cuts that chose AlignScore's
  support head and chunk size and every scorer's threshold). SummaC's SummEval cut is 100 SummEval summaries, one of
  each article, in SummaC's tokenisation: a summary is a tuning example when its text, lower-cased with all but
  letters and digits removed, is a tuning output's (the cut's 100 match 104 SummEval summaries: a few systems wrote
  the same summary). Every article was seen in tuning with one of its summaries; no summary's label was.

metrics.json: per subset, the number of summaries and articles, the best full scorer, every scorer's partial Pearson
and each sampled scorer's number of summaries.
"""

from __future__ import annotations

import argparse
import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_bootstrap_arguments
from factlab.errors import DataError, FactlabError
from factlab.io import write_json
from factlab.metaeval.analyses.frank_scorers_command import PREFIX, varying_scorers, with_scorer_columns
from factlab.metaeval.analyses.published.frank_command import (
    CONFOUNDER,
    DOCUMENT,
    HUMAN,
    BootstrapSettings,
    metric_human_correlations,
    pearson_bootstrap_cis,
    williams_comparisons,
    with_bootstrap_cis,
    write_csv,
)
from factlab.metaeval.variants import PARTIAL_VARIANTS, WILLIAMS_VARIANTS

if TYPE_CHECKING:
    import pandas as pd

LOG = logging.getLogger(__name__)
NON_ALPHANUMERIC = re.compile(r"[^0-9a-z]+")
PTB_BRACKETS = re.compile(r"-[lr][rsc]b-")  # the Penn Treebank's escaped brackets
ALL, HELD_OUT = "all", "held_out"
BENCHMARK_COLUMNS = ("example_id", DOCUMENT, CONFOUNDER, "source", "output", HUMAN)
WILLIAMS_COLUMNS = (
    "subset",
    "metric_a",
    "metric_b",
    "n",
    "n_dropped_nan",
    "r12",
    "r13",
    "r23",
    "t",
    "df",
    "p_two_sided",
    "p_frank_one_sided",
    "variant",
    "p",
)


def read_benchmark(path: str) -> pd.DataFrame:
    import pandas as pd

    frame = pd.read_parquet(path)
    missing = [column for column in BENCHMARK_COLUMNS if column not in frame.columns]
    if missing:
        raise DataError("missing column", file=path, record="header", field=missing[0])
    unrated = frame[HUMAN].isna()
    if unrated.any():
        raise DataError("no human score", file=path, record=str(frame.loc[unrated, "example_id"].iloc[0]), field=HUMAN)
    return frame[list(BENCHMARK_COLUMNS)]


def text_key(text: str) -> str:
    """A summary's text with case, spacing, punctuation and tokenisation removed (SummaC's "team 's" is "team's", its
    "-lrb- 3 -rrb-" SummEval's "( 3 )")."""
    return NON_ALPHANUMERIC.sub("", PTB_BRACKETS.sub("", text.lower()))


def tuning_summaries(frame: pd.DataFrame, tuning: Mapping[str, pd.DataFrame]) -> set[str]:
    """The example ids of `frame` whose output is, up to `text_key`, the output of a tuning example."""
    seen = {text_key(str(output)) for data in tuning.values() for output in data["output"]}
    return set(frame.loc[frame["output"].astype(str).map(text_key).isin(seen), "example_id"])


def subset_correlations(
    part: pd.DataFrame, subset: str, scorers: Sequence[str], args: argparse.Namespace
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Partial correlations (with CIs) and Williams comparisons of `scorers` on one subset's summaries."""
    correlations = metric_human_correlations(part, [ALL], args.variant, scorers).assign(subset=subset)
    settings = BootstrapSettings(args.resamples, args.confidence, args.seed)
    correlations = with_bootstrap_cis(correlations, pearson_bootstrap_cis(part, settings, scorers), subset=subset)
    comparisons = williams_comparisons(part, args.williams_variant, scorers)
    comparisons = comparisons.assign(subset=subset).reindex(columns=list(WILLIAMS_COLUMNS))
    return correlations, comparisons


def headline(
    correlations: pd.DataFrame, counts: Mapping[str, Mapping[str, int]], full: Sequence[str], sampled: Sequence[str] = ()
) -> dict[str, Any]:
    """Per subset: its counts, the best of the `full` scorers, every scorer's partial Pearson, the `sampled` ones' n."""
    summary: dict[str, Any] = {}
    for subset, rows in correlations.groupby("subset", sort=False):
        by_metric = rows.set_index("metric")
        best = str(by_metric.loc[list(full), "pearson"].idxmax())
        summary[str(subset)] = {
            **counts[str(subset)],
            "best_scorer": best.removeprefix(PREFIX),
            "best_partial_pearson": float(by_metric.loc[best, "pearson"]),
            "partial_pearson": {metric.removeprefix(PREFIX): float(value) for metric, value in by_metric["pearson"].items()},
            "sampled_scorers_n": {metric.removeprefix(PREFIX): int(by_metric.loc[metric, "n"]) for metric in sampled},
        }
    return summary


def run_summeval_scorers(args: argparse.Namespace) -> None:
    import pandas as pd

    frame = read_benchmark(args.benchmark)
    scores = {Path(path).stem: pd.read_parquet(path) for path in args.scores}
    sampled = {Path(path).stem: pd.read_parquet(path) for path in args.sampled_scores}
    frame, full, sampled_columns = with_scorer_columns(frame, scores, "SummEval", sampled)
    frame = frame.dropna(subset=full)  # every full scorer on the same summaries
    if frame.empty:
        raise FactlabError("no SummEval summary is scored by every factlab scorer")
    tuned = tuning_summaries(frame, {Path(path).stem: pd.read_parquet(path) for path in args.tuning})
    if not tuned:
        LOG.warning("no scored SummEval summary is a tuning example (--tuning: %s): held_out is every summary", args.tuning)
    parts = {ALL: frame, HELD_OUT: frame[~frame["example_id"].isin(tuned)]}
    counts = {name: {"summaries": len(part), "documents": int(part[DOCUMENT].nunique())} for name, part in parts.items()}
    LOG.info("summaries and documents per subset: %s (%d scored summaries are tuning examples)", counts, len(tuned))
    for subset, part in parts.items():
        if part[DOCUMENT].nunique() < 2:  # no document bootstrap, and nothing honest to report
            raise FactlabError(
                f"{args.benchmark}: {part[DOCUMENT].nunique()} scored article(s) in subset {subset} "
                f"({counts[subset]['summaries']} summaries; {len(tuned)} scored summaries are tuning examples)"
            )
    kept = varying_scorers(parts, full, sampled_columns, "SummEval", williams_parts=set(parts))  # Williams per part
    full, sampled_kept = kept.full, kept.sampled
    scorers = [*full, *sampled_kept]
    correlations, comparisons = [], []
    for subset, part in parts.items():
        found = subset_correlations(part, subset, scorers, args)
        correlations.append(found[0])
        comparisons.append(found[1])
    table = pd.concat(correlations, ignore_index=True)
    table["sampled"] = table["metric"].isin(sampled_kept)  # on a seeded sample of the summaries
    write_csv(table, args.out_correlations)
    write_csv(pd.concat(comparisons, ignore_index=True), args.out_williams)
    summary = headline(table, counts, full, sampled_kept)
    write_json({**summary, **kept.left_out}, args.out_metrics)


def register(commands: Any) -> None:
    command = commands.add_parser(
        "summeval-scorers", help="SummEval: factlab's scorers against expert consistency (partial correlations, Williams)"
    )
    command.add_argument("--benchmark", required=True, help="results/data/summeval.parquet")
    command.add_argument("--scores", nargs="+", required=True, help="results/score/summeval/<scorer>.parquet")
    command.add_argument(
        "--sampled-scores", nargs="*", default=[], help="score tables of a seeded sample of the summaries (score.sample)"
    )
    command.add_argument("--tuning", nargs="*", default=[], help="results/data/<validation cut>.parquet: the held-out subset")
    command.add_argument("--variant", required=True, choices=PARTIAL_VARIANTS)
    command.add_argument("--williams-variant", required=True, choices=WILLIAMS_VARIANTS)
    add_bootstrap_arguments(command)
    command.add_argument("--out-correlations", required=True)
    command.add_argument("--out-williams", required=True)
    command.add_argument("--out-metrics", required=True)
    command.set_defaults(func=run_summeval_scorers)
