"""`factlab train qasem-parser`: QANom train (+ dev) + QA-SRL GS dev -> a parser folder (weights as
safetensors, config, templates, noun verb forms) plus `training_log.json` and `metrics.json` (DVC
metrics). Its evaluation is a metaeval command (`factlab metaeval qasem-parser`).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

from factlab.commands import add_device_arguments, settings_from_json
from factlab.io import write_json
from factlab.runtime import set_threads

LOG = logging.getLogger(__name__)


def register(commands: Any) -> None:
    train = commands.add_parser("qasem-parser", help="train factlab's QASem parser")
    train.add_argument("--qasrl-gs", required=True, help="results/data/qasrl_gs.parquet")
    train.add_argument("--qanom", required=True, help="results/data/qanom.parquet")
    train.add_argument("--out-dir", required=True)
    train.add_argument("--settings", required=True, help="JSON object of training settings (params.yaml qasem.train)")
    train.add_argument("--threads", type=int, required=True, help="torch CPU threads (0 = torch's default)")
    add_device_arguments(train, precision=True)
    train.set_defaults(func=run_train)


def run_train(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.train.qasem import TrainSettings, prepare_training, train_parser

    set_threads(args.threads)
    settings = settings_from_json(args.settings, TrainSettings, "QASem training")
    started = time.perf_counter()
    data = prepare_training(pd.read_parquet(args.qasrl_gs), pd.read_parquet(args.qanom), settings)
    parser, log = train_parser(data, settings, device=args.device, precision=args.precision)
    log["total_seconds_with_data"] = time.perf_counter() - started
    out = Path(args.out_dir)
    parser.save(out, log["settings"])
    write_json(log, out / "training_log.json")
    last = {**log["epochs"][-1], **log["validation_tuned"]}
    metrics = {
        "train_seconds": round(log["total_seconds_with_data"], 1),
        "epochs": len(log["epochs"]),
        "train_sentences": log["counts"]["train_sentences"],
        "rows_per_epoch": log["counts"]["rows_per_epoch"],
        "predicates_per_epoch": log["counts"]["predicates_per_epoch"],
        "templates": log["templates"],
        "template_coverage": round(log["template_coverage"], 4),
        "device": log["device"],
        "precision": log["precision"],
        **{key: round(value, 4) for key, value in last.items() if "validation_" in key and isinstance(value, float)},
        **{key: value for key, value in last.items() if "validation_n_" in key},
        **{
            f"decoding_{kind}_{name}": value
            for kind, tuning in log["decoding_tuning"].items()
            for name, value in tuning["chosen"].items()
        },
    }
    write_json(metrics, out / "metrics.json")
    LOG.info("parser saved to %s: %s", out, metrics)
