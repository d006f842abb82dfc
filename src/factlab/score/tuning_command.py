"""`factlab score alignscore-tune`: choose AlignScore's support head, chunk size, aggregation and the chunks scored per
output sentence (`top_chunks`) on validation benchmarks.

Writes the AUC of every grid cell and of every `top_chunks` candidate on every benchmark (CSV) and the choice (JSON)
that `factlab score alignscore --choice` reads.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import max_examples, positive_int, settings_from_json, write_report
from factlab.errors import FactlabError
from factlab.io import write_text
from factlab.runtime import set_threads
from factlab.score.commands import add_model_arguments
from factlab.text.chunking import CHUNK_POLICIES

if TYPE_CHECKING:
    import pandas as pd


def register(commands: Any) -> None:
    tune = commands.add_parser(
        "alignscore-tune", help="choose AlignScore's chunk size, aggregation and chunks per sentence on validation data"
    )
    tune.add_argument("--data", nargs="+", required=True, help="results/data/<benchmark>.parquet of each validation benchmark")
    tune.add_argument("--sentences", nargs="+", required=True, help="<benchmark>/sentences.parquet, same order")
    tune.add_argument("--max-examples", type=max_examples, required=True, help="'all' or N: the examples preprocess kept")
    add_model_arguments(tune)
    tune.add_argument("--settings", required=True, help="JSON of score.alignscore.tuning (without benchmarks)")
    tune.add_argument("--chunk-policy", choices=CHUNK_POLICIES, required=True)
    tune.add_argument("--threads", type=positive_int, required=True)
    tune.add_argument("--out-table", required=True)
    tune.add_argument("--out-choice", required=True)
    tune.set_defaults(func=run_tuning)


def run_tuning(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.models.engine import PairCache, engine_settings
    from factlab.models.loading import load_pair_scorer
    from factlab.preprocess.benchmark import select_examples
    from factlab.score.tuning import TuningSettings, choose, choose_top_chunks, sweep, sweep_top_chunks

    if len(args.data) != len(args.sentences):
        raise FactlabError(f"--data gives {len(args.data)} files but --sentences {len(args.sentences)}")
    settings = settings_from_json(args.settings, TuningSettings, "score.alignscore.tuning")
    set_threads(args.threads)
    started = time.perf_counter()
    benchmarks: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
    for data_path, sentences_path in zip(args.data, args.sentences, strict=True):
        name = Path(data_path).stem
        if Path(sentences_path).parent.name != name:
            raise FactlabError(f"{sentences_path}: not the sentences of {name} (same order as --data)")
        examples = select_examples(pd.read_parquet(data_path), name, args.max_examples)
        benchmarks[name] = (examples, pd.read_parquet(sentences_path))
    scorer = load_pair_scorer(
        args.model, device=args.device, entailment_label=args.entailment_label, runtime=args.runtime, threads=args.threads
    )
    engine = engine_settings(args, scorer.device)
    cache = PairCache()  # the candidates' pairs are the chosen cell's: all of them scored by the sweep
    table = sweep(benchmarks, scorer, settings, args.chunk_policy, engine, cache)
    choice = choose(table)  # before writing: a failed choice leaves no partial artefact
    candidates = sweep_top_chunks(benchmarks, scorer, settings, args.chunk_policy, choice, engine, cache)
    if not candidates.empty:
        table = pd.concat([table, candidates], ignore_index=True)
    choice |= choose_top_chunks(table, choice, settings.max_auc_loss)
    write_text(table.to_csv(index=False), args.out_table)
    write_report(
        {
            **choice,
            "model": scorer.identity,
            "precision": engine.precision,
            "chunk_policy": args.chunk_policy,
            "max_examples_per_benchmark": settings.max_examples_per_benchmark,
            "seed": settings.seed,
            "seconds": round(time.perf_counter() - started, 1),
        },
        args.out_choice,
    )
