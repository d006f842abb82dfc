"""`factlab train aligner-mixture | leakage-check | aligner`: the alignment model, data to weights.

- `aligner-mixture`: training corpora (results/data/<name>.parquet, role "training") + every
  evaluation benchmark (for the leakage filter) -> mixture.parquet and its report.
- `leakage-check`: re-reads the finished mixture against every evaluation benchmark; fails (exit 1,
  no output written) when any pair shares an n-word run with evaluated text.
- `aligner`: mixture -> an aligner folder (factlab.models.aligner) + training_log.json,
  metrics.json and curves.csv (per validation point: loss and AUCs; `dvc plots`).
Benchmark names are the parquet file stems.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import pandas as pd

from factlab.commands import write_report
from factlab.errors import FactlabError
from factlab.io import write_json, write_parquet, write_text
from factlab.runtime import DEVICES, set_threads

LOG = logging.getLogger(__name__)


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

    train = commands.add_parser("aligner", help="train the alignment model on the mixture")
    train.add_argument("--mixture", required=True)
    train.add_argument("--leakage-report", required=True, help="the passed leakage check of this mixture")
    train.add_argument("--settings", required=True, help="JSON object (params.yaml aligner.train)")
    train.add_argument("--threads", type=int, required=True, help="torch CPU threads (0 = torch's default)")
    train.add_argument("--device", required=True, choices=DEVICES)
    train.add_argument("--out-dir", required=True)
    train.set_defaults(func=run_train)


def read_named(paths: list[str]) -> dict[str, pd.DataFrame]:
    frames = {}
    for path in paths:
        name = Path(path).stem
        if name in frames:
            raise FactlabError(f"benchmark {name!r} given twice")
        frames[name] = pd.read_parquet(path)
    return frames


def json_object(text: str, what: str) -> dict[str, Any]:
    values = json.loads(text)
    if not isinstance(values, dict):
        raise FactlabError(f"{what} must be a JSON object")
    return values


def run_mixture(args: argparse.Namespace) -> None:
    from factlab.train.mixture import MixtureSettings, build_mixture

    started = time.perf_counter()
    settings = MixtureSettings.from_mapping(json_object(args.settings, "--settings"))
    mixture, report = build_mixture(read_named(args.training), read_named(args.evaluation), settings)
    report["seconds"] = round(time.perf_counter() - started, 1)
    write_parquet(mixture, args.out)
    write_report(report, args.report)


def run_leakage_check(args: argparse.Namespace) -> None:
    from factlab.train.mixture import check_leakage

    report = check_leakage(pd.read_parquet(args.mixture), read_named(args.evaluation), args.ngram)
    write_report(report, args.out)


def train_settings(text: str) -> Any:
    from factlab.train.aligner import AlignerTrainSettings

    values = json_object(text, "--settings")
    known = {field.name for field in fields(AlignerTrainSettings)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise FactlabError(f"unknown aligner training settings {unknown}; known: {sorted(known)}")
    return AlignerTrainSettings(**values)


def run_train(args: argparse.Namespace) -> None:
    from factlab.models.aligner import save_aligner
    from factlab.train.aligner import train_aligner

    leakage = json.loads(Path(args.leakage_report).read_text())
    if leakage.get("leaking_pairs") != 0:
        raise FactlabError(f"{args.leakage_report} does not record a passed leakage check")
    set_threads(args.threads)
    settings = train_settings(args.settings)
    mixture = pd.read_parquet(args.mixture)
    network, tokenizer, log = train_aligner(mixture, settings, device=args.device)
    out = Path(args.out_dir)
    save_aligner(network, tokenizer, out, log["settings"])
    write_json(log, out / "training_log.json")
    write_text(pd.DataFrame(log["curve"]).to_csv(index=False), out / "curves.csv")
    last = log["epochs"][-1]
    metrics = {
        "train_seconds": round(log["total_seconds"], 1),
        "epochs": len(log["epochs"]),
        "train_pairs": log["counts"]["train_pairs"],
        "train_pairs_premise_cut": log["counts"]["train_pairs_premise_cut"],
        "device": log["device"],
        "torch_threads": log["torch_threads"],
        **{key: round(value, 4) for key, value in last.items() if key.startswith("validation_") and isinstance(value, float)},
    }
    write_json(metrics, out / "metrics.json")
    LOG.info("aligner saved to %s: %s", out, metrics)
