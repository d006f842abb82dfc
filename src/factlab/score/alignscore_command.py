"""`factlab score alignscore`: AlignScore of one shard of a benchmark with the trained aligner (or a hub NLI model),
with the settings the tuning chose on validation data (`tuned_settings`). The job arguments and outputs are every
scorer's (factlab.score.commands)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from factlab.errors import FactlabError
from factlab.score.commands import add_job_arguments, run_pair_job
from factlab.text.chunking import CHUNK_POLICIES

if TYPE_CHECKING:
    from factlab.score.alignscore import AlignScoreSettings


def register(commands: Any) -> None:
    alignscore = commands.add_parser("alignscore", help="AlignScore of every example of a benchmark (one shard)")
    add_job_arguments(alignscore, model=True)
    alignscore.add_argument("--choice", required=True, help="results/score/alignscore_choice.json (tuned on validation)")
    alignscore.add_argument("--chunk-policy", choices=CHUNK_POLICIES, required=True)
    alignscore.set_defaults(func=run_alignscore)


def run_alignscore(args: argparse.Namespace) -> None:
    from factlab.score.alignscore import score_benchmark

    run_pair_job(args, "alignscore", score_benchmark, tuned_settings(args.choice, args.chunk_policy))


def tuned_settings(choice_path: str, chunk_policy: str) -> AlignScoreSettings:
    """AlignScore's settings from the tuning rule's choice (`read_choice`) and the configured chunk policy; a choice
    without `top_chunks` (tuned before the pre-ranker) scores every chunk."""
    from factlab.score.alignscore import AlignScoreSettings
    from factlab.score.tuning import read_choice

    choice = read_choice(choice_path, chunk_policy)
    try:
        return AlignScoreSettings(
            int(choice["words_per_chunk"]),
            chunk_policy,  # type: ignore[arg-type]
            str(choice["aggregation"]),
            str(choice["support_head"]),
            localise=True,
            top_chunks=int(choice.get("top_chunks", 0)),
        )
    except KeyError as error:
        raise FactlabError(f"{choice_path}: no field {error.args[0]!r} (written by factlab score alignscore-tune)") from error
