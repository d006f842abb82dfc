"""`factlab train aligner-mixture | leakage-check`: the alignment model's training data.

- `aligner-mixture`: training corpora (results/data/<name>.parquet, role "training") + every
  evaluation benchmark (for the leakage filter) -> mixture.parquet and its report.
- `leakage-check`: re-reads the finished mixture against every evaluation benchmark; fails (exit 1,
  no output written) when any pair shares an n-word run with evaluated text.
Benchmark names are the parquet file stems. Training itself: factlab.train.aligner_command.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factlab.commands import settings_from_json, write_report
from factlab.errors import FactlabError
from factlab.io import write_parquet

if TYPE_CHECKING:
    import pandas as pd


def register(commands: Any) -> None:
    mixture = commands.add_parser("aligner-mixture", help="build the aligner's training mixture")
    mixture.add_argument("--training", nargs="+", required=True, help="training corpora parquets")
    mixture.add_argument("--evaluation", nargs="+", required=True, help="every evaluation benchmark parquet (leakage)")
    mixture.add_argument("--settings", required=True, help="JSON object (params.yaml aligner.mixture)")
    mixture.add_argument("--out", required=True, help="mixture.parquet")
    mixture.add_argument("--report", required=True, help="mixture report JSON")
    mixture.set_defaults(func=run_mixture)

    check = commands.add_parser("leakage-check", help="fail if any training pair shares an n-word run with evaluated text")
    check.add_argument("--mixture", required=True)
    check.add_argument("--evaluation", nargs="+", required=True)
    check.add_argument("--ngram", type=int, required=True)
    check.add_argument("--out", required=True, help="leakage report JSON (written only when the check passes)")
    check.set_defaults(func=run_leakage_check)


def read_named(paths: list[str]) -> dict[str, pd.DataFrame]:
    import pandas as pd

    frames = {}
    for path in paths:
        name = Path(path).stem
        if name in frames:
            raise FactlabError(f"benchmark {name!r} given twice")
        frames[name] = pd.read_parquet(path)
    return frames


def run_mixture(args: argparse.Namespace) -> None:
    from factlab.train.mixture import MixtureSettings, build_mixture

    started = time.perf_counter()
    settings = settings_from_json(args.settings, MixtureSettings, "mixture")
    mixture, report = build_mixture(read_named(args.training), read_named(args.evaluation), settings)
    report["seconds"] = round(time.perf_counter() - started, 1)
    write_parquet(mixture, args.out)
    write_report(report, args.report)


def run_leakage_check(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.train.mixture import check_leakage

    report = check_leakage(pd.read_parquet(args.mixture), read_named(args.evaluation), args.ngram)
    write_report(report, args.out)
