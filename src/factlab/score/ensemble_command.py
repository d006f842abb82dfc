"""`factlab score ensemble-fit | ensemble`: the logistic-regression stack of factlab's scorers (`factlab.score.ensemble`).

Score tables are named by their path, `results/score/<benchmark>/<scorer>.parquet`, as everywhere in the workflow.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import add_sample_arguments, max_examples, positive_int, settings_from_json
from factlab.errors import FactlabError
from factlab.score.commands import job_examples, write_job

if TYPE_CHECKING:
    import pandas as pd

LOG = logging.getLogger(__name__)


def register(commands: Any) -> None:
    fit = commands.add_parser("ensemble-fit", help="fit the ensemble's stack that scores one benchmark, on validation data")
    fit.add_argument("--benchmark", required=True, help="the benchmark the stack will score: its texts are kept out of the fit")
    fit.add_argument("--evaluated", required=True, help="results/data/<benchmark>.parquet of that benchmark")
    fit.add_argument("--data", nargs="+", required=True, help="results/data/<benchmark>.parquet of each validation benchmark")
    fit.add_argument("--scores", nargs="+", required=True, help="results/score/<benchmark>/<member>.parquet")
    fit.add_argument("--settings", required=True, help="JSON of score.ensemble")
    fit.add_argument("--out", required=True, help="the model and its validation report (JSON)")
    fit.set_defaults(func=run_fit)

    job = commands.add_parser("ensemble", help="the ensemble's score of every example of a benchmark (one shard)")
    job.add_argument("--benchmark", required=True)
    job.add_argument("--data", required=True, help="results/data/<benchmark>.parquet")
    job.add_argument("--max-examples", type=max_examples, required=True, help="'all' or N: the examples preprocess kept")
    add_sample_arguments(job, "of them that its members scored (the smallest of their samples)")
    job.add_argument("--shard", type=int, required=True)
    job.add_argument("--shards", type=positive_int, required=True)
    job.add_argument("--threads", type=positive_int, required=True)
    job.add_argument("--scores", nargs="+", required=True, help="the members' results/score/<benchmark>/<member>.parquet")
    job.add_argument("--model", required=True, help="the JSON of `factlab score ensemble-fit`")
    job.add_argument("--out", required=True)
    job.add_argument("--report", required=True)
    job.set_defaults(func=run_ensemble)


def scores_by_benchmark(paths: Sequence[str]) -> dict[str, dict[str, pd.DataFrame]]:
    import pandas as pd

    tables: dict[str, dict[str, pd.DataFrame]] = {}
    for path in paths:
        benchmark, scorer = Path(path).parent.name, Path(path).stem
        tables.setdefault(benchmark, {})[scorer] = pd.read_parquet(path)
    return tables


def run_fit(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.data.leakage import EvaluationIndex, evaluation_texts
    from factlab.score.ensemble import EnsembleSettings, fit_data, fit_ensemble

    settings = settings_from_json(args.settings, EnsembleSettings, "score.ensemble")
    data = {Path(path).stem: pd.read_parquet(path) for path in args.data}
    scores = scores_by_benchmark(args.scores)
    unexpected = sorted((set(data) | set(scores)) - set(settings.validation_benchmarks))
    if unexpected or set(data) != set(settings.validation_benchmarks):
        raise FactlabError(
            f"ensemble-fit reads the validation benchmarks {settings.validation_benchmarks} only; "
            f"got data for {sorted(data)} and scores for {sorted(scores)}"
        )
    if args.benchmark in data:
        raise FactlabError(f"ensemble-fit: {args.benchmark} is a validation benchmark; the ensemble never scores its fit data")
    evaluated = pd.read_parquet(args.evaluated)
    index = EvaluationIndex.build(evaluation_texts({args.benchmark: evaluated}), settings.leakage_ngram)
    table, counts = fit_data(settings.members, {name: (data[name], scores.get(name, {})) for name in data}, index)
    model, report = fit_ensemble(table, settings, args.benchmark)
    model.save(args.out, {**counts, **report})
    LOG.info("%s: %s", args.out, json.dumps({**counts, "validation_macro_auc": report["validation_macro_auc"]}, sort_keys=True))


def run_ensemble(args: argparse.Namespace) -> None:
    from factlab.score.ensemble import EnsembleModel, score_examples

    started = time.perf_counter()
    model = EnsembleModel.load(args.model)
    examples, sampled = job_examples(args)
    scores = scores_by_benchmark(args.scores)
    other = sorted(set(scores) - {args.benchmark})
    if other:
        raise FactlabError(f"ensemble on {args.benchmark}: --scores holds tables of other benchmarks {other}")
    table, counts = score_examples(examples, scores.get(args.benchmark, {}), model, args.benchmark)
    write_job(args, "ensemble", table, counts | sampled, time.perf_counter() - started, members=model.members)
