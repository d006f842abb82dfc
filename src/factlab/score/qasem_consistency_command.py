"""`factlab score qasem-consistency`: QASemConsistency of one shard of a benchmark with the trained aligner (or a hub NLI model).

The same job arguments and outputs as `summac-zs` (factlab.score.commands); the settings are
params.yaml `score.qasem_consistency` as --settings JSON (decomposition, qa_source, aggregation,
threshold: all required), the chunk size is AlignScore's tuned choice (--choice) and the chunk
policy score.alignscore.chunk_policy, as for `factlab score alignscore`. --qas is the QA table of
the qa_source (parser: results/preprocess/<benchmark>/qas.parquet; gold:
results/data/qasem_consistency_qas.parquet), or `none` with `decomposition: sentences`.
"""

from __future__ import annotations

import argparse
import json
from functools import partial
from pathlib import Path
from typing import Any

from factlab.errors import ConfigError, DataError, FactlabError
from factlab.score.commands import add_job_arguments, run_pair_job
from factlab.text.chunking import CHUNK_POLICIES

PARAM_KEYS = ("decomposition", "qa_source", "aggregation", "threshold", "support_head", "class_prior")
NO_QAS = "none"


def register(commands: Any) -> None:
    command = commands.add_parser("qasem-consistency", help="QASemConsistency of every example of a benchmark (one shard)")
    add_job_arguments(command, model=True)
    command.add_argument("--qas", required=True, help="the QA table of qa_source, or 'none' (decomposition: sentences)")
    command.add_argument("--choice", required=True, help="results/score/alignscore_choice.json: the chunk size")
    command.add_argument("--chunk-policy", choices=CHUNK_POLICIES, required=True)
    command.add_argument("--settings", required=True, help="JSON of score.qasem_consistency (without model keys)")
    command.add_argument(
        "--training-mixture",
        default=NO_QAS,
        help="results/models/aligner_data/mixture.parquet: its labels' aligned share, for class_prior balanced; or 'none'",
    )
    command.set_defaults(func=run_qasem_consistency)


def job_settings(text: str, choice_path: str, chunk_policy: str, mixture_path: str = NO_QAS) -> Any:
    """The scorer's settings: the --settings keys (all of PARAM_KEYS, no other), the tuned chunk size and, for
    class_prior balanced, the aligned share of the training mixture's labels."""
    import pandas as pd

    from factlab.score.alignscore_command import tuned_settings
    from factlab.score.qasem_consistency import QASemConsistencySettings

    values = json.loads(text)
    if not isinstance(values, dict):
        raise FactlabError("--settings must be a JSON object")
    unknown, missing = sorted(set(values) - set(PARAM_KEYS)), [key for key in PARAM_KEYS if key not in values]
    if unknown or missing:
        raise ConfigError(f"score.qasem_consistency settings: unknown {unknown}, missing {missing}; expected {list(PARAM_KEYS)}")
    chunking = tuned_settings(choice_path, chunk_policy)
    share = None
    if values["class_prior"] == "balanced":
        if mixture_path == NO_QAS:
            raise ConfigError("score.qasem_consistency class_prior 'balanced' needs --training-mixture (the trained aligner's)")
        if not Path(mixture_path).is_file():
            raise DataError("training mixture not found", file=mixture_path)
        labels = pd.read_parquet(mixture_path, columns=["split", "label_3way", "label_bin"])
        share = aligned_share(labels, file=mixture_path)
    return QASemConsistencySettings(
        **values, words_per_chunk=chunking.words_per_chunk, chunk_policy=chunking.chunk_policy, aligned_share=share
    )


def aligned_share(mixture: Any, *, file: str = "the training mixture") -> float:
    """The share of aligned binary targets among the mixture's train rows: the prior under which the binary head's
    P(aligned) is a posterior. The targets are the training's (factlab.train.aligner.row_targets, which a test
    holds this to; not imported, so that scoring does not depend on the training's code): `label_bin`, else a
    3-way label read as aligned (0) or not."""
    train = mixture[mixture["split"] == "train"]
    binary = train["label_bin"].astype("Float64")
    binary = binary.where(
        binary.notna(), (train["label_3way"].astype("Float64") == 0).astype("Float64").where(train["label_3way"].notna())
    )
    known = binary.dropna()
    if len(known) == 0:
        raise DataError("no train row with a binary or 3-way label", file=file, field="label_bin")
    return float(known.mean())


def read_qas(path: str, decomposition: str) -> Any:
    """The QA table, or None for `decomposition: sentences` (which needs none)."""
    import pandas as pd

    if decomposition == "sentences":
        return None
    if path == NO_QAS:
        raise ConfigError("score.qasem_consistency decomposition 'qas' needs a QA table: --qas is 'none'")
    if not Path(path).is_file():
        raise DataError("QA table not found", file=path)
    return pd.read_parquet(path)


def run_qasem_consistency(args: argparse.Namespace) -> None:
    from factlab.score.qasem_consistency import score_benchmark

    settings = job_settings(args.settings, args.choice, args.chunk_policy, args.training_mixture)
    qas = read_qas(args.qas, settings.decomposition)
    score = partial(score_benchmark, qas=qas, qas_file=args.qas, benchmark=args.benchmark)
    run_pair_job(args, "qasem_consistency", score, settings)
