"""`factlab train aligner`: the training mixture -> an aligner folder (factlab.models.aligner) plus
training_log.json, metrics.json and curves.csv (per validation point: loss and AUCs; `dvc plots`).
It refuses a mixture without a passed leakage check (factlab.train.mixture_command).
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from factlab.commands import add_device_arguments, settings_from_json
from factlab.errors import FactlabError
from factlab.io import write_json, write_text
from factlab.runtime import set_threads

LOG = logging.getLogger(__name__)
# The curves `dvc plots` draws (dvc.yaml, from DVC_PLOTS in metaeval.smk): written even where no validation point could
# give one (no long premise of both labels, as in the smoke's mixture), empty, so the plot still finds its field.
PLOTTED_CURVES = ("validation_auc", "validation_auc_long")


def register(commands: Any) -> None:
    train = commands.add_parser("aligner", help="train the alignment model on the mixture")
    train.add_argument("--mixture", required=True)
    train.add_argument("--leakage-report", required=True, help="the passed leakage check of this mixture")
    train.add_argument("--settings", required=True, help="JSON object (params.yaml aligner.train)")
    train.add_argument("--threads", type=int, required=True, help="torch CPU threads (0 = torch's default)")
    add_device_arguments(train, precision=True)
    train.add_argument("--out-dir", required=True)
    train.set_defaults(func=run_train)


def run_train(args: argparse.Namespace) -> None:
    import pandas as pd

    from factlab.models.aligner import save_aligner
    from factlab.train.aligner import AlignerTrainSettings, train_aligner

    leakage = json.loads(Path(args.leakage_report).read_text())
    if leakage.get("leaking_pairs") != 0:
        raise FactlabError(f"{args.leakage_report} does not record a passed leakage check")
    set_threads(args.threads)
    settings = settings_from_json(args.settings, AlignerTrainSettings, "aligner training")
    mixture = pd.read_parquet(args.mixture)
    network, tokenizer, log = train_aligner(mixture, settings, device=args.device, precision=args.precision)
    out = Path(args.out_dir)
    save_aligner(network, tokenizer, out, log["settings"])
    write_json(log, out / "training_log.json")
    curves = pd.DataFrame(log["curve"])
    curves = curves.reindex(columns=[*curves.columns, *(name for name in PLOTTED_CURVES if name not in curves.columns)])
    write_text(curves.to_csv(index=False), out / "curves.csv")
    last = log["epochs"][-1]
    metrics = {
        "train_seconds": round(log["total_seconds"], 1),
        "epochs": len(log["epochs"]),
        "train_pairs": log["counts"]["train_pairs"],
        "train_pairs_premise_cut": log["counts"]["train_pairs_premise_cut"],
        "device": log["device"],
        "precision": log["precision"],
        "torch_threads": log["torch_threads"],
        **{key: round(value, 4) for key, value in last.items() if key.startswith("validation_") and isinstance(value, float)},
    }
    write_json(metrics, out / "metrics.json")
    LOG.info("aligner saved to %s: %s", out, metrics)
